// Integer arithmetic the models share: rounded-up division and a 128-bit integer for products
// that overflow 64 bits. Header-only.
#pragma once

#include <cstdint>

namespace simfa {

/// ceil(a / b) for a >= 0, b >= 1, computed as (a + b - 1) / b (so a + b - 1 must fit).
constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

/// Products of times and frequencies, and multiply-high division, overflow 64 bits; GCC's and
/// Clang's 128-bit integer holds them (__extension__ keeps -Wpedantic quiet about the
/// non-standard type).
__extension__ typedef unsigned __int128 Uint128;

}  // namespace simfa
