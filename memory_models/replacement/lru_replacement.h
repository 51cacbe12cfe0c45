// `replacement.lru`: least recently used, the L2's policy until it became a sub-slot, kept bit for
// bit. Each way's byte is a stamp, the set's word a clock: a hit or a fill stamps the way with the
// clock's next value, the victim is the way with the smallest stamp (the lowest way on a tie).
// When the 8-bit clock runs out the stamps are renumbered to their ranks (1..assoc), which keeps
// their order, so the order is exact however long the run.
#pragma once

#include <cstdint>

#include "simfa/component.h"
#include "simfa/memory.h"

namespace simfa::memory_models {

class LruReplacement final : public ReplacementPolicy {
 public:
  explicit LruReplacement(const BuildContext& context);
  static void describe(Schema& schema);

  void on_hit(Set set, std::uint32_t way) override { set.ways[way] = next_stamp(set); }
  void on_fill(Set set, std::uint32_t way) override { set.ways[way] = next_stamp(set); }
  std::uint32_t victim(Set set) override {
    std::uint32_t victim = 0;
    std::uint32_t oldest = ~std::uint32_t{0};
    for (std::uint32_t w = 0; w < set.assoc; ++w) {
      if (set.ways[w] < oldest) {
        oldest = set.ways[w];
        victim = w;
      }
    }
    return victim;
  }

 private:
  static std::uint8_t next_stamp(Set set);
};

}  // namespace simfa::memory_models
