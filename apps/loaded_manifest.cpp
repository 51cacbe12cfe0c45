#include "apps/loaded_manifest.h"

#include <fmt/format.h>

#include <iostream>

#include "kernel/workload_spec.h"
#include "simfa/error.h"

namespace simfa::apps {

using namespace simfa::kernel;

std::vector<Override> parse_overrides(const std::vector<std::string>& sets) {
  std::vector<Override> out;
  for (const auto& s : sets) out.push_back(parse_override(s));
  return out;
}

void load_plugins(PluginHost& host, const std::vector<std::filesystem::path>& dirs) {
  host.load_directories(dirs);
  for (const auto& e : host.errors()) std::cerr << "warning: " << e << "\n";
}

void load(LoadedManifest& out, const std::string& path, const std::vector<std::string>& sets,
          const std::filesystem::path& plugin_dir) {
  ManifestDocument doc = read_manifest(path, parse_overrides(sets));
  load_plugins(out.host, plugin_dir.empty()
                             ? PluginHost::search_path(doc.plugin_path())
                             : PluginHost::search_path(doc.plugin_path(), plugin_dir));
  out.manifest = resolve_manifest(doc, out.host);
}

analytical::AnalyticalGpu analytical_gpu(const Manifest& m) {
  analytical::AnalyticalGpu gpu;
  gpu.sm_count = m.gpu.sm_count;
  gpu.clock_mhz = m.gpu.clock_mhz;
  gpu.l2_bytes = static_cast<double>(m.l2_bytes);
  gpu.l2_partitions = m.l2_partitions;
  gpu.dram_bandwidth = m.dram_bandwidth;
  gpu.l2_bandwidth = m.l2_bandwidth;
  gpu.mma_flops_per_cycle_per_sm = m.mma_flops_per_cycle_per_sm;
  gpu.smem_per_sm = static_cast<double>(m.gpu.smem_per_sm_bytes);
  return gpu;
}

ranking::RankGpu rank_gpu(const Manifest& m) {
  ranking::RankGpu gpu;
  static_cast<analytical::AnalyticalGpu&>(gpu) = analytical_gpu(m);
  gpu.smem_per_sm_bytes = m.gpu.smem_per_sm_bytes;
  gpu.regs_per_sm = m.gpu.regs_per_sm;
  gpu.max_ctas_per_sm = m.gpu.max_ctas_per_sm;
  gpu.max_warpgroups_per_sm = m.gpu.max_warpgroups_per_sm;
  return gpu;
}

double simulate_gemm_config(const LoadedManifest& loaded, const ranking::GemmProblem& p,
                            const ranking::TritonGemmConfig& c) {
  // The row-major raster of the measured kernel: the gemm: generator's default.
  const std::string spec =
      fmt::format("gemm:m={},n={},k={},block_m={},block_n={},block_k={},stages={},warps={}", p.m,
                  p.n, p.k, c.block_m, c.block_n, c.block_k, c.stages, c.warps);
  try {
    ComponentConfig workload = parse_workload_spec(spec, loaded.host);
    RunOptions options;
    options.progress = false;
    Simulation sim(loaded.manifest, workload, loaded.host, options);
    const RunResult result = sim.run();
    if (result.outcome != RunOutcome::kCompleted) return -1.0;
    return static_cast<double>(result.cycles) / loaded.manifest.gpu.clock_mhz;
  } catch (const InputError& e) {
    std::cerr << "rank: not simulated: " << c.name() << ": " << e.what() << "\n";
    return -1.0;
  }
}

StatsRun run_for_stats(const LoadedManifest& loaded, const std::string& workload,
                       RunOptions options) {
  const ComponentConfig config = parse_workload_spec(workload, loaded.host);
  options.progress = false;
  Simulation sim(loaded.manifest, config, loaded.host, options);
  StatsRun run;
  run.result = sim.run();
  run.stats = sim.stats_json(run.result);
  return run;
}

}  // namespace simfa::apps
