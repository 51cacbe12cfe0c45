// The FA3 model against values worked by hand (the arithmetic is in the comments) and against
// brute-force enumeration of CTAs, waves and mask rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <set>

#include "analytical/floor_sum.h"
#include "analytical/llc_survival.h"
#include "analytical/model.h"
#include "simfa/int_math.h"
#include "test_gpus.h"

namespace simfa::analytical {
namespace {

using testing::h800;
using testing::toy;

Fa3Shape shape(std::int64_t batch, std::int64_t heads, std::int64_t kv_heads, std::int64_t seqlen_q,
               std::int64_t seqlen_k, std::int64_t head_dim, std::int64_t block_m, std::int64_t block_n,
               bool causal = false) {
  Fa3Shape s;
  s.batch = batch;
  s.heads = heads;
  s.kv_heads = kv_heads;
  s.seqlen_q = seqlen_q;
  s.seqlen_k = seqlen_k;
  s.head_dim = head_dim;
  s.block_m = block_m;
  s.block_n = block_n;
  s.causal = causal;
  return s;
}

Fa3Shape llama(std::int64_t heads, std::int64_t seqlen) { return shape(1, heads, 8, seqlen, seqlen, 128, 128, 176); }

TEST(FloorSum, MatchesTheLoop) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 20000; ++trial) {
    const std::uint64_t n = rng() % 60, m = 1 + rng() % 300, a = rng() % 1000, b = rng() % 1000;
    std::uint64_t expected = 0;
    for (std::uint64_t i = 0; i < n; ++i) expected += (a * i + b) / m;
    ASSERT_EQ(floor_sum(n, m, a, b), expected) << n << " " << m << " " << a << " " << b;
  }
}

// B=1, H=2, Hkv=1, L=256, S=300, D=64, tiles 128x176, e=2, 3 SMs.
// n_m = ceil(256/128) = 2 Q tiles, n_n = ceil(300/176) = 2 K/V tiles.
TEST(Fa3Model, SmallShapeByHand) {
  const Fa3Shape s = shape(1, 2, 1, 256, 300, 64, 128, 176);
  const AnalyticalResult r = analyze_fa3(toy(3, 200000), s);
  // III-B: 4 B H L S D = 4*1*2*256*300*64.
  EXPECT_EQ(r.flops, 39321600.0);
  // Tensor cores: 4 B H D TM TN * (n_m n_n = 4 tiles per head) = 4*2*64*128*176*4.
  EXPECT_EQ(r.mma_flops, 46137344.0);
  // Q = B H L D e = 2*256*64*2 = 65536. K/V: every CTA streams S = 300 rows of K and of V:
  // B H n_m * 2 S D e = 2*2*2*300*64*2 = 307200.
  EXPECT_EQ(r.llc_read_bytes, 65536.0 + 307200.0);
  EXPECT_EQ(r.llc_write_bytes, 65536.0);
  // III-D: Q + one KV head's K and V, 2 S D e = 2*300*64*2 = 76800.
  EXPECT_EQ(r.dram_ideal_read_bytes, 65536.0 + 76800.0);
  EXPECT_EQ(r.dram_ideal_write_bytes, 65536.0);
  // III-E: the KV head owns C = G n_m = 2*2 = 4 CTAs; waves of 3 put them in waves 0 and 1:
  // K/V fetched twice. Reads: 65536 + 2*76800 = 219136.
  EXPECT_EQ(r.ctas, 4);
  EXPECT_EQ(r.ctas_per_wave, 3);
  EXPECT_EQ(r.waves, 2);
  EXPECT_EQ(r.fa3.kv_fetches, 2.0);
  EXPECT_EQ(r.wave_factor, 2.0);
  EXPECT_EQ(r.dram_wave_read_bytes, 219136.0);
  // Working set: the first wave's 3 CTAs stream ceil(3/4) = 1 KV head (76800 B) and hold
  // 3 Q + 3 O tiles of TM D e = 128*64*2 = 16384 B: 76800 + 6*16384 = 175104 <= 200000.
  EXPECT_EQ(r.fa3.kv_heads_per_wave, 1);
  EXPECT_EQ(r.working_set_operand_bytes, 76800.0);
  EXPECT_EQ(r.working_set_tile_bytes, 98304.0);
  EXPECT_EQ(r.working_set_bytes, 175104.0);
  EXPECT_EQ(r.effective_llc_bytes, 200000.0);
  EXPECT_EQ(r.regime, Regime::ideal);
  EXPECT_EQ(r.dram_read_bytes, r.dram_ideal_read_bytes);
  EXPECT_EQ(r.dram_write_bytes, 65536.0);
  // III-F: LLC 438272 B against ideal DRAM 207872 B.
  EXPECT_DOUBLE_EQ(r.llc_to_dram_ideal(), 438272.0 / 207872.0);
  EXPECT_DOUBLE_EQ(r.dram_to_ideal(), 1.0);
  // Roofline: peak 3 SMs * 1000 FLOP/cycle * 1e9 Hz = 3e12 FLOP/s; compute 46137344 / 3e12;
  // LLC 438272 / 2e12; DRAM 207872 / 1e12. Compute bound.
  EXPECT_DOUBLE_EQ(r.time_compute_s, 46137344.0 / 3e12);
  EXPECT_DOUBLE_EQ(r.time_llc_s, 438272.0 / 2e12);
  EXPECT_DOUBLE_EQ(r.time_dram_s, 207872.0 / 1e12);
  EXPECT_EQ(r.bound, Bound::compute);
  EXPECT_DOUBLE_EQ(r.time_s, r.time_compute_s);
  // GenZ: Q + K + V + O = 207872 B; 39321600 FLOPs / 3e12 = 13.1 us > 0.2 us of DRAM.
  EXPECT_EQ(r.genz_dram_bytes, 207872.0);
  EXPECT_EQ(r.genz_flops, 39321600.0);
  EXPECT_EQ(r.genz_bound, Bound::compute);
  EXPECT_DOUBLE_EQ(r.genz_time_s, 39321600.0 / 3e12);
}

