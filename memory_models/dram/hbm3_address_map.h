// Where a burst of an HBM3 memory lives: stack, channel, pseudo-channel, bank group, bank, row.
//
// The address is first cut into interleave granules of `interleave_bytes` (128 B by default, an
// L2 line); the bursts inside one granule are consecutive columns of one row, so a line is one
// row activation. The granule index is then split by the mapping string, whose two-letter fields
// are written from most to least significant:
//
//     Ro  row            Co  column group (the row's columns / bursts per granule)
//     Ba  bank           Bg  bank group     Pc  pseudo-channel
//     Ch  channel        St  stack
//
// "RoCoBaBgStChPc" (the default) puts the pseudo-channel in the least significant place, then
// the channel, the stack, the bank group and the bank: consecutive lines stream across the
// pseudo-channels and channels of every stack before they return to a bank, and a row is reused
// once every line of the memory's other banks has been visited. Each field is one digit of a
// mixed-radix number (granule % count, then granule / count), so field sizes need not be powers
// of two (five stacks on an H800); for power-of-two sizes this is plain bit slicing. Ro must come
// first: it takes whatever the other fields leave, so capacity is unbounded.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "simfa/types.h"

#include "hbm3_config.h"

namespace simfa::memory_models {

struct DramLocation {
  std::uint32_t channel = 0;         ///< stack * channels_per_stack + channel in the stack
  std::uint32_t pseudo_channel = 0;  ///< in the channel
  std::uint32_t bank_group = 0;      ///< in the pseudo-channel
  std::uint32_t bank = 0;            ///< in the bank group
  std::uint64_t row = 0;
};

class Hbm3AddressMap {
 public:
  /// `interleave_bytes` must be a whole number of bursts that divides a row. Throws
  /// std::invalid_argument, with a message for the user, when `mapping` is not a permutation of
  /// the seven fields starting with Ro.
  Hbm3AddressMap(std::string_view mapping, const Hbm3Organization& organization,
                 std::uint32_t interleave_bytes);

  /// The location of the burst holding byte `address`.
  DramLocation locate(Addr address) const;

  /// Whether `address` is the first byte of an interleave granule: the bursts of one granule
  /// share their location.
  bool starts_granule(Addr address) const { return address % interleave_bytes_ == 0; }

 private:
  enum class Field : std::uint8_t { kCo, kBa, kBg, kPc, kCh, kSt };
  struct Digit {
    Field field;
    std::uint64_t count;
    int shift;  ///< log2(count) when count is a power of two (plain bit slicing), else -1
  };

  std::uint32_t interleave_bytes_;
  int interleave_shift_;  ///< log2(interleave_bytes_) when a power of two, else -1
  std::uint32_t channels_per_stack_;
  std::array<Digit, 6> digits_{};  ///< every field but Ro, least significant first
};

}  // namespace simfa::memory_models
