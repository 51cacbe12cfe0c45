// How the analytical model reports bad input: every problem found in one pass, each as
// "where: error: message" (where = "--workload", "--sweep seqlen=..." or the GPU's name), thrown
// together as one simfa::InputError.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace simfa::analytical {

/// Throws simfa::InputError whose what() holds one "where: error: message" line per message.
[[noreturn]] void throw_errors(std::string_view where, const std::vector<std::string>& messages);

inline void throw_if_errors(std::string_view where, const std::vector<std::string>& messages) {
  if (!messages.empty()) throw_errors(where, messages);
}

/// Shortest decimal form that reads back as the same double ("32768", "0.5", "1e+20").
std::string format_number(double value);

}  // namespace simfa::analytical
