#include "lru_replacement.h"

namespace simfa::memory_models {

void LruReplacement::describe(Schema& /*schema*/) {}  // no parameters, no statistics

LruReplacement::LruReplacement(const BuildContext& /*context*/) {}

std::uint8_t LruReplacement::next_stamp(Set set) {
  std::uint64_t& c = *set.word;
  if (c == 0xff) {
    // Renumber: the ways in stamp order (then way order) get 1..assoc.
    std::uint8_t rank[64];
    for (std::uint32_t w = 0; w < set.assoc; ++w) {
      std::uint32_t r = 1;
      for (std::uint32_t v = 0; v < set.assoc; ++v)
        r += set.ways[v] < set.ways[w] || (set.ways[v] == set.ways[w] && v < w);
      rank[w] = static_cast<std::uint8_t>(r);
    }
    for (std::uint32_t w = 0; w < set.assoc; ++w) set.ways[w] = rank[w];
    c = set.assoc;
  }
  return static_cast<std::uint8_t>(++c);
}

}  // namespace simfa::memory_models
