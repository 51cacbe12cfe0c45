// Workload generators (kind "gen"): components that write a workload's input file from their
// parameters, e.g. `gen.fa3` writes the per-warp event log an instrumented FlashAttention-3
// kernel would record, which the `workload.fa3_events` frontend reads back. `simfa gen NAME
// KEY=VALUE,... -o FILE` builds the generator "gen.NAME" and calls write().
#pragma once

#include <ostream>

#include "simfa/component.h"

namespace simfa {

class SIMFA_API WorkloadGenerator : public Component {
 public:
  /// Writes the whole file. Throws simfa::Error when `out` fails.
  virtual void write(std::ostream& out) = 0;
};

}  // namespace simfa
