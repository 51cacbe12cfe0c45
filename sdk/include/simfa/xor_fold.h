// xor_fold (int_math.h) with its shift fixed when built: the turns unrolled at compile time for
// each shift, chosen once, called through one pointer. The L2 folds every request's line (the
// `slice.fold` map, `set_index = "fold"`), where xor_fold's loop took six instructions a turn.
// Header-only.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "simfa/int_math.h"

namespace simfa {

namespace xor_fold_detail {

// The turn at distance D, then the turns at 2 D, 4 D, ... below 64: xor_fold's doubling.
template <int D>
std::uint64_t turns(std::uint64_t x) {
  if constexpr (D >= 64) {
    return x;
  } else {
    return turns<D * 2>(x ^ x >> D);
  }
}

using Fold = std::uint64_t (*)(std::uint64_t);

// Entry shift - 1: the turns of that shift.
template <std::size_t... S>
constexpr std::array<Fold, sizeof...(S)> folds(std::index_sequence<S...>) {
  return {&turns<static_cast<int>(S) + 1>...};
}
inline constexpr std::array<Fold, 63> kFolds = folds(std::make_index_sequence<63>());

}  // namespace xor_fold_detail

class XorFold {
 public:
  /// shift in [1, 63], as xor_fold's.
  explicit XorFold(int shift)
      : fold_(xor_fold_detail::kFolds[static_cast<std::size_t>(shift - 1)]) {}
  /// xor_fold(x, shift).
  std::uint64_t operator()(std::uint64_t x) const { return fold_(x); }

 private:
  xor_fold_detail::Fold fold_;
};

}  // namespace simfa
