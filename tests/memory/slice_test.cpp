// slice.linear and slice.xor: the paper's case for the XOR hash (section VI-D). A stream with
// FA3's 2048 B stride (16 lines of 128 B) piles onto a few slices under the low-bits map and
// spreads over every slice under the XOR map, and through an L2 that imbalance is time.
// slice.fold: rows of any power-of-two pitch over every slice, where the XOR map gives up; with
// combine = add, rows 2^shift + 1 lines apart too, which its XOR fold piles up.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "fold_slice_map.h"
#include "l2_bench.h"
#include "linear_slice_map.h"
#include "memory_harness.h"
#include "unified_l2.h"
#include "xor_slice_map.h"

namespace simfa::memory_models {
namespace {

using test::MemoryBench;

constexpr std::uint64_t kStrideLines = 2048 / 128;

// Requests per slice of `count` lines `stride` apart, starting at line 0.
std::vector<std::uint32_t> rows(const SliceMap& map, std::uint32_t slices, std::uint32_t count,
                                std::uint64_t stride) {
  std::vector<std::uint32_t> per_slice(slices, 0);
  for (std::uint64_t k = 0; k < count; ++k) ++per_slice[map.slice_of(k * stride, slices)];
  return per_slice;
}

// The same for lines 2048 B apart.
std::vector<std::uint32_t> spread(const SliceMap& map, std::uint32_t slices, std::uint32_t count) {
  return rows(map, slices, count, kStrideLines);
}

// Imbalance: the busiest slice's requests over the mean.
double imbalance(const std::vector<std::uint32_t>& per_slice, std::uint32_t count) {
  const double mean = static_cast<double>(count) / static_cast<double>(per_slice.size());
  return *std::max_element(per_slice.begin(), per_slice.end()) / mean;
}

std::uint32_t used(const std::vector<std::uint32_t>& per_slice) {
  return static_cast<std::uint32_t>(
      std::count_if(per_slice.begin(), per_slice.end(), [](std::uint32_t n) { return n > 0; }));
}

TEST(SliceMaps, StridedStreamOver64Slices) {
  MemoryBench bench;
  const auto linear = bench.make<LinearSliceMap>();
  const auto hashed = bench.make<XorSliceMap>();
  // Lines 16k, k = 0..127. Linear: 16k mod 64 takes the values 0, 16, 32, 48, 32 requests each:
  // 4 slices used, imbalance 32 / (128 / 64) = 16.
  const auto lin = spread(*linear, 64, 128);
  EXPECT_EQ(used(lin), 4u);
  EXPECT_EQ(lin[0], 32u);
  EXPECT_EQ(lin[16], 32u);
  EXPECT_DOUBLE_EQ(imbalance(lin, 128), 16.0);
  // XOR: (16k ^ (k >> 1)) mod 64 keeps the low 6 bits, s0..s3 = k1..k4, s4 = k0 ^ k5,
  // s5 = k1 ^ k6: a rank-6 linear map of k's 7 bits, so each slice is hit exactly twice.
  const auto xr = spread(*hashed, 64, 128);
  EXPECT_EQ(used(xr), 64u);
  for (std::uint32_t n : xr) EXPECT_EQ(n, 2u);
  EXPECT_DOUBLE_EQ(imbalance(xr, 128), 1.0);
}

TEST(SliceMaps, StridedStreamOverTheDefault160Slices) {
  MemoryBench bench;
  const auto linear = bench.make<LinearSliceMap>();
  const auto hashed = bench.make<XorSliceMap>();
  // 2560 lines 16 apart. Linear: 16k mod 160 reaches 160 / gcd(16, 160) = 10 slices, 256 each:
  // imbalance 256 / 16 = 16.
  const auto lin = spread(*linear, 160, 2560);
  EXPECT_EQ(used(lin), 10u);
  EXPECT_DOUBLE_EQ(imbalance(lin, 2560), 16.0);
  // XOR over a slice count that is not a power of two: every slice used, the busiest within
  // 1.25x of the mean (measured: max 19 against a mean of 16, 1.1875).
  const auto xr = spread(*hashed, 160, 2560);
  EXPECT_EQ(used(xr), 160u);
  EXPECT_LT(imbalance(xr, 2560), 1.25);
  EXPECT_DOUBLE_EQ(imbalance(xr, 2560), 1.1875);
}

TEST(SliceMaps, FoldSpreadsRowsOfAnyPitchWhereXorDoesNot) {
  MemoryBench bench;
  const auto hashed = bench.make<XorSliceMap>();
  const auto folded = bench.make<FoldSliceMap>();
  // 1536 rows (twelve 128-row boxes) down one 128 B column at a GEMM operand's pitch, 192
  // slices as the H200's. XOR folds bits 5 and up once: at 8 KiB (64 lines) it reaches 94
  // slices, at 64 KiB 12, at 1 MiB 3, the busiest with 40, 184 and 645 rows against a mean of 8.
  const std::uint64_t pitch_lines[] = {64, 512, 8192};
  const std::uint32_t xor_used[] = {94, 12, 3}, xor_busiest[] = {40, 184, 645};
  for (int i = 0; i < 3; ++i) {
    const auto xr = rows(*hashed, 192, 1536, pitch_lines[i]);
    EXPECT_EQ(used(xr), xor_used[i]) << pitch_lines[i];
    EXPECT_EQ(*std::max_element(xr.begin(), xr.end()), xor_busiest[i]) << pitch_lines[i];
    // Folding every 7 bits: every slice gets exactly its 8.
    for (std::uint32_t n : rows(*folded, 192, 1536, pitch_lines[i])) EXPECT_EQ(n, 8u);
  }
  // Consecutive lines stay as even as the low bits make them: 128 each over 192 x 128.
  for (std::uint32_t n : rows(*folded, 192, 192 * 128, 1)) EXPECT_EQ(n, 128u);
}

TEST(SliceMaps, AddedCopiesSpreadTheStrideTheXorFoldsTogether) {
  MemoryBench bench;
  const auto xored = bench.make<FoldSliceMap>();
  const auto added = bench.make<FoldSliceMap>({{"combine", std::string("add")}});
  // 1536 lines 129 = 2^7 + 1 apart (rows of 8256 B, two rows a step; validation/h100/misaligned/):
  // l ^ l >> 7 cancels each step's +1, so the XOR fold puts them on 89 of 192 slices, the busiest
  // with 192 against a mean of 8; adding 7 x the copies reaches 152, the busiest with 17.
  const auto xr = rows(*xored, 192, 1536, 129);
  EXPECT_EQ(used(xr), 89u);
  EXPECT_EQ(*std::max_element(xr.begin(), xr.end()), 192u);
  const auto ar = rows(*added, 192, 1536, 129);
  EXPECT_EQ(used(ar), 152u);
  EXPECT_EQ(*std::max_element(ar.begin(), ar.end()), 17u);
  // Power-of-two pitches and consecutive lines stay near even: busiest 8, 8, 10 of 8; 129 of 128.
  const std::uint64_t pitch_lines[] = {64, 512, 8192};
  const std::uint32_t busiest[] = {8, 8, 10};
  for (int i = 0; i < 3; ++i) {
    const auto r = rows(*added, 192, 1536, pitch_lines[i]);
    EXPECT_EQ(*std::max_element(r.begin(), r.end()), busiest[i]) << pitch_lines[i];
  }
  const auto consecutive = rows(*added, 192, 192 * 128, 1);
  EXPECT_EQ(*std::max_element(consecutive.begin(), consecutive.end()), 129u);
  // An even multiplier adds nothing to the low bit: refused.
  EXPECT_THROW(
      bench.make<FoldSliceMap>({{"combine", std::string("add")}, {"multiplier", std::int64_t{4}}}),
      InputError);
}

TEST(SliceMaps, FormulasOnSingleLines) {
  MemoryBench bench;
  const auto linear = bench.make<LinearSliceMap>();
  const auto hashed = bench.make<XorSliceMap>();
  const auto folded = bench.make<FoldSliceMap>();
  const auto folded3 = bench.make<FoldSliceMap>({{"shift", std::int64_t{3}}});
  EXPECT_EQ(linear->slice_of(1000, 96), 1000u % 96);
  // 1000 = 0b1111101000; 1000 >> 5 = 31; 1000 ^ 31 = 1015; 1015 mod 96 = 55.
  EXPECT_EQ(hashed->slice_of(1000, 96), 55u);
  EXPECT_EQ(hashed->slice_of(1000, 1), 0u);
  // 1000 ^ (1000 >> 7 = 7) = 1007; 1007 mod 96 = 47.
  EXPECT_EQ(folded->slice_of(1000, 96), 47u);
  // 1000 ^ 125 ^ 15 ^ 1 = 923; 923 mod 96 = 59.
  EXPECT_EQ(folded3->slice_of(1000, 96), 59u);
  // combine = add: 1000 + 7 x (1000 >> 7 = 7) = 1049; 1049 mod 96 = 89.
  const auto added = bench.make<FoldSliceMap>({{"combine", std::string("add")}});
  EXPECT_EQ(added->slice_of(1000, 96), 89u);
}

// The imbalance as time: 128 misses 2048 B apart, all sent at cycle 0, to 64 slices that take one
// request every 4 cycles (requests_per_cycle 0.25), hit latency 10, DRAM latency 100.
Cycle last_response(bool xor_map) {
  test::L2Bench<> bench;
  auto l2 = bench.make<UnifiedL2>({{"slices", std::int64_t{64}},
                                   {"size", std::int64_t{64 * 16 * 128}},
                                   {"hit_latency", std::int64_t{10}},
                                   {"requests_per_cycle", 0.25}});
  const auto linear = bench.make<LinearSliceMap>();
  const auto hashed = bench.make<XorSliceMap>();
  test::RecordingMemory dram(bench.events, 100);
  l2->connect(xor_map ? static_cast<const SliceMap&>(*hashed) : *linear, dram);
  test::RecordingClient client;
  for (std::uint64_t k = 0; k < 128; ++k)
    l2->send(0, test::read_request(k * 2048, k, client));
  bench.events.run();
  EXPECT_EQ(client.responses.size(), 128u);
  return client.responses.back().at;
}

TEST(SliceMaps, ImbalanceCostsSliceBandwidth) {
  // Linear: 32 requests queue at each of 4 slices; the last is taken at 31 x 4 = 124 and answered
  // at 124 + 100 + 10 = 234.
  EXPECT_EQ(last_response(false), 234u);
  // XOR: 2 per slice; the second is taken at 4 and answered at 4 + 100 + 10 = 114.
  EXPECT_EQ(last_response(true), 114u);
}

TEST(SliceMaps, Schema) {
  EXPECT_EQ(test::schema_problems<LinearSliceMap>(), "");
  EXPECT_EQ(test::schema_problems<XorSliceMap>(), "");
  EXPECT_EQ(test::schema_problems<FoldSliceMap>(), "");
}

}  // namespace
}  // namespace simfa::memory_models
