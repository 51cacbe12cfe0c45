#include "analytical/spelling.h"

namespace simfa::analytical {

std::string_view closest_match(std::string_view word, std::span<const std::string_view> candidates) {
  // A third of the length rounded down (the kernel's manifest keys round up): "kv_head" may be
  // "kv_heads", a four-letter word tolerates one edit.
  const std::size_t limit = std::max<std::size_t>(1, word.size() / 3);
  const std::size_t i = closest_index(word, candidates, limit);
  return i < candidates.size() ? candidates[i] : std::string_view();
}

}  // namespace simfa::analytical
