// Integer arithmetic the models share: rounded-up division and rounding up to a multiple, an XOR
// fold for address hashes, and a 128-bit integer with the rounded-up division of a product that
// overflows 64 bits. Header-only.
#pragma once

#include <cstdint>
#include <string_view>
#include <type_traits>

namespace simfa {

/// ceil(a / b) for a >= 0, b >= 1, computed as (a + b - 1) / b (so a + b - 1 must fit).
constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

/// The smallest multiple of `unit` that is >= a, for a >= 0, unit >= 1 (a + unit - 1 must fit):
/// register counts to their allocation unit, addresses to an alignment.
template <typename T>
constexpr T round_up(T a, std::type_identity_t<T> unit) {
  return (a + unit - 1) / unit * unit;
}

/// x ^ x >> shift ^ x >> 2 shift ^ ...: every bit of x reaches the low `shift` bits (the L2's
/// `slice.fold` map and `set_index = "fold"`, docs/memory-hierarchy.md §2-3). shift >= 1.
/// Folded by doubling: after the turn at distance d, x holds the XOR of the copies shifted by
/// 0 to 2d - shift, so ceil(log2(64 / shift)) turns (four for shift 7) whatever x's magnitude,
/// where a copy a turn takes one turn per `shift` bits of x (six for a line near 2^40).
constexpr std::uint64_t xor_fold(std::uint64_t x, int shift) {
  for (int d = shift; d < 64; d *= 2) x ^= x >> d;
  return x;
}

/// FNV-1a over the bytes of `s`, from `basis` (the offset basis by default): a stable hash of a
/// name, the same on every platform and standard library (component seeds, derived colours).
constexpr std::uint64_t fnv1a(std::string_view s, std::uint64_t basis = 1469598103934665603ull) {
  std::uint64_t h = basis;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

/// Products of times and frequencies, and multiply-high division, overflow 64 bits; GCC's and
/// Clang's 128-bit integer holds them (__extension__ keeps -Wpedantic quiet about the
/// non-standard type).
__extension__ typedef unsigned __int128 Uint128;

/// ceil(a x b / d) for d >= 1, the product in 128 bits (a time in femtoseconds times a
/// frequency, bytes times femtoseconds a second); the result must fit 64 bits.
constexpr std::uint64_t mul_div_up(std::uint64_t a, std::uint64_t b, std::uint64_t d) {
  return static_cast<std::uint64_t>((Uint128{a} * b + d - 1) / d);
}

}  // namespace simfa
