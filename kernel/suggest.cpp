#include "kernel/suggest.h"

namespace simfa::kernel {

std::string closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  const std::size_t i = closest_index(word, candidates, typo_limit(word));
  return i < candidates.size() ? candidates[i] : std::string();
}

}  // namespace simfa::kernel
