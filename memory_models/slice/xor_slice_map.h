// `slice.xor`: slice = (line ^ (line >> 5)) mod N, the paper's XOR hash (section VI-D). Folding
// bits 5 and up of the line index onto the low bits spreads power-of-two strides (FA3's 2048 B =
// 16 lines) over every slice instead of the few a plain modulo reaches.
#pragma once

#include <cstdint>

#include "simfa/component.h"
#include "simfa/memory.h"

namespace simfa::memory_models {

class XorSliceMap final : public SliceMap {
 public:
  explicit XorSliceMap(const BuildContext& context);
  static void describe(Schema& schema);

  std::uint32_t slice_of(std::uint64_t line, std::uint32_t slices) const override {
    return static_cast<std::uint32_t>((line ^ (line >> 5)) % slices);
  }
};

}  // namespace simfa::memory_models
