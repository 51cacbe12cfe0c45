// SM groups written as their sizes, "16,16,18" (SMs 0-15, 16-31, 32-49): the GPCs the L2
// request coalescer merges within and the L2 places near its partitions. Header-only, beside
// line_table.h, for the l2 and coalescer plugins.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "simfa/params.h"

namespace simfa::memory_models {

/// The group of each SM of one period of the sizes in parameter `key` ("16,16,18": 16 x 0,
/// 16 x 1, 18 x 2); empty when the parameter is. A malformed list fails the parameter.
inline std::vector<std::uint32_t> sm_group_period(const Params& params, const std::string& key) {
  const std::string text = params.string(key);
  std::vector<std::uint32_t> period;
  if (text.empty()) return period;
  std::uint32_t group = 0;
  for (std::size_t at = 0; at <= text.size(); ++group) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, comma - at);
    std::size_t used = 0;
    long size = 0;
    try {
      size = std::stol(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || size < 1 || size > 1024)
      params.fail(key, "'" + item + "' is not a group size (an integer from 1 to 1024)");
    period.insert(period.end(), static_cast<std::size_t>(size), group);
    at = comma + 1;
  }
  return period;
}

}  // namespace simfa::memory_models
