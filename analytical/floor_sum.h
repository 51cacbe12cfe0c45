// Sums of floors of a linear function in O(log) steps, so the wave model counts the waves every
// KV head touches, and the causal model the K/V tiles every CTA streams, without a loop over
// heads or tiles.
#pragma once

#include <cstdint>
#include <utility>

namespace simfa::analytical {

/// sum_{i=0}^{n-1} floor((a*i + b) / m) for m >= 1. Euclid-like: take the whole parts of a/m and
/// b/m out, then count the remaining lattice points under the line with the axes swapped
/// (a < m then becomes the divisor). Exact while a*n + b fits in 64 bits.
inline std::uint64_t floor_sum(std::uint64_t n, std::uint64_t m, std::uint64_t a, std::uint64_t b) {
  std::uint64_t sum = 0;
  while (n > 0) {
    if (a >= m) {
      sum += n * (n - 1) / 2 * (a / m);
      a %= m;
    }
    if (b >= m) {
      sum += n * (b / m);
      b %= m;
    }
    const std::uint64_t y_max = a * n + b;
    if (y_max < m) break;
    n = y_max / m;
    b = y_max % m;
    std::swap(m, a);
  }
  return sum;
}

}  // namespace simfa::analytical