TEST(Fa3Model, SmallShapePastTheEffectiveLlcKeepsPartOfTheReuse) {
  // Same shape; an effective LLC of 150000 B. Wave 1 re-uses the one KV head wave 0 streamed;
  // in between the LLC took in the rest of its K/V, wave 0's Q and O tiles and the first part of
  // wave 1's K/V, each by the capacity its copies take (llc_survival.h, near_copy_share): the K/V
  // that 3 CTAs of a wave read, 76800 (1 - 2^-4) = 72000 B; 3 Q tiles one CTA each reads,
  // 3 * 16384 * 0.75 = 36864 B; 3 O tiles, 49152 B. 158016 B = 1.05344 LLCs, survival
  // (0.95 + 0.4 - 1.05344) / 0.4 = 0.7414 of the 76800 B the wave model fetches again.
  const AnalyticalResult r = analyze_fa3(toy(3, 150000), shape(1, 2, 1, 256, 300, 64, 128, 176));
  EXPECT_EQ(r.regime, Regime::partial);
  EXPECT_DOUBLE_EQ(r.reuse_distance_bytes, 158016.0);
  EXPECT_NEAR(r.dram_read_bytes, 65536.0 + 76800.0 + 76800.0 * (1 - 0.7414), 1e-6);
  EXPECT_NEAR(r.reuse_survival, 0.7414, 1e-12);
  // Counted whole (every byte two copies) the distance would be 175104 B, 1.16736 LLCs, and the
  // survival (1.35 - 1.16736) / 0.4 = 0.4566: the near copies' share is what keeps the rest.
  EXPECT_GT(r.reuse_survival, 0.4566 + 0.25);
  // From 1.35 LLCs on (158016 / 1.35 = 117049 B) nothing survives: the wave model.
  const AnalyticalResult spills =
      analyze_fa3(toy(3, 117000), shape(1, 2, 1, 256, 300, 64, 128, 176));
  EXPECT_EQ(spills.regime, Regime::realistic);
  EXPECT_EQ(spills.dram_read_bytes, 219136.0);
  EXPECT_DOUBLE_EQ(spills.dram_to_ideal(), (219136.0 + 65536.0) / (142336.0 + 65536.0));
}

