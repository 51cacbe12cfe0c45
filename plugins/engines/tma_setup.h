// TMA setup latency shared by both TMA engines (the paper's section IV-C, after Luo et al. [12]
// and the TMAU patent [13]): every op pays a common launch latency; TensorMap ops (TMA_LOAD,
// TMA_STORE) also pay the descriptor setup, which non-tensor bulk copies bypass.
#pragma once

#include <cstdint>

#include "simfa/core.h"
#include "simfa/params.h"

namespace simfa::engines {

class TmaSetup {
 public:
  /// Declares launch_latency and tensormap_setup_latency.
  static void describe(Schema& schema);
  explicit TmaSetup(const Params& params);

  Cycle latency(Opcode op) const {
    return op == Opcode::kTmaBulk ? launch_ : launch_ + tensormap_;
  }

 private:
  Cycle launch_;
  Cycle tensormap_;
};

}  // namespace simfa::engines
