#include "fold_slice_map.h"

namespace simfa::memory_models {

void FoldSliceMap::describe(Schema& schema) {
  // 7: over the access patterns of docs/memory-hierarchy.md §2 (streams, rows 256 B to 1 MiB
  // apart, GEMM operand panels, FA3's K and V) the busiest of 192 slices gets at most 1.31x its
  // share (shift 6: 2.13x, 8: 1.47x, 9: 14x; the paper's xor5: 72x).
  schema.integer("shift").unit("bits").def(7).range(1, 63).doc(
      "distance between the folded copies of the line index: line ^ line >> shift ^ "
      "line >> 2 shift ^ ...");
  // The XOR folds lines 2^shift + 1 apart onto a few slices: l ^ l >> s cancels the +1 of each
  // step (1536 lines 129 apart, two rows of 8256 B a step, reach 89 of 192 slices at shift 7, the
  // busiest 24x its share; validation/h100/misaligned/, docs/calibration.md §44). Adding the
  // copies, times an odd multiplier, has no such stride (tools/slice_battery.py).
  schema.string("combine")
      .def("xor")
      .choices({"xor", "add"})
      .doc(
          "how the shifted copies combine: xor, line ^ line >> shift ^ ...; add, line + m x "
          "(line >> shift + line >> 2 shift + ...), m = multiplier (mod 2^64)");
  schema.integer("multiplier")
      .unit("x")
      .def(7)
      .range(1, 1 << 20)
      .doc("m of combine = add, odd (an even one adds nothing to the low bit)");
}

FoldSliceMap::FoldSliceMap(const BuildContext& context)
    : fold_(static_cast<int>(context.params.integer("shift"))),
      shift_(static_cast<int>(context.params.integer("shift"))),
      add_(context.params.string("combine") == "add"),
      multiplier_(static_cast<std::uint64_t>(context.params.integer("multiplier"))) {
  if (add_ && multiplier_ % 2 == 0)
    context.params.fail("multiplier",
                        "multiplier = " + std::to_string(multiplier_) + " must be odd");
}

std::uint64_t FoldSliceMap::add_fold(std::uint64_t line) const {
  std::uint64_t copies = 0;
  for (std::uint64_t rest = line >> shift_; rest != 0; rest >>= shift_) copies += rest;
  return line + multiplier_ * copies;
}

}  // namespace simfa::memory_models
