// `simfa ablate`: the base manifest and each ablation (a manifest that `extends` it) on one
// workload, as one table.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernel/simulation.h"

namespace simfa::kernel {

struct AblationRow {
  std::string manifest;  ///< file name as given
  RunOutcome outcome = RunOutcome::kCompleted;
  Cycle cycles = 0;
  bool has_l2 = false;
  double l2_hit_rate = 0;  ///< memory.l2.hit_rate, when the memory system has an L2
  std::uint64_t dram_bytes = 0;
};

/// The ablation manifests beside `base`: `<dir of base>/ablations/*.toml`, sorted; only those
/// whose file stem is in `only` when it is non-empty (an unknown name is an InputError).
std::vector<std::string> find_ablations(const std::string& base, const std::vector<std::string>& only);

/// Runs one manifest on the workload (plugins from the manifest's search path).
AblationRow run_for_ablation(const std::string& manifest, const std::string& workload);

/// The table: manifest, cycles, change against the first row (the base), L2 hit rate, DRAM bytes.
std::string format_ablation_table(const std::vector<AblationRow>& rows);

}  // namespace simfa::kernel
