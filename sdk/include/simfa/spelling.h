// "Did you mean ...?": the edit distance between a misspelled name and the names it may have
// meant, the one rule that picks the closest of them when it is close enough to be a typo, and
// the hint that offers it. Used by the manifest loader, the frontends and the analytical model
// alike; a plugin may use it for its own names. Header-only.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <initializer_list>
#include <string>
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

namespace spelling_detail {
inline std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}
}  // namespace spelling_detail

/// The name to offer for a misspelled `word`, or "" when none is close enough; every "did you
/// mean" of simfa picks it by this one rule: the candidate at the least edit_distance from
/// `word` with letter case ignored ("bubble" offers "BUBBLE"), if that is at most
/// typo_limit(word); ties go to the earlier candidate. A candidate spelled exactly as `word` is
/// never offered (the name exists, and something else is wrong with it), nor an empty one.
/// `candidates` is any range of things that convert to std::string_view.
template <typename Range>
std::string closest_name(std::string_view word, const Range& candidates) {
  const std::string w = spelling_detail::lower(word);
  std::string_view best;
  std::size_t best_distance = typo_limit(word) + 1;
  for (const auto& c : candidates) {
    const std::string_view candidate(c);
    if (candidate.empty() || candidate == word) continue;
    const std::size_t d = edit_distance(w, spelling_detail::lower(candidate));
    if (d < best_distance) {
      best = candidate;
      best_distance = d;
    }
  }
  return std::string(best);
}

inline std::string closest_name(std::string_view word,
                                std::initializer_list<std::string_view> candidates) {
  return closest_name<std::initializer_list<std::string_view>>(word, candidates);
}

/// How a hint writes the name it offers: quoted ('assoc') or as a manifest table ([memory]).
enum class NameForm { kQuoted, kTable };

/// "did you mean 'name'?" (or "did you mean [name]?"): the hint for a name already chosen, for a
/// message that puts it in parentheses of its own.
inline std::string did_you_mean_text(std::string_view name, NameForm form = NameForm::kQuoted) {
  const bool table = form == NameForm::kTable;
  return "did you mean " + std::string(table ? "[" : "'") + std::string(name) +
         (table ? "]" : "'") + "?";
}

/// " (did you mean 'name'?)" for closest_name(word, candidates), or "" when it offers none: the
/// tail of a message about an unknown `word`
/// ("unknown key 'asoc' (did you mean 'assoc'?)").
template <typename Range>
std::string did_you_mean(std::string_view word, const Range& candidates,
                         NameForm form = NameForm::kQuoted) {
  const std::string name = closest_name(word, candidates);
  return name.empty() ? std::string() : " (" + did_you_mean_text(name, form) + ")";
}

inline std::string did_you_mean(std::string_view word,
                                std::initializer_list<std::string_view> candidates,
                                NameForm form = NameForm::kQuoted) {
  return did_you_mean<std::initializer_list<std::string_view>>(word, candidates, form);
}

}  // namespace simfa
