#include "analytical/spelling.h"

#include <algorithm>
#include <vector>

namespace simfa::analytical {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // d[i][j]: distance between the first i characters of a and the first j of b, three rows kept.
  const std::size_t n = b.size();
  std::vector<std::size_t> before(n + 1), previous(n + 1), current(n + 1);
  for (std::size_t j = 0; j <= n; ++j) previous[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= n; ++j) {
      const std::size_t substitution = a[i - 1] == b[j - 1] ? 0 : 1;
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + substitution});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        current[j] = std::min(current[j], before[j - 2] + 1);
    }
    std::swap(before, previous);
    std::swap(previous, current);
  }
  return previous[n];
}

std::string_view closest_match(std::string_view word, std::span<const std::string_view> candidates) {
  const std::size_t limit = std::max<std::size_t>(1, word.size() / 3);
  std::string_view best;
  std::size_t best_distance = limit + 1;
  for (std::string_view candidate : candidates) {
    const std::size_t d = edit_distance(word, candidate);
    if (d < best_distance) {
      best = candidate;
      best_distance = d;
    }
  }
  return best;
}

}  // namespace simfa::analytical
