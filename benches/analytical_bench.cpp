// Design points per second of the analytical model (issue target: >= 1e6 per wall second on one
// core): FA3 and GEMM sweeps through SweepGrid, exactly as `simfa analyze --sweep` runs them
// (spec copy, resolve, evaluate per point), and one evaluation alone.
#include <vector>

#include <benchmark/benchmark.h>

#include "analytical/model.h"
#include "analytical/sweep.h"

namespace {

using namespace simfa::analytical;

AnalyticalGpu h800() {
  AnalyticalGpu gpu;
  gpu.sm_count = 132;
  gpu.clock_mhz = 1830;
  gpu.l2_bytes = 50.0 * 1024 * 1024;
  gpu.l2_partitions = 2;
  gpu.dram_bandwidth = 3.35e12;
  gpu.mma_flops_per_cycle_per_sm = 4096;
  return gpu;
}

/// configs/h200.toml's [gpu]: with its shared memory an SM holds two 128x128 or 64x128 GEMM CTAs,
/// so the GEMM model takes its drift path (the escape rate's DRAM load, one exp a wave).
AnalyticalGpu h200() {
  AnalyticalGpu gpu = h800();
  gpu.clock_mhz = 1980;
  gpu.l2_bytes = 60.0 * 1024 * 1024;
  gpu.dram_bandwidth = 4.8e12;
  gpu.smem_per_sm = 228.0 * 1024;
  return gpu;
}

SweepGrid grid(const char* spec, std::vector<const char*> sweeps,
               const AnalyticalGpu& gpu = h800()) {
  const WorkloadSpec base = parse_workload_spec(spec);
  std::vector<SweepAxis> axes;
  for (const char* s : sweeps) axes.push_back(parse_sweep(s, base.kind));
  return SweepGrid(base, gpu, std::move(axes));
}

void run_grid(benchmark::State& state, const SweepGrid& g) {
  g.validate();
  for (auto _ : state) {
    double sink = 0;
    g.for_each([&](const SweepPoint& p) { sink += p.result.dram_bytes() + p.result.time_s; });
    benchmark::DoNotOptimize(sink);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(g.size()));
  state.counters["points"] = static_cast<double>(g.size());
}

// 3 models x 9 sequence lengths x 8 batch sizes x 3 K/V tiles x 2 masks x 5 L2 sizes = 6480.
void BM_Fa3Sweep(benchmark::State& state) {
  run_grid(state, grid("fa3:model=llama3-8b,seqlen=1024",
                       {"model=llama3-8b,llama3-70b,llama3-405b", "batch=1..8:+1", "block_n=64,128,176",
                        "causal=false,true", "l2_size=20MiB..100MiB:+20MiB", "seqlen=512..131072:x2"}));
}
BENCHMARK(BM_Fa3Sweep);

// m, n, k from 512 to 16384 (6 each) x 2 rasters = 432 points, 1 to 130 waves each.
void BM_GemmSweep(benchmark::State& state) {
  run_grid(state, grid("gemm:m=1024,n=1024,k=1024",
                       {"raster=row_major,grouped", "m=512..16384:x2", "n=512..16384:x2", "k=512..16384:x2"}));
}
BENCHMARK(BM_GemmSweep);

// The same shapes on the H200 at 64x128 and 128x128 in 3 stages: three and two CTAs per SM, 1 to
// 83 waves, so every multi-wave point takes the drift (its recurrence over the waves where the
// DRAM's load can move: the slowest path). 2 x 6 x 6 x 6 = 432 points.
void BM_GemmSweepTwoPerSm(benchmark::State& state) {
  const SweepGrid g = grid("gemm:m=1024,n=1024,k=1024,stages=3",
                           {"block_m=64,128", "m=512..16384:x2", "n=512..16384:x2", "k=512..16384:x2"},
                           h200());
  bool several_per_sm = true;
  g.for_each([&](const SweepPoint& p) { several_per_sm &= p.result.gemm.ctas_per_sm >= 2; });
  if (!several_per_sm) {
    state.SkipWithError("a point holds one CTA per SM: the drift is not exercised");
    return;
  }
  run_grid(state, g);
}
BENCHMARK(BM_GemmSweepTwoPerSm);

void BM_Fa3Evaluate(benchmark::State& state) {
  const Workload w = resolve_workload(parse_workload_spec("fa3:model=llama3-70b,seqlen=65536"));
  const AnalyticalGpu gpu = h800();
  for (auto _ : state) benchmark::DoNotOptimize(analyze(gpu, w));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Fa3Evaluate);

}  // namespace

BENCHMARK_MAIN();