// B=2, H=4, Hkv=2, L=S=128, one Q tile per head: G = 2, C = 2 CTAs per KV head, 4 KV heads
// owning CTAs [0,2) [2,4) [4,6) [6,8); waves of 3: [0,3) [3,6) [6,8). Heads 0, 2, 3 fall in one
// wave, head 1 (CTAs 2, 3) in two: 5 fetches, wave factor 5/4.
TEST(Fa3Model, GqaHeadsStraddlingWaves) {
  const AnalyticalResult r = analyze_fa3(toy(3, 1e9), shape(2, 4, 2, 128, 128, 64, 128, 64));
  EXPECT_EQ(r.ctas, 8);
  EXPECT_EQ(r.waves, 3);
  EXPECT_EQ(r.fa3.kv_fetches, 5.0);
  EXPECT_EQ(r.wave_factor, 1.25);
  // ceil(3 CTAs / 2 per head) = 2 KV heads in the first wave, 2 * (2*128*64*2 = 32768) B.
  EXPECT_EQ(r.fa3.kv_heads_per_wave, 2);
  EXPECT_EQ(r.working_set_operand_bytes, 65536.0);
  // Q = B H L D e = 2*4*128*64*2 = 131072; wave model adds 5 * 32768.
  EXPECT_EQ(r.dram_wave_read_bytes, 131072.0 + 5 * 32768.0);
}

// Causal, bottom-right aligned, B = H = Hkv = 1, D = 64, TM = 128.
TEST(Fa3Model, CausalSquareByHand) {
  // L = S = 300, TN = 64: Q tile 0 (rows 0..127) needs keys [0,128): 2 tiles, 128 rows;
  // tile 1 (rows ..255) keys [0,256): 4 tiles, 256 rows; tile 2 (rows ..299) all 300 keys:
  // 5 tiles, 300 rows (the last tile clipped). 11 tiles, 684 rows.
  const AnalyticalResult r = analyze_fa3(toy(132, 1e9), shape(1, 1, 1, 300, 300, 64, 128, 64, true));
  // Row i keeps i + 1 keys: 300*301/2 = 45150 pairs; FLOPs 4 D pairs = 4*64*45150.
  EXPECT_EQ(r.flops, 11558400.0);
  EXPECT_EQ(r.mma_flops, 4.0 * 64 * 128 * 64 * 11);
  // Q 300*64*2 = 38400; K/V 2*684*64*2 = 175104.
  EXPECT_EQ(r.llc_read_bytes, 38400.0 + 175104.0);
  EXPECT_DOUBLE_EQ(r.fa3.causal_kv_fraction, 684.0 / 900.0);
  // GenZ ignores the mask: 4*300*300*64.
  EXPECT_EQ(r.genz_flops, 23040000.0);
}

TEST(Fa3Model, CausalRectangularByHand) {
  // L = 200 < S = 300: row i sees keys [0, i + 100]. Tile 0 needs 228 keys: 4 tiles of 64,
  // 256 rows; tile 1 (last) all 300: 5 tiles. Pairs: 101 + ... + 300 = 200*401/2 = 40100.
  AnalyticalResult r = analyze_fa3(toy(132, 1e9), shape(1, 1, 1, 200, 300, 64, 128, 64, true));
  EXPECT_EQ(r.flops, 4.0 * 64 * 40100);
  EXPECT_EQ(r.mma_flops, 4.0 * 64 * 128 * 64 * 9);
  EXPECT_EQ(r.llc_read_bytes, 200.0 * 64 * 2 + 2.0 * 556 * 64 * 2);
  // L = 300 > S = 100: rows below 200 see no key. Tile 0 (rows ..127): none; tile 1 (..255):
  // 56 keys, 1 tile, 64 rows; tile 2: all 100, 2 tiles. Pairs: 1 + ... + 100 = 5050. FA3 skips
  // tile 0's mainloop: its 128 Q rows are never loaded (O is still written, as zeros).
  r = analyze_fa3(toy(132, 1e9), shape(1, 1, 1, 300, 100, 64, 128, 64, true));
  EXPECT_EQ(r.flops, 4.0 * 64 * 5050);
  EXPECT_EQ(r.mma_flops, 4.0 * 64 * 128 * 64 * 3);
  EXPECT_EQ(r.llc_read_bytes, (300.0 - 128) * 64 * 2 + 2.0 * 164 * 64 * 2);
  EXPECT_EQ(r.llc_write_bytes, 300.0 * 64 * 2);
  EXPECT_EQ(r.dram_ideal_read_bytes, (300.0 - 128) * 64 * 2 + 2.0 * 100 * 64 * 2);
  // GenZ counts operand sizes: Q, K, V and O once.
  EXPECT_EQ(r.genz_dram_bytes, 2 * 300.0 * 64 * 2 + 2.0 * 100 * 64 * 2);
  // L = S = 300, TN = 176: tile 0 needs 128 keys (1 tile, 176 rows); tile 1 needs 256 keys:
  // 2 tiles whose 352 rows clip at 300; tile 2: 300. 5 tiles, 776 rows.
  r = analyze_fa3(toy(132, 1e9), shape(1, 1, 1, 300, 300, 64, 128, 176, true));
  EXPECT_EQ(r.mma_flops, 4.0 * 64 * 128 * 176 * 5);
  EXPECT_EQ(r.llc_read_bytes, 300.0 * 64 * 2 + 2.0 * 776 * 64 * 2);
}

