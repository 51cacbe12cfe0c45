// xor_fold (int_math.h) with its shift fixed when built: the turns unrolled at compile time for
// each shift, chosen once, called through one pointer. The L2 folds every request's line (the
// `slice.fold` map, `set_index = "fold"`), where xor_fold's loop took six instructions a turn.
// Header-only.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "simfa/error.h"
#include "simfa/int_math.h"

namespace simfa {

namespace xor_fold_detail {

// xor_fold with the shift a constant: its loop's trip count is known, so the compiler unrolls the
// turns (no loop, no branch), one function per shift.
template <int Shift>
std::uint64_t turns(std::uint64_t x) {
  return xor_fold(x, Shift);
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
  explicit XorFold(int shift) {
    if (shift < 1 || shift > 63)
      throw Error("XorFold: shift " + std::to_string(shift) + " is outside 1..63");
    fold_ = xor_fold_detail::kFolds[static_cast<std::size_t>(shift - 1)];
  }
  /// xor_fold(x, shift).
  std::uint64_t operator()(std::uint64_t x) const { return fold_(x); }

 private:
  xor_fold_detail::Fold fold_ = nullptr;
};

}  // namespace simfa
