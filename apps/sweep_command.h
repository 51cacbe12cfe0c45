// `simfa sweep MANIFEST --workload W [--workload W2 ...] [--vary KEY=V1,V2 ...] [--set ...]
// [--jobs N] [--shard I/N] [--resume] [--timeout S] --csv FILE` (docs/sweeps.md): the cross
// product of the axes through the simulator on local threads, one CSV row per point in grid
// order, a progress bar on a terminal.
#pragma once

#include <string>
#include <vector>

namespace simfa::apps {

struct SweepRequest {
  std::string manifest;
  std::vector<std::string> workloads;  ///< several: an axis of its own, the first
  std::vector<std::string> sets;       ///< --set, the same for every point
  std::vector<std::string> varies;     ///< --vary KEY=V1,V2,...
  unsigned jobs = 0;                   ///< threads; 0: one per core
  std::string shard;                   ///< "I/N"; empty: the whole grid
  bool resume = false;                 ///< keep the rows csv_path holds, run the others
  double timeout_seconds = 0;          ///< per point; 0: none
  std::string csv_path;
};

/// Runs the sweep. Returns 0 when every point of the sweep (of the shard) completed, 1 when a
/// point failed (its row holds the error; the others ran) or on bad input, after printing the
/// problem to stderr. Throws simfa::InputError or kernel::ManifestError on bad input found
/// before anything ran (an unknown key fails every point: nothing to sweep).
int run_sweep_command(const SweepRequest& request);

}  // namespace simfa::apps
