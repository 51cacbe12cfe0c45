// "Did you mean ...?" for workload keys, sweep parameters and choice values of the analytical
// model: the closest candidate by edit distance, when it is close enough to be a typo.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

#include "simfa/spelling.h"

namespace simfa::analytical {

/// The candidate closest to `word`, or "" when none lies within a third of the word's length (at
/// least 1). Ties go to the earlier candidate.
std::string_view closest_match(std::string_view word, std::span<const std::string_view> candidates);

}  // namespace simfa::analytical
