#include "pass_through_coalescer.h"

namespace simfa::memory_models {

namespace {
const char* const kRequestsDoc = "requests arriving from the SMs, all sent on to the L2";
}  // namespace

void PassThroughCoalescer::describe(Schema& schema) {
  schema.stat("requests", StatKind::kCounter, "requests", kRequestsDoc);
}

PassThroughCoalescer::PassThroughCoalescer(const BuildContext& context)
    : requests_(context.stats.counter("requests", "requests", kRequestsDoc)) {}

}  // namespace simfa::memory_models
