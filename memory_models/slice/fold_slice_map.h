// `slice.fold`: slice = (line ^ line >> s ^ line >> 2s ^ ...) mod N (or, combine = add, line + m x
// (line >> s + line >> 2s + ...) mod N), every bit of the line index
// folded onto the low ones. The paper's `slice.xor` folds bits 5 and up once, which spreads
// FA3's 2048 B rows but leaves rows 8 KiB or more apart (a GEMM operand's K loop, K >= 4096) on
// a fraction of the slices: 132 SMs' 128-row panels in flight reach 72 of 192 slices at a 64 KiB
// pitch, 18 at 1 MiB. The H200 streams such rows at the same bandwidth at every pitch from 256 B
// to 1 MiB (validation/h200/dram_stride.csv), so its slice hash reaches every slice
// (docs/memory-hierarchy.md §2).
#pragma once

#include <cstdint>

#include "simfa/component.h"
#include "simfa/memory.h"
#include "simfa/xor_fold.h"

namespace simfa::memory_models {

class FoldSliceMap final : public SliceMap {
 public:
  explicit FoldSliceMap(const BuildContext& context);
  static void describe(Schema& schema);

  std::uint32_t slice_of(std::uint64_t line, std::uint32_t slices) const override {
    return static_cast<std::uint32_t>((add_ ? add_fold(line) : fold_(line)) % slices);
  }

 private:
  std::uint64_t add_fold(std::uint64_t line) const;

  XorFold fold_;
  int shift_;
  bool add_;
  std::uint64_t multiplier_;
};

}  // namespace simfa::memory_models
