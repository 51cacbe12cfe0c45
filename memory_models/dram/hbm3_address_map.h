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
//
// Plain slicing sends rows a power-of-two stride apart to the same few channels (at 64 KiB on
// six stacks: three channels of 96). The hash `Hbm3AddressHash::kXor` spreads them as a GPU's
// memory controllers do, in the manner of the XOR/IPOLY mappings of GPGPU-Sim (Rau, "Pseudo-
// randomly interleaved memory", ISCA 1991): the digits are cut the same way, with a count
// 2^e x m (m odd) cut into a power-of-two digit and an odd digit above it, then
//   - adjacent power-of-two digits of one level (channel level: Pc, Ch, St; bank level: Bg, Ba),
//     at most 16 bits together, form a unit whose W-bit value is XORed with the residue of the
//     digits above it (Co and Ro included): their number q, read as a polynomial over GF(2), times
//     x^W, modulo a primitive polynomial of degree W;
//   - an odd digit v of count m becomes (v + the 8-bit residue of q) mod m;
//   - Co and Ro are left as they are.
// Each unit changes by a function of the digits above it, and no unit changes q: reading the
// digits back from Ro down undoes each step, so the map stays a bijection, and a granule keeps
// its row and column group (only its bank and channel move). For q = k x 2^s (a power-of-two
// stride) the residues of 2^W consecutive k from a multiple of 2^W all differ (P_W is
// irreducible), so such a stride visits every value of a unit before it repeats one.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "simfa/types.h"

#include "hbm3_config.h"

namespace simfa::memory_models {

struct DramLocation {
  std::uint32_t channel = 0;         ///< stack * channels_per_stack + channel in the stack
  std::uint32_t pseudo_channel = 0;  ///< in the channel
  std::uint32_t bank_group = 0;      ///< in the pseudo-channel
  std::uint32_t bank = 0;            ///< in the bank group
  std::uint32_t column_group = 0;    ///< the granule's place in its row (timing reads only the row)
  std::uint64_t row = 0;
};

/// By degree W = 1..16, the polynomial P_W over GF(2) of the hash (bit i: the coefficient of
/// x^i): x + 1, then primitive ones (Hbm3AddressMap.HashPolynomialsArePrimitive checks each).
inline constexpr std::uint32_t kHbm3HashPolynomials[] = {
    0,     0x3,   0x7,   0xB,    0x13,   0x25,   0x43,   0x83,   0x11D,
    0x211, 0x409, 0x805, 0x1053, 0x201B, 0x4443, 0x8003, 0x1100B};

enum class Hbm3AddressHash : std::uint8_t {
  kNone,  ///< plain mixed-radix slicing
  kXor,   ///< channel- and bank-level digits XORed with residues of the digits above them
};

class Hbm3AddressMap {
 public:
  /// `interleave_bytes` must be a whole number of bursts that divides a row. Throws
  /// std::invalid_argument, with a message for the user, when `mapping` is not a permutation of
  /// the seven fields starting with Ro.
  Hbm3AddressMap(std::string_view mapping, const Hbm3Organization& organization,
                 std::uint32_t interleave_bytes, Hbm3AddressHash hash = Hbm3AddressHash::kNone);

  /// The location of the burst holding byte `address`.
  DramLocation locate(Addr address) const;

  /// Whether `address` is the first byte of an interleave granule: the bursts of one granule
  /// share their location.
  bool starts_granule(Addr address) const { return address % interleave_bytes_ == 0; }

 private:
  enum class Field : std::uint8_t { kCo, kBa, kBg, kPc, kCh, kSt };
  static constexpr std::size_t kFields = 6;
  // At most two units per field (a power-of-two digit and an odd one) and two parts per field.
  static constexpr std::size_t kMaxUnits = 2 * kFields;

  /// Bits [at, at + popcount(mask)) of a unit's value, placed at `field_shift` in its field.
  struct Part {
    Field field;
    std::uint8_t at;
    std::uint8_t field_shift;
    std::uint32_t mask;
  };
  /// One digit of the granule index, or several adjacent power-of-two digits hashed together.
  struct Unit {
    std::uint64_t count;
    int shift;    ///< log2(count) when count is a power of two (plain bit slicing), else -1
    int residue;  ///< index into residues_ when hashed, else -1
    std::uint8_t first_part, end_part;
    // A bank-level unit is hashed by the row alone, not by the column group above it: the
    // columns of one DRAM row then stay in one bank, and a stream keeps its row hits. Its key
    // leaves out the Co digit: key = above / (below_co x co) x below_co + above mod below_co.
    std::uint64_t below_co = 1, co = 1;  ///< co = 1: the key is all that is above
  };
  /// Entry [i][b]: the residue of byte b at byte i of a key, b x^(8i + W) mod P_W.
  using ResidueTable = std::array<std::array<std::uint16_t, 256>, 8>;

  struct Digit {
    Field field;
    std::uint64_t count;
  };
  void slice(const std::array<Digit, kFields>& digits);
  void hash(const std::array<Digit, kFields>& digits);
  /// Appends a unit of `count` values, hashed by a residue of `residue_bits` (0: not hashed).
  void add_unit(std::uint64_t count, int residue_bits);
  /// Appends a part to the last unit.
  void add_part(const Part& part);
  int residue_table(int bits);
  static std::uint32_t residue(const ResidueTable& table, std::uint64_t key);

  std::uint32_t interleave_bytes_;
  int interleave_shift_;  ///< log2(interleave_bytes_) when a power of two, else -1
  std::uint32_t channels_per_stack_;
  std::array<Unit, kMaxUnits> units_{};  ///< least significant first
  std::array<Part, kMaxUnits> parts_{};
  std::uint8_t unit_count_ = 0, part_count_ = 0;
  std::vector<ResidueTable> residues_;
  std::vector<int> residue_bits_;  ///< W of each of residues_
};

}  // namespace simfa::memory_models