// The closed forms against enumeration over random small shapes.
TEST(Fa3Model, MatchesBruteForce) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 3000; ++trial) {
    const std::int64_t kv = 1 + rng() % 3, group = 1 + rng() % 4, batch = 1 + rng() % 3;
    const std::int64_t L = 1 + rng() % 700, S = 1 + rng() % 700;
    const std::int64_t TM = 16 * (1 + rng() % 10), TN = 16 * (1 + rng() % 12), D = 32;
    const bool causal = rng() % 2;
    const int sms = 1 + static_cast<int>(rng() % 40);
    const Fa3Shape s = shape(batch, kv * group, kv, L, S, D, TM, TN, causal);
    const AnalyticalResult r = analyze_fa3(toy(sms, 1e12), s);

    // Per Q head: tiles and rows of K/V streamed, pairs kept by the mask.
    const std::int64_t n_m = ceil_div(L, TM);
    std::int64_t tiles = 0, rows = 0, q_rows = 0, pairs = 0;
    for (std::int64_t m = 0; m < n_m; ++m) {
      const std::int64_t last_row = std::min(L, (m + 1) * TM);
      const std::int64_t keys = causal ? std::clamp(last_row + S - L, std::int64_t{0}, S) : S;
      tiles += ceil_div(keys, TN);
      rows += std::min(S, ceil_div(keys, TN) * TN);
      if (keys > 0) q_rows += last_row - m * TM;  // a tile that sees no key loads no Q
    }
    for (std::int64_t i = 0; i < L; ++i)
      pairs += causal ? std::clamp(i + S - L + 1, std::int64_t{0}, S) : S;
    // Waves: CTA c belongs to KV head c / (group n_m) and wave c / sms; count distinct pairs.
    const std::int64_t ctas = batch * kv * group * n_m;
    std::set<std::pair<std::int64_t, std::int64_t>> head_waves;
    for (std::int64_t c = 0; c < ctas; ++c) head_waves.insert({c / (group * n_m), c / sms});

    const double heads = static_cast<double>(batch * kv * group);
    ASSERT_EQ(r.flops, 4.0 * D * heads * static_cast<double>(pairs));
    ASSERT_EQ(r.mma_flops, 4.0 * D * static_cast<double>(TM * TN) * heads * static_cast<double>(tiles));
    ASSERT_EQ(r.llc_read_bytes, heads * static_cast<double>(q_rows * D * 2 + 2 * rows * D * 2));
    ASSERT_EQ(r.fa3.kv_fetches, static_cast<double>(head_waves.size()));
    ASSERT_EQ(r.waves, ceil_div(ctas, sms));
  }
}

// Section VIII-B2 on H800, made continuous: for Llama-3 K/V heads (D = 128) one wave streams one
// KV head, 2 S D e = 512 S bytes, beside 132 Q and 132 O tiles of 128 x 128 x 2 B = 8650752 B,
// and a wave that straddles two heads streams two. A head re-used from a one-head wave by a
// one-head wave lies 512 S + 8650752 B back, from or by a two-head wave up to 1024 S + 8650752 B.
// Against 26214400 B: everything survives up to S = 17152 (16K), part of it from 24K to 48K
// (the one-head reuses survive to S = 34304, partly to 54784), nothing from 64K on.
TEST(Fa3Model, LlamaOnH800IdealTo16kPartialTo48kRealisticBeyond) {
  for (std::int64_t heads : {32, 64, 128}) {
    for (std::int64_t seqlen : {512, 4096, 16384}) {
      const AnalyticalResult r = analyze_fa3(h800(), llama(heads, seqlen));
      EXPECT_EQ(r.regime, Regime::ideal) << heads << " " << seqlen;
      // From 16K on, a KV head owns more CTAs than a wave holds (G n_m >= 4 * 128 > 132).
      if (seqlen >= 16384) {
        EXPECT_EQ(r.working_set_bytes, 512.0 * static_cast<double>(seqlen) + 8650752.0);
      }
      EXPECT_EQ(r.dram_bytes(), r.dram_ideal_bytes());
    }
    double previous = 1;
    for (std::int64_t seqlen : {24576, 32768, 40960, 49152}) {
      const AnalyticalResult r = analyze_fa3(h800(), llama(heads, seqlen));
      EXPECT_EQ(r.regime, Regime::partial) << heads << " " << seqlen;
      EXPECT_GT(r.dram_read_bytes, r.dram_ideal_read_bytes);
      EXPECT_LT(r.dram_read_bytes, r.dram_wave_read_bytes);
      EXPECT_LT(r.reuse_survival, previous) << heads << " " << seqlen;
      previous = r.reuse_survival;
    }
    for (std::int64_t seqlen : {65536, 131072}) {
      const AnalyticalResult r = analyze_fa3(h800(), llama(heads, seqlen));
      EXPECT_EQ(r.regime, Regime::realistic) << heads << " " << seqlen;
      EXPECT_EQ(r.dram_read_bytes, r.dram_wave_read_bytes);
      // Each KV head spans G n_m / 132 waves or one more.
      const double spread = static_cast<double>(heads / 8 * seqlen / 128) / 132;
      EXPECT_GE(r.wave_factor, spread);
      EXPECT_LE(r.wave_factor, spread + 1);
    }
  }
}

