#include "fold_slice_map.h"

namespace simfa::memory_models {

void FoldSliceMap::describe(Schema& schema) {
  // 7: over the access patterns of docs/memory-hierarchy.md §2 (streams, rows 256 B to 1 MiB
  // apart, GEMM operand panels, FA3's K and V) the busiest of 192 slices gets at most 1.31x its
  // share (shift 6: 2.13x, 8: 1.47x, 9: 14x; the paper's xor5: 72x).
  schema.integer("shift").unit("bits").def(7).range(1, 63).doc(
      "distance between the folded copies of the line index: line ^ line >> shift ^ "
      "line >> 2 shift ^ ...");
}

FoldSliceMap::FoldSliceMap(const BuildContext& context)
    : fold_(static_cast<int>(context.params.integer("shift"))) {}

}  // namespace simfa::memory_models
