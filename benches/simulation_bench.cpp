// Whole-simulator throughput on fixed reference workloads (DESIGN.md §11): simulated cycles,
// issued instructions and L2-bound memory requests per wall second.
//
//   cmake --preset release && cmake --build --preset release
//   build/release/bin/simulation_bench
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "kernel/manifest.h"
#include "kernel/plugin_host.h"
#include "kernel/simulation.h"
#include "kernel/workload_spec.h"

namespace {

using namespace simfa::kernel;

struct Setup {
  PluginHost host;
  Manifest manifest;
  ComponentConfig workload;
};

// A trace GEMM (examples/traces/gemm_grid.trace) resized by `defines` to fill all 132 SMs.
std::string gemm_workload_file(const std::string& defines) {
  auto path = std::filesystem::temp_directory_path() / "simfa_bench_gemm.toml";
  std::ofstream(path) << "[workload]\nfrontend = \"trace\"\npath = \"" SIMFA_SOURCE_DIR
                         "/examples/traces/gemm_grid.trace\"\ndefines = \""
                      << defines << "\"\n";
  return path.string();
}

void prepare(Setup& s, const std::vector<Override>& overrides, const std::string& workload) {
  s.host.load_directories({SIMFA_PLUGIN_BUILD_DIR});
  s.manifest = resolve_manifest(read_manifest(SIMFA_SOURCE_DIR "/configs/h800.toml", overrides), s.host);
  s.workload = parse_workload_spec(workload, s.host);
}

void run(benchmark::State& state, const std::vector<Override>& overrides, const std::string& workload) {
  Setup s;
  prepare(s, overrides, workload);
  double cycles = 0, instructions = 0, requests = 0;
  for (auto _ : state) {
    Simulation sim(s.manifest, s.workload, s.host, RunOptions{});
    RunResult r = sim.run();
    cycles += static_cast<double>(r.cycles);
    instructions += static_cast<double>(sim.stats().sum_indexed("sm", "issued_instructions"));
    requests += static_cast<double>(sim.stats().sum_indexed("sm", "tma.lines"));
  }
  using benchmark::Counter;
  state.counters["sim_cycles_per_s"] = Counter(cycles, Counter::kIsRate);
  state.counters["instructions_per_s"] = Counter(instructions, Counter::kIsRate);
  state.counters["requests_per_s"] = Counter(requests, Counter::kIsRate);
  state.counters["ns_per_request"] =
      Counter(requests, Counter::kIsRate | Counter::kInvert, Counter::kIs1000);
}

// Issue 3's reference: a 4096^3 GEMM (1024 CTAs) on 132 SMs with memory.ideal.
void BM_GemmIdealMemory(benchmark::State& state) {
  run(state, {{"memory.plugin", "memory.ideal"}}, gemm_workload_file("M=4096 N=4096 K=4096"));
}
BENCHMARK(BM_GemmIdealMemory)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same GEMM through the configured memory hierarchy (configs/h800.toml).
void BM_GemmH800Hierarchy(benchmark::State& state) {
  run(state, {}, gemm_workload_file("M=4096 N=4096 K=4096"));
}
BENCHMARK(BM_GemmH800Hierarchy)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
