// Whole-simulator throughput on fixed reference workloads (DESIGN.md §11, issue 11): simulated
// cycles, issued instructions and line requests per wall second, events per line request, ns per
// line request and the process's peak RSS.
//
//   cmake --preset release && cmake --build --preset release
//   build/release/bin/simulation_bench
//   build/release/bin/simulation_bench --benchmark_filter=Gemm4096H200/   # one: its own peak RSS
//
// peak_rss_mib is the peak of the whole process so far, so it is the run's own only for the first
// benchmark of a process (or with a filter selecting one). tools/speed_table.sh runs the same
// workloads through the simfa binary, one process each, and compares two builds.
#include <sys/resource.h>

#include <algorithm>
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

// A trace run with `defines`, as a workload file.
std::string trace_workload_file(const char* name, const char* trace, const std::string& defines) {
  auto path =
      std::filesystem::temp_directory_path() / (std::string("simfa_bench_") + name + ".toml");
  std::ofstream(path) << "[workload]\nfrontend = \"trace\"\npath = \"" SIMFA_SOURCE_DIR "/" << trace
                      << "\"\ndefines = \"" << defines << "\"\n";
  return path.string();
}

void prepare(Setup& s, const char* manifest, const std::vector<Override>& overrides,
             const std::string& workload) {
  s.host.load_directories({SIMFA_PLUGIN_BUILD_DIR});
  s.manifest = resolve_manifest(
      read_manifest(std::string(SIMFA_SOURCE_DIR "/configs/") + manifest, overrides), s.host);
  s.workload = parse_workload_spec(workload, s.host);
}

double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

void run(benchmark::State& state, const char* manifest, const std::vector<Override>& overrides,
         const std::string& workload) {
  Setup s;
  prepare(s, manifest, overrides, workload);
  double cycles = 0, instructions = 0, requests = 0, events = 0, queue_events = 0;
  for (auto _ : state) {
    Simulation sim(s.manifest, s.workload, s.host, RunOptions{});
    RunResult r = sim.run();
    cycles += static_cast<double>(r.cycles);
    const simfa::SmWork work = sim.work();
    instructions += static_cast<double>(work.instructions);
    requests += static_cast<double>(work.line_requests);
    events += static_cast<double>(r.events);
    queue_events += static_cast<double>(r.queue_events);
  }
  using benchmark::Counter;
  state.counters["sim_cycles_per_s"] = Counter(cycles, Counter::kIsRate);
  state.counters["instructions_per_s"] = Counter(instructions, Counter::kIsRate);
  state.counters["requests_per_s"] = Counter(requests, Counter::kIsRate);
  state.counters["ns_per_request"] =
      Counter(requests, Counter::kIsRate | Counter::kInvert, Counter::kIs1000);
  state.counters["events_per_request"] = events / std::max(requests, 1.0);
  state.counters["queue_events_per_request"] = queue_events / std::max(requests, 1.0);
  state.counters["peak_rss_mib"] = peak_rss_mib();
}

void run(benchmark::State& state, const std::vector<Override>& overrides,
         const std::string& workload) {
  run(state, "h800.toml", overrides, workload);
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

// Issue 11's fixed workloads. FA3 Llama-3 70B at seqlen 4096 on H800 (the paper's configuration,
// examples/workloads/fa3_llama3_70b_4k.toml), with its memory system and with memory.ideal.
void BM_Fa3Llama70bS4096H800(benchmark::State& state) {
  run(state, "h800.toml", {}, SIMFA_SOURCE_DIR "/examples/workloads/fa3_llama3_70b_4k.toml");
}
BENCHMARK(BM_Fa3Llama70bS4096H800)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

void BM_Fa3Llama70bS4096H800Ideal(benchmark::State& state) {
  run(state, "h800.toml", {{"memory.plugin", "memory.ideal"}},
      SIMFA_SOURCE_DIR "/examples/workloads/fa3_llama3_70b_4k.toml");
}
BENCHMARK(BM_Fa3Llama70bS4096H800Ideal)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

// The 4096^3 GEMM generator (docs/workloads.md, `gemm:`) on H200, with and without memory.ideal.
void BM_Gemm4096H200(benchmark::State& state) {
  run(state, "h200.toml", {}, "gemm:m=4096,n=4096,k=4096");
}
BENCHMARK(BM_Gemm4096H200)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

void BM_Gemm4096H200Ideal(benchmark::State& state) {
  run(state, "h200.toml", {{"memory.plugin", "memory.ideal"}}, "gemm:m=4096,n=4096,k=4096");
}
BENCHMARK(BM_Gemm4096H200Ideal)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

// Bulk-copy streams on H200 (examples/microbench/tma_bulk_stream.trace): 256 MiB re-read from a
// 16 MiB source (L2-resident), and 256 MiB read once (DRAM, tma_bulk_dram_16k.toml).
void BM_L2StreamH200(benchmark::State& state) {
  run(state, "h200.toml", {},
      trace_workload_file("l2_stream", "examples/microbench/tma_bulk_stream.trace",
                          "OP=16KiB STAGES=8 TOTAL=256MiB SRC=16MiB"));
}
BENCHMARK(BM_L2StreamH200)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

void BM_DramStreamH200(benchmark::State& state) {
  run(state, "h200.toml", {},
      trace_workload_file("dram_stream", "examples/microbench/tma_bulk_stream.trace",
                          "OP=16KiB STAGES=8 TOTAL=256MiB"));
}
BENCHMARK(BM_DramStreamH200)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
