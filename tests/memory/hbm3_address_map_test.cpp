// dram.hbm3's address map alone: the plain mixed-radix slicing, and the XOR hash's polynomials,
// bijection and spread of strided rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "dram_harness.h"
#include "hbm3_address_map.h"

namespace simfa::memory_models {
namespace {

using test::hbm3_address;

TEST(Hbm3AddressMap, DefaultStreamsLinesAcrossPseudoChannelsThenChannels) {
  const Hbm3Organization o = with_stacks(kHbm3Stack, 5);
  const Hbm3AddressMap map("RoCoBaBgStChPc", o, 128);
  auto at = [&](Addr a) {
    const DramLocation l = map.locate(a);
    return std::make_tuple(l.channel, l.pseudo_channel, l.bank_group, l.bank, l.row);
  };
  // Line 0, and every burst inside it: channel 0, pc 0, bank group 0, bank 0, row 0.
  EXPECT_EQ(at(0), std::make_tuple(0u, 0u, 0u, 0u, std::uint64_t{0}));
  EXPECT_EQ(at(96), at(0));
  EXPECT_EQ(at(128), std::make_tuple(0u, 1u, 0u, 0u, std::uint64_t{0}));  // line 1: pc 1
  EXPECT_EQ(at(256), std::make_tuple(1u, 0u, 0u, 0u, std::uint64_t{0}));  // line 2: channel 1
  // Line 2 x 16 = 32: the second stack, channel 16. Line 2 x 16 x 5 = 160: bank group 1.
  EXPECT_EQ(at(32 * 128), std::make_tuple(16u, 0u, 0u, 0u, std::uint64_t{0}));
  EXPECT_EQ(at(160 * 128), std::make_tuple(0u, 0u, 1u, 0u, std::uint64_t{0}));
  // x 4 bank groups = 640: bank 1; x 4 banks = 2560: the next column group of row 0; x 8 column
  // groups (1 KiB row / 128 B) = 20480: row 1.
  EXPECT_EQ(at(640 * 128), std::make_tuple(0u, 0u, 0u, 1u, std::uint64_t{0}));
  EXPECT_EQ(at(2560 * 128), at(0));
  EXPECT_EQ(map.locate(2560 * 128).column_group, 1u);
  EXPECT_EQ(map.locate(7 * 2560 * 128).column_group, 7u);
  EXPECT_EQ(at(20480 * 128), std::make_tuple(0u, 0u, 0u, 0u, std::uint64_t{1}));
  // The harness's inverse agrees.
  EXPECT_EQ(at(hbm3_address(o, 3, 7, 1, 2, 3, 12345, 5)),
            std::make_tuple(3u * 16 + 7, 1u, 2u, 3u, std::uint64_t{12345}));
  // Another order: channel most significant below the row.
  const Hbm3AddressMap channel_major("RoChStPcBgBaCo", o, 128);
  EXPECT_EQ(channel_major.locate(128).channel, 0u);
  EXPECT_EQ(channel_major.locate(8 * 128).bank, 1u);  // 8 column groups fill the row first
}

// ---- the hash's polynomials --------------------------------------------------------------------

TEST(Hbm3AddressMap, HashPolynomialsArePrimitive) {
  // P of degree W is primitive when x has order 2^W - 1 modulo P (hence P is irreducible).
  for (std::size_t w = 1; w < std::size(kHbm3HashPolynomials); ++w) {
    SCOPED_TRACE(w);
    const std::uint32_t p = kHbm3HashPolynomials[w], top = std::uint32_t{1} << w;
    ASSERT_EQ(p & ~(top | (top - 1)), 0u);
    ASSERT_NE(p & top, 0u);
    std::uint32_t power = 1;  // x^k mod P
    std::uint64_t order = 0;
    do {
      power <<= 1;
      if (power & top) power ^= p;
      ++order;
    } while (power != 1 && order <= top);
    EXPECT_EQ(order, top - 1);
  }
}

// ---- bijection ---------------------------------------------------------------------------------

// The locations of one row, numbered: channel, pseudo-channel, bank group, bank, column group,
// most significant first.
struct RowShape {
  RowShape(const Hbm3Organization& o, std::uint32_t interleave)
      : channels(static_cast<std::uint64_t>(o.channels())),
        pcs(static_cast<std::uint64_t>(o.pseudo_channels)),
        groups(static_cast<std::uint64_t>(o.bank_groups)),
        banks(static_cast<std::uint64_t>(o.banks_per_group)),
        column_groups(static_cast<std::uint64_t>(o.columns) *
                      static_cast<std::uint64_t>(o.burst_bytes()) / interleave) {}
  std::uint64_t size() const { return channels * pcs * groups * banks * column_groups; }
  bool holds(const DramLocation& l) const {
    return l.channel < channels && l.pseudo_channel < pcs && l.bank_group < groups &&
           l.bank < banks && l.column_group < column_groups;
  }
  std::uint64_t index(const DramLocation& l) const {
    return (((l.channel * pcs + l.pseudo_channel) * groups + l.bank_group) * banks + l.bank) *
               column_groups +
           l.column_group;
  }
  std::uint64_t channels, pcs, groups, banks, column_groups;
};

// Ro is the most significant digit, so row r's granules are r x size ... (r + 1) x size - 1, and
// the hash changes no row: the map is a bijection on those rows when each of them puts its
// granules on that row's locations, one each. "" or the first problem.
std::string check_rows(const Hbm3AddressMap& map, const RowShape& shape, std::uint32_t interleave,
                       const std::vector<std::uint64_t>& rows) {
  std::vector<char> seen(shape.size());
  for (const std::uint64_t row : rows) {
    std::fill(seen.begin(), seen.end(), 0);
    for (std::uint64_t g = 0; g < shape.size(); ++g) {
      const std::uint64_t granule = row * shape.size() + g;
      const DramLocation l = map.locate(granule * interleave);
      if (l.row != row || !shape.holds(l))
        return "granule " + std::to_string(granule) + " lands outside row " + std::to_string(row);
      if (seen[shape.index(l)]++)
        return "two granules of row " + std::to_string(row) + " share a location (granule " +
               std::to_string(granule) + ")";
    }
  }
  return "";
}

Hbm3Organization small_organization(int stacks, int channels, int pcs, int groups, int banks,
                                    int columns) {
  return Hbm3Organization{.stacks = stacks,
                          .channels_per_stack = channels,
                          .pseudo_channels = pcs,
                          .bank_groups = groups,
                          .banks_per_group = banks,
                          .columns = columns,
                          .pc_width_bits = 32,
                          .burst_length = 8};
}

TEST(Hbm3AddressMap, EveryMapIsABijectionOnSmallOrganizations) {
  struct Case {
    Hbm3Organization organization;
    std::uint32_t interleave;
  };
  const Case cases[] = {
      {small_organization(2, 2, 2, 2, 2, 4), 32},  // all powers of two; 4 column groups
      {small_organization(3, 6, 2, 3, 4, 8), 64},  // odd and even non-powers of two
      {small_organization(5, 4, 1, 2, 2, 2), 32},  // five stacks; one pseudo-channel
      // 64 stacks x 512 channels x 4 pseudo-channels: 17 channel-level bits, more than a unit holds
      {small_organization(64, 512, 4, 1, 1, 4), 128},
  };
  std::vector<std::uint64_t> rows;
  for (std::uint64_t r = 0; r < 16; ++r) rows.push_back(r);
  rows.push_back(std::uint64_t{1} << 40);
  rows.push_back((std::uint64_t{1} << 41) - 1);
  for (const Case& c : cases)
    for (const char* mapping :
         {"RoCoBaBgStChPc", "RoChStPcBgBaCo", "RoBaCoBgPcStCh", "RoStBgCoChBaPc"})
      for (const Hbm3AddressHash hash : {Hbm3AddressHash::kNone, Hbm3AddressHash::kXor}) {
        SCOPED_TRACE(std::string(mapping) + (hash == Hbm3AddressHash::kXor ? " xor" : " none") +
                     ", stacks " + std::to_string(c.organization.stacks));
        const Hbm3AddressMap map(mapping, c.organization, c.interleave, hash);
        const RowShape shape(c.organization, c.interleave);
        const std::vector<std::uint64_t> some =
            shape.size() > 100000 ? std::vector<std::uint64_t>{0, 1, 12345} : rows;
        EXPECT_EQ(check_rows(map, shape, c.interleave, some), "");
      }
}

TEST(Hbm3AddressMap, HashIsABijectionOnTheH200) {
  // 48 rows of the H200's 24576 locations each: rows 0-15 and 32 drawn up to 2^42 (addresses up
  // to 2^64), so every byte of the residues' keys is exercised.
  const Hbm3Organization o = with_stacks(kHbm3Stack, 6);
  const Hbm3AddressMap map("RoCoBaBgStChPc", o, 128, Hbm3AddressHash::kXor);
  std::vector<std::uint64_t> rows;
  for (std::uint64_t r = 0; r < 16; ++r) rows.push_back(r);
  std::uint64_t x = 88172645463325252ull;  // xorshift64
  for (int i = 0; i < 32; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    rows.push_back(x >> 22);
  }
  EXPECT_EQ(check_rows(map, RowShape(o, 128), 128, rows), "");
}

// ---- spread of strided rows --------------------------------------------------------------------

struct Spread {
  std::size_t channels = 0, pseudo_channels = 0, banks = 0;
  int most_per_pseudo_channel = 0;
};

// Where `rows` 128 B lines `stride` bytes apart land.
Spread spread(const Hbm3AddressMap& map, std::uint64_t stride, std::uint64_t rows) {
  std::map<std::uint32_t, int> channels;
  std::map<std::pair<std::uint32_t, std::uint32_t>, int> pcs;
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t>, int> banks;
  Spread s;
  for (std::uint64_t k = 0; k < rows; ++k) {
    const DramLocation l = map.locate(k * stride);
    ++channels[l.channel];
    s.most_per_pseudo_channel =
        std::max(s.most_per_pseudo_channel, ++pcs[{l.channel, l.pseudo_channel}]);
    ++banks[{l.channel, l.pseudo_channel, l.bank_group, l.bank}];
  }
  s.channels = channels.size();
  s.pseudo_channels = pcs.size();
  s.banks = banks.size();
  return s;
}

// Power-of-two strides from 256 B to 1 MiB.
std::vector<std::uint64_t> power_of_two_strides() {
  std::vector<std::uint64_t> out;
  for (std::uint64_t s = 256; s <= (std::uint64_t{1} << 20); s *= 2) out.push_back(s);
  return out;
}

TEST(Hbm3AddressMap, HashSpreadsStridedRowsOnTheH200) {
  // 64 rows of 128 B (a TMA box's rows) at the row strides of K = 4096 .. 524288 fp16 operands.
  // Plain slicing: stride 2^s lines has pseudo-channel 0 and channel 0 of its stack, and the stack
  // (line / 32) mod 6 is even once s >= 6: three channels (0, 32, 64) of 96, one pseudo-channel
  // each, and the banks repeat once the stride passes the bank digits.
  const Hbm3Organization o = with_stacks(kHbm3Stack, 6);
  const Hbm3AddressMap plain("RoCoBaBgStChPc", o, 128);
  const Hbm3AddressMap hashed("RoCoBaBgStChPc", o, 128, Hbm3AddressHash::kXor);
  const std::tuple<std::uint64_t, std::size_t> collapsed[] = {
      {64 << 10, 6}, {128 << 10, 3}, {1 << 20, 3}};
  for (const auto& [stride, banks] : collapsed) {
    SCOPED_TRACE(stride);
    const Spread s = spread(plain, stride, 64);
    EXPECT_EQ(s.channels, 3u);
    EXPECT_EQ(s.pseudo_channels, 3u);
    EXPECT_EQ(s.banks, banks);
    EXPECT_EQ(s.most_per_pseudo_channel, 22);
  }
  // Hashed: the 64 rows take 64 pseudo-channels of the 192 (so also 64 banks) at every
  // power-of-two stride: the channel-level unit (Pc, Ch and the stacks' factor 2: 6 bits)
  // visits all its values in any 64 aligned rows, and the stacks' odd factor 3 adds to them.
  for (const std::uint64_t stride : power_of_two_strides()) {
    SCOPED_TRACE(stride);
    const Spread s = spread(hashed, stride, 64);
    EXPECT_EQ(s.pseudo_channels, 64u);
    EXPECT_EQ(s.banks, 64u);
    EXPECT_GE(s.channels, 48u);  // two of them may be the two pseudo-channels of one channel
    // 1536 rows, 8 per pseudo-channel on average: every one used, none more than twice that.
    const Spread many = spread(hashed, stride, 1536);
    EXPECT_EQ(many.pseudo_channels, 192u);
    EXPECT_LE(many.most_per_pseudo_channel, 16);
  }
  // Strides with a factor 3 (K = 6144, 12288, 98304 fp16) or none (640000 B) spread too; plain
  // slicing puts 24 KiB (192 lines, the period of Pc x Ch x St) on one pseudo-channel.
  EXPECT_EQ(spread(plain, 24 << 10, 64).pseudo_channels, 1u);
  for (const std::uint64_t stride : {std::uint64_t{12} << 10, std::uint64_t{24} << 10,
                                     std::uint64_t{192} << 10, std::uint64_t{640000}}) {
    SCOPED_TRACE(stride);
    EXPECT_GE(spread(hashed, stride, 64).pseudo_channels, 52u);
    const Spread many = spread(hashed, stride, 1536);
    EXPECT_EQ(many.pseudo_channels, 192u);
    EXPECT_LE(many.most_per_pseudo_channel, 16);
  }
}

TEST(Hbm3AddressMap, HashSpreadsStridedRowsOnTheH800) {
  // Five stacks: the channel-level unit is Pc x Ch (5 bits), the stack an odd digit.
  const Hbm3Organization o = with_stacks(kHbm3Stack, 5);
  const Hbm3AddressMap plain("RoCoBaBgStChPc", o, 128);
  const Hbm3AddressMap hashed("RoCoBaBgStChPc", o, 128, Hbm3AddressHash::kXor);
  EXPECT_EQ(spread(plain, 64 << 10, 64).pseudo_channels, 5u);
  for (const std::uint64_t stride : power_of_two_strides()) {
    SCOPED_TRACE(stride);
    const Spread s = spread(hashed, stride, 64);
    EXPECT_GE(s.pseudo_channels, 52u);
    EXPECT_LE(s.most_per_pseudo_channel, 2);
    const Spread many = spread(hashed, stride, 1280);  // 8 per pseudo-channel on average
    EXPECT_EQ(many.pseudo_channels, 160u);
    EXPECT_LE(many.most_per_pseudo_channel, 16);
  }
}

TEST(Hbm3AddressMap, HashSpreadsStridedRowsEvenlyOnPowerOfTwoOrganizations) {
  // One and eight stacks: every hashed field a power of two, so 8 x (pseudo-channels) rows at a
  // power-of-two stride put exactly 8 on each pseudo-channel. Plain slicing puts them all on one
  // from 4 KiB (one stack) or 32 KiB (eight).
  for (const int stacks : {1, 8}) {
    const Hbm3Organization o = with_stacks(kHbm3Stack, stacks);
    const Hbm3AddressMap plain("RoCoBaBgStChPc", o, 128);
    const Hbm3AddressMap hashed("RoCoBaBgStChPc", o, 128, Hbm3AddressHash::kXor);
    const auto pcs = static_cast<std::size_t>(o.channels() * o.pseudo_channels);
    EXPECT_EQ(spread(plain, 64 << 10, 8 * pcs).pseudo_channels, 1u);
    for (const std::uint64_t stride : power_of_two_strides()) {
      SCOPED_TRACE(std::to_string(stacks) + " stacks, stride " + std::to_string(stride));
      const Spread s = spread(hashed, stride, 8 * pcs);
      EXPECT_EQ(s.pseudo_channels, pcs);
      EXPECT_EQ(s.most_per_pseudo_channel, 8);
    }
  }
}

}  // namespace
}  // namespace simfa::memory_models