// The closed-form re-fetch count against a walk over the waves: at every boundary a head
// straddles, the head is fetched again unless it survives the stack distance from n_w to n_{w+1}
// heads' K/V plus one wave's Q and O tiles (non-causal; the counts per boundary class are what
// the closed form must get right).
TEST(Fa3Model, RefetchMatchesAWalkOverTheWaves) {
  std::mt19937_64 rng(13);
  for (int trial = 0; trial < 3000; ++trial) {
    const std::int64_t kv = 1 + rng() % 6, group = 1 + rng() % 8, batch = 1 + rng() % 3;
    const std::int64_t L = 128 * (1 + rng() % 40), D = 64;
    const int sms = 1 + static_cast<int>(rng() % 60);
    const double llc = static_cast<double>(20000 + rng() % 3000000);
    const Fa3Shape s = shape(batch, kv * group, kv, L, L, D, 128, 128, false);
    const AnalyticalResult r = analyze_fa3(toy(sms, llc), s);

    const std::int64_t C = group * (L / 128), T = batch * kv * C;
    const double kvh = 2.0 * static_cast<double>(L * D * 2);
    // Q tiles (one reader) at 0.75 of their bytes, O tiles whole, K/V by the readers of a wave.
    const double tiles = static_cast<double>(std::min<std::int64_t>(sms, T) * 128 * D * 2) * 1.75;
    const double kvd = kvh * (1 - std::pow(2.0, -static_cast<double>(std::min<std::int64_t>(C, sms) + 1)));
    auto heads = [&](std::int64_t a) { return (std::min<std::int64_t>(a + sms, T) - 1) / C - a / C + 1; };
    double refetch = 0;
    for (std::int64_t a = sms; a < T; a += sms) {
      if (a % C == 0) continue;
      const double d0 = static_cast<double>(heads(a - sms)) * kvd + tiles;
      const double d1 = static_cast<double>(heads(a)) * kvd + tiles;
      refetch += kvh * (1 - mean_llc_survival(d0, d1, llc));
    }
    const double expected = r.dram_ideal_read_bytes + refetch;
    // Above 256 waves of short heads the model takes the mean head count: within 2% there.
    const bool walked = C >= 2 * sms || ceil_div(T, sms) <= 256;
    ASSERT_NEAR(r.dram_read_bytes, expected, (walked ? 1e-9 : 2e-2) * expected)
        << batch << " " << kv << " " << group << " " << L << " " << sms << " " << llc;
  }
}

// Long sequences: K/V refetching dominates and DRAM traffic grows as L S (VIII-B2), while the
// ideal traffic grows as L + S.
TEST(Fa3Model, RealisticTrafficGrowsQuadratically) {
  const double d64 = analyze_fa3(h800(), llama(64, 65536)).dram_bytes();
  const double d128 = analyze_fa3(h800(), llama(64, 131072)).dram_bytes();
  EXPECT_GT(d128 / d64, 3.0);
  const double i64 = analyze_fa3(h800(), llama(64, 65536)).dram_ideal_bytes();
  const double i128 = analyze_fa3(h800(), llama(64, 131072)).dram_ideal_bytes();
  EXPECT_DOUBLE_EQ(i128 / i64, 2.0);
}

}  // namespace
}  // namespace simfa::analytical
