// `replacement.srrip`: Static Re-Reference Interval Prediction, hit-priority variant (Jaleel,
// Theobald, Steely and Emer, "High Performance Cache Replacement Using Re-Reference Interval
// Prediction (RRIP)", ISCA 2010, section 3.2 and figure 5).
//
// Each way holds an M-bit re-reference prediction value (RRPV, in the way's byte): 0 predicts a
// near-immediate re-reference, 2^M - 1 a distant one.
//   fill:   RRPV = 2^M - 2, a "long" interval: a new line must be re-referenced before it
//           outlives the lines already proven useful
//   hit:    RRPV = 0 (SRRIP-HP)
//   victim: the first way (from way 0) whose RRPV is 2^M - 1; when there is none, every RRPV is
//           increased until one is (the paper's loop, done at once by adding the difference)
// A line used once and never again is evicted after at most 2^M - 1 misses to its set, before
// the lines that hit; so a one-pass scan larger than the cache does not flush a re-used working
// set as LRU does (the paper's scan resistance). With M = 1 it is NRU (the paper's section 3.1);
// M = 2 is the width the paper recommends.
#pragma once

#include <cstdint>

#include "simfa/component.h"
#include "simfa/memory.h"

namespace simfa::memory_models {

class SrripReplacement final : public ReplacementPolicy {
 public:
  explicit SrripReplacement(const BuildContext& context);
  static void describe(Schema& schema);

  void on_hit(Set set, std::uint32_t way) override { set.ways[way] = 0; }
  void on_fill(Set set, std::uint32_t way) override { set.ways[way] = distant_ - 1; }
  std::uint32_t victim(Set set) override;

 private:
  std::uint8_t distant_;  ///< 2^M - 1
};

}  // namespace simfa::memory_models
