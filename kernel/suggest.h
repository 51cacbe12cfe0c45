// "Did you mean ...?" for misspelled manifest keys, table names, plugin names and workload
// frontends: the closest candidate by the sdk's edit distance, when it is close enough to be a
// typo.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "simfa/spelling.h"

namespace simfa::kernel {

/// The candidate closest to `word`, or "" when none is within a third of the word's length
/// (at least 1). Ties go to the earlier candidate.
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace simfa::kernel
