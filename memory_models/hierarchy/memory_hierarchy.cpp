#include "memory_hierarchy.h"

namespace simfa::memory_models {

namespace {
const char* const kBurstsDoc =
    "take an engine's lines booked ahead as bursts and send each into the coalescer at its "
    "cycle, one event a cycle for all SMs (docs/performance.md §10); the lines of one cycle go "
    "in booking order rather than in the order of the engines' step events. false: line by line";
}  // namespace

void MemoryHierarchy::describe(Schema& schema) {
  schema.slot("coalescer", "coalescer", "merges identical line requests of nearby SMs");
  schema.slot("l2", "l2", "the last-level cache (its own slice_map sub-slot picks the slice)");
  schema.slot("dram", "dram", "main memory");
  schema.boolean("bursts").def(false).doc(kBurstsDoc);
}

MemoryHierarchy::MemoryHierarchy(const BuildContext& context)
    : coalescer_(slot_as<Coalescer>(context, "coalescer")),
      l2_(slot_as<L2Cache>(context, "l2")),
      dram_(slot_as<DramBackend>(context, "dram")) {
  l2_.connect(slot_as<SliceMap>(context, "l2.slice_map"), dram_);
  coalescer_.connect(l2_);
  if (context.params.boolean("bursts")) bursts_.emplace(context.events, coalescer_);
}

}  // namespace simfa::memory_models
