// TMA setup latency: launch (all ops) + TensorMap descriptor setup (TensorMap ops only).
#include "tma_setup.h"

namespace simfa::engines {

void TmaSetup::describe(Schema& schema) {
  // 40 + 130 = the ~170 cycles by which Hopper TMA accesses trail plain loads (Luo et al. [12]),
  // split as in the paper's section IV-C.
  schema.integer("launch_latency")
      .unit("SM cycles")
      .def(40)
      .range(1, 1e6)
      .doc("common TMA launch latency charged to every op (paper IV-C); >= 1 so a completion "
           "never lands in the issuing cycle");
  schema.integer("tensormap_setup_latency")
      .unit("SM cycles")
      .def(130)
      .range(0, 1e6)
      .doc("TensorMap descriptor setup charged to TMA_LOAD / TMA_STORE only; TMA_BULK bypasses "
           "it (paper IV-C)");
}

TmaSetup::TmaSetup(const Params& params)
    : launch_(static_cast<Cycle>(params.integer("launch_latency"))),
      tensormap_(static_cast<Cycle>(params.integer("tensormap_setup_latency"))) {}

}  // namespace simfa::engines
