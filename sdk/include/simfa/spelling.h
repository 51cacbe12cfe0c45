// "Did you mean ...?": the edit distance between a misspelled name and the names it may have
// meant, and the closest of them when it is close enough to be a typo. Used by the manifest
// loader, the frontends and the analytical model alike; a plugin may use it for its own names.
// Header-only.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string_view>
#include <vector>

namespace simfa {

/// Optimal-string-alignment distance: insertions, deletions, substitutions and transpositions
/// of adjacent characters each cost 1 ("asoc" -> "assoc" is 1, "memroy" -> "memory" is 1).
inline std::size_t edit_distance(std::string_view a, std::string_view b) {
  // d[i][j]: the distance between the first i characters of a and the first j of b. Three
  // rolling rows: the transposition case looks two rows back.
  const std::size_t n = b.size();
  std::vector<std::size_t> before(n + 1), previous(n + 1), current(n + 1);
  for (std::size_t j = 0; j <= n; ++j) previous[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= n; ++j) {
      const std::size_t substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        current[j] = std::min(current[j], before[j - 2] + 1);
    }
    std::swap(before, previous);
    std::swap(previous, current);
  }
  return previous[n];
}

/// The most edits a typo of `word` may have: a third of its length, rounded up, at least 1.
/// Short words tolerate one typo, long ones a few, and unrelated names of similar length ("sm"
/// for "l2") are not offered.
constexpr std::size_t typo_limit(std::string_view word) {
  return std::max<std::size_t>(1, (word.size() + 2) / 3);
}

/// The index of the candidate closest to `word` within `limit` edits, or `candidates.size()`
/// when there is none. Ties go to the earlier candidate. `candidates` is any sized range of
/// things that convert to std::string_view.
template <typename Range>
std::size_t closest_index(std::string_view word, const Range& candidates, std::size_t limit) {
  std::size_t best = std::size(candidates);
  std::size_t best_distance = limit + 1;
  std::size_t i = 0;
  for (const auto& candidate : candidates) {
    const std::size_t d = edit_distance(word, std::string_view(candidate));
    if (d < best_distance) {
      best = i;
      best_distance = d;
    }
    ++i;
  }
  return best;
}

}  // namespace simfa
