#include "srrip_replacement.h"

namespace simfa::memory_models {

void SrripReplacement::describe(Schema& schema) {
  // 2 bits: the paper's choice (section 5.1: "2-bit SRRIP ... performs well").
  schema.integer("rrpv_bits")
      .unit("bits")
      .def(2)
      .range(1, 8)
      .doc(
          "M: bits of each way's re-reference prediction value; lines are filled at 2^M - 2 and "
          "evicted at 2^M - 1");
}

SrripReplacement::SrripReplacement(const BuildContext& context)
    : distant_(static_cast<std::uint8_t>((1u << context.params.integer("rrpv_bits")) - 1)) {}

std::uint32_t SrripReplacement::victim(Set set) {
  // The largest RRPV and its first way, in one pass; aging every way by distant_ - largest makes
  // that way's RRPV distant_, as the paper's repeated increment would.
  std::uint32_t first = 0;
  std::uint8_t largest = set.ways[0];
  for (std::uint32_t w = 1; w < set.assoc; ++w) {
    if (set.ways[w] > largest) {
      largest = set.ways[w];
      first = w;
    }
  }
  if (largest < distant_) {
    const auto age = static_cast<std::uint8_t>(distant_ - largest);
    for (std::uint32_t w = 0; w < set.assoc; ++w)
      set.ways[w] = static_cast<std::uint8_t>(set.ways[w] + age);
  }
  return first;
}

}  // namespace simfa::memory_models
