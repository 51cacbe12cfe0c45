// Shared by the cross-checks of the cycle-level simulator against the tiling and against the
// analytical model (docs/crosscheck.md): one simulated launch in process, its memory totals,
// and the analytical model evaluated on the same manifest's [gpu] numbers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analytical/model.h"
#include "kernel/manifest.h"

namespace simfa::crosscheck {

/// The stats contract's memory totals of one run (docs/stats.md), and what the run cost.
struct SimTotals {
  std::uint64_t llc_read_bytes = 0;
  std::uint64_t llc_write_bytes = 0;
  std::uint64_t dram_read_bytes = 0;
  std::uint64_t dram_write_bytes = 0;
  std::uint64_t cycles = 0;
  std::uint64_t ctas = 0;
  bool completed = false;
  double wall_seconds = 0;
};

/// `sets` plus memory.coalescer.plugin = coalescer.none: every TMA line request reaches the L2.
std::vector<kernel::Override> no_coalescer(std::vector<kernel::Override> sets = {});

/// Simulates `workload` (an inline spec, "gemm:m=512,...") on configs/h800.toml with `sets`
/// (as `--set`). Plugins come from the build tree. Runs are deterministic, so each (sets,
/// workload) is simulated once per process and remembered. Throws on bad input.
SimTotals simulate(const std::vector<kernel::Override>& sets, const std::string& workload);

/// The analytical model's GPU from the resolved manifest's [gpu] table, as `simfa analyze` fills it.
analytical::AnalyticalGpu analytical_gpu(const std::vector<kernel::Override>& sets);
/// `simfa analyze` on the same manifest: the spec must use keys both models know.
analytical::AnalyticalResult analyze(const std::vector<kernel::Override>& sets, const std::string& workload);

}  // namespace simfa::crosscheck
