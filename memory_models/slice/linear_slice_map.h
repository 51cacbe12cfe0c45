// `slice.linear`: slice = line mod N, the low bits of the line index. The paper's first
// allocation (section VI-D): strided streams (FA3's 2048 B rows) pile onto a few slices.
#pragma once

#include <cstdint>

#include "simfa/component.h"
#include "simfa/memory.h"

namespace simfa::memory_models {

class LinearSliceMap final : public SliceMap {
 public:
  explicit LinearSliceMap(const BuildContext& context);
  static void describe(Schema& schema);

  std::uint32_t slice_of(std::uint64_t line, std::uint32_t slices) const override {
    return static_cast<std::uint32_t>(line % slices);
  }
};

}  // namespace simfa::memory_models
