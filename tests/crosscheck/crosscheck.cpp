#include "crosscheck.h"

#include <map>
#include <memory>

#include "apps/loaded_manifest.h"
#include "kernel/plugin_host.h"
#include "kernel/simulation.h"
#include "kernel/workload_spec.h"

namespace simfa::crosscheck {

namespace {

kernel::PluginHost& host() {
  static const std::unique_ptr<kernel::PluginHost> instance = [] {
    auto h = std::make_unique<kernel::PluginHost>();
    h->load_directories({SIMFA_PLUGIN_BUILD_DIR});
    return h;
  }();
  return *instance;
}

kernel::Manifest manifest(const std::vector<kernel::Override>& sets) {
  return kernel::resolve_manifest(kernel::read_manifest(SIMFA_SOURCE_DIR "/configs/h800.toml", sets), host());
}

}  // namespace

std::vector<kernel::Override> no_coalescer(std::vector<kernel::Override> sets) {
  sets.push_back({"memory.coalescer.plugin", "coalescer.none"});
  return sets;
}

SimTotals simulate(const std::vector<kernel::Override>& sets, const std::string& workload) {
  static std::map<std::string, SimTotals> done;
  std::string key = workload;
  for (const kernel::Override& o : sets) key += " --set " + o.key + "=" + o.value;
  if (auto it = done.find(key); it != done.end()) return it->second;
  const kernel::Manifest m = manifest(sets);
  const kernel::ComponentConfig w = kernel::parse_workload_spec(workload, host());
  kernel::Simulation sim(m, w, host(), kernel::RunOptions{});
  const kernel::RunResult r = sim.run();
  const MemoryTraffic bytes = sim.traffic();
  SimTotals t;
  t.llc_read_bytes = bytes.llc.read;
  t.llc_write_bytes = bytes.llc.write;
  t.dram_read_bytes = bytes.dram.read;
  t.dram_write_bytes = bytes.dram.write;
  t.cycles = r.cycles;
  t.ctas = r.ctas;
  t.completed = r.outcome == kernel::RunOutcome::kCompleted;
  t.wall_seconds = r.wall_seconds;
  done.emplace(std::move(key), t);
  return t;
}

analytical::AnalyticalGpu analytical_gpu(const std::vector<kernel::Override>& sets) {
  return apps::analytical_gpu(manifest(sets));
}

analytical::AnalyticalResult analyze(const std::vector<kernel::Override>& sets, const std::string& workload) {
  const analytical::AnalyticalGpu gpu = analytical_gpu(sets);
  analytical::validate(gpu, "gpu");
  return analytical::analyze(gpu, analytical::resolve_workload(analytical::parse_workload_spec(workload)));
}

}  // namespace simfa::crosscheck
