#include "pass_through_coalescer.h"

namespace simfa::memory_models {

void PassThroughCoalescer::describe(Schema& schema) {
  schema.stat("requests", StatKind::kCounter, "requests",
              "requests arriving from the SMs, all sent on to the L2");
}

PassThroughCoalescer::PassThroughCoalescer(const BuildContext& context)
    : requests_(context.stats.counter("requests")) {}

}  // namespace simfa::memory_models
