#include "memory_hierarchy.h"

namespace simfa::memory_models {

namespace {
// The stats contract's memory totals (docs/stats.md), as formulas over the levels' counters.
struct Total {
  const char* name;
  const char* source;
  const char* doc;
};
constexpr Total kTotals[] = {
    {"llc_read_bytes", "l2.llc_read_bytes", "bytes of read requests arriving at the L2"},
    {"llc_write_bytes", "l2.llc_write_bytes", "bytes of write requests arriving at the L2"},
    {"dram_read_bytes", "dram.dram_read_bytes", "bytes read from DRAM"},
    {"dram_write_bytes", "dram.dram_write_bytes", "bytes written to DRAM"},
};
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
  for (const Total& t : kTotals) schema.stat(t.name, StatKind::kFormula, "bytes", t.doc);
}

MemoryHierarchy::MemoryHierarchy(const BuildContext& context)
    : coalescer_(slot_as<Coalescer>(context, "coalescer")), l2_(slot_as<L2Cache>(context, "l2")) {
  l2_.connect(slot_as<SliceMap>(context, "l2.slice_map"), slot_as<DramBackend>(context, "dram"));
  coalescer_.connect(l2_);
  if (context.params.boolean("bursts")) bursts_.emplace(context.events, coalescer_);
  for (const Total& t : kTotals) context.stats.formula(t.name, Formula{{t.source}, {}, 1.0});
}

}  // namespace simfa::memory_models
