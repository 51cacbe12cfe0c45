// The GEMM model against values worked by hand and against enumeration of the launch order.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <set>

#include "analytical/floor_sum.h"
#include "analytical/llc_survival.h"
#include "analytical/model.h"
#include "analytical/roofline.h"
#include "simfa/int_math.h"
#include "test_gpus.h"

namespace simfa::analytical {
namespace {

using testing::h800;
using testing::toy;

GemmShape gemm(std::int64_t m, std::int64_t n, std::int64_t k, Raster raster = Raster::row_major) {
  GemmShape s;
  s.m = m;
  s.n = n;
  s.k = k;
  s.raster = raster;
  return s;
}

// M=300, N=200, K=100, 128x128x64 tiles, FP16, 2 SMs: m_t = 3 tile rows (the last 44 rows),
// n_t = 2 tile columns (the last 72 columns), k_t = 2, 6 CTAs in 3 waves of 2.
TEST(GemmModel, SmallShapeRowMajorByHand) {
  const AnalyticalResult r = analyze_gemm(toy(2, 200000), gemm(300, 200, 100));
  EXPECT_EQ(r.flops, 2.0 * 300 * 200 * 100);
  // 2 * (3*128) * (2*128) * (2*64).
  EXPECT_EQ(r.mma_flops, 25165824.0);
  // Every CTA of a tile row reads that row's A panel: n_t M K e = 2*300*100*2 = 120000; every
  // CTA of a tile column its B panel: m_t K N e = 3*100*200*2 = 120000. C: 300*200*2 written.
  EXPECT_EQ(r.llc_read_bytes, 240000.0);
  EXPECT_EQ(r.llc_write_bytes, 120000.0);
  EXPECT_EQ(r.dram_ideal_read_bytes, (300.0 * 100 + 100.0 * 200) * 2);
  EXPECT_EQ(r.dram_ideal_write_bytes, 120000.0);
  // Row-major: wave 0 = tiles (0,0) (0,1), wave 1 = row 1, wave 2 = row 2. Each wave reads one
  // A panel (128*100*2 = 25600 B; the last 44*100*2 = 8800 B) and all of B (40000 B):
  // A 25600 + 25600 + 8800, B 3 * 40000.
  EXPECT_EQ(r.waves, 3);
  EXPECT_EQ(r.gemm.a_wave_read_bytes, 60000.0);
  EXPECT_EQ(r.gemm.b_wave_read_bytes, 120000.0);
  EXPECT_EQ(r.dram_wave_read_bytes, 180000.0);
  // 3 A and 6 B panel fetches over 3 + 2 panels.
  EXPECT_EQ(r.wave_factor, 9.0 / 5.0);
  // Wave 0: 1 A + 2 B panels = 65600 B, and 2 C tiles of 128*128*2 = 65536 B.
  EXPECT_EQ(r.gemm.wave_a_panels, 1);
  EXPECT_EQ(r.gemm.wave_b_panels, 2);
  EXPECT_EQ(r.working_set_bytes, 65600.0 + 65536.0);
  EXPECT_EQ(r.regime, Regime::ideal);
  EXPECT_EQ(r.dram_read_bytes, 100000.0);
  EXPECT_EQ(r.reuse_survival, 1.0);
  // Effective LLC 100000 B. Wave 1 shares B (40000 B) with wave 0 and reads row 1's A panel
  // (25600 B) for the first time; a B slice at share u of the traversal was read by wave 0, then
  // the LLC took in the rest of wave 0's panels, its 65536 B of C tiles and the first share u of
  // wave 1's panels, the panels by the capacity their copies take (llc_survival.h,
  // near_copy_share): the wave's A panel two CTAs read, 25600 (1 - 2^-3) = 22400 B, its B panels
  // one CTA each, 40000 (1 - 2^-2) = 30000 B. 52400 + 65536 = 117936 B = 1.17936 LLCs throughout,
  // survival (1.35 - 1.17936) / 0.4 = 0.4266. Wave 2 reads row 2's 8800 B first and B again after
  // a distance running from 117936 to 8800 * 0.875 + 30000 + 65536 = 103236 B: a mean survival of
  // (1.35 - 1.10586) / 0.4 = 0.61035.
  const AnalyticalResult small = analyze_gemm(toy(2, 100000), gemm(300, 200, 100));
  EXPECT_EQ(small.regime, Regime::partial);
  EXPECT_EQ(small.dram_wave_read_bytes, 180000.0);
  EXPECT_DOUBLE_EQ(small.reuse_distance_bytes, 117936.0);
  EXPECT_NEAR(small.gemm.lockstep_read_bytes,
              65600 + 25600 + 40000 * (1 - 0.4266) + 8800 + 40000 * (1 - 0.61035), 1e-6);
  EXPECT_NEAR(small.reuse_survival, (180000 - small.gemm.lockstep_read_bytes) / 80000, 1e-12);
  // The toy GPU gives no shared memory: one CTA per SM, which stays in step.
  EXPECT_EQ(small.gemm.out_of_step_share, 0);
  EXPECT_EQ(small.dram_read_bytes, small.gemm.lockstep_read_bytes);
  // At 1.35 LLCs and beyond (103236 / 1.35 = 76471 B) nothing survives: the wave model.
  const AnalyticalResult tiny = analyze_gemm(toy(2, 76000), gemm(300, 200, 100));
  EXPECT_EQ(tiny.regime, Regime::realistic);
  EXPECT_EQ(tiny.dram_read_bytes, 180000.0);
}

TEST(GemmModel, SmallShapeGroupedByHand) {
  // Grouped by 8 tile rows: one group of r = 3 rows; CTA j is tile (j % 3, j / 3):
  // (0,0) (1,0) | (2,0) (0,1) | (1,1) (2,1).
  // Wave 0: rows 0,1 (51200 B of A), column 0 (25600 B of B).
  // Wave 1: rows 2,0 (8800 + 25600), columns 0,1 (40000).
  // Wave 2: rows 1,2 (25600 + 8800), column 1 (72*100*2 = 14400).
  const AnalyticalResult r = analyze_gemm(toy(2, 1e9), gemm(300, 200, 100, Raster::grouped));
  EXPECT_EQ(r.gemm.a_wave_read_bytes, 51200.0 + 34400.0 + 34400.0);
  EXPECT_EQ(r.gemm.b_wave_read_bytes, 25600.0 + 40000.0 + 14400.0);
  EXPECT_EQ(r.gemm.wave_a_panels, 2);
  EXPECT_EQ(r.gemm.wave_b_panels, 1);
  EXPECT_EQ(r.wave_factor, 10.0 / 5.0);
}

TEST(GemmModel, Fp8HalvesOperandBytesAndDoublesThePeak) {
  GemmShape s = gemm(4096, 4096, 4096);
  s.dtype = GemmDtype::fp8;
  s.elem_bytes = 1;
  const AnalyticalResult r8 = analyze_gemm(h800(), s);
  const AnalyticalResult r16 = analyze_gemm(h800(), gemm(4096, 4096, 4096));
  EXPECT_EQ(r8.dram_ideal_read_bytes * 2, r16.dram_ideal_read_bytes);
  EXPECT_EQ(r8.dram_ideal_write_bytes, r16.dram_ideal_write_bytes);
  EXPECT_EQ(r8.peak_flops, 2 * r16.peak_flops);
}

/// The launch order of Triton's grouped matmul (GROUP_SIZE_M = g; g = 1 is row-major).
std::pair<std::int64_t, std::int64_t> tile_of(std::int64_t pid, std::int64_t m_t, std::int64_t n_t,
                                              std::int64_t g) {
  const std::int64_t group = pid / (g * n_t);
  const std::int64_t first = group * g;
  const std::int64_t rows = std::min(m_t - first, g);
  const std::int64_t local = pid % (g * n_t);
  return {first + local % rows, local / rows};
}

/// A random GEMM for the brute-force tests: M, N below max_mn, K below max_k, either raster, tiles
/// of 64 to 192, on 1 to max_sms SMs.
struct RandomGemm {
  GemmShape shape;
  int sms;
};
RandomGemm random_gemm(std::mt19937_64& rng, std::int64_t max_mn, std::int64_t max_k, int max_sms) {
  const std::int64_t M = 1 + static_cast<std::int64_t>(rng() % max_mn);
  const std::int64_t N = 1 + static_cast<std::int64_t>(rng() % max_mn);
  const std::int64_t K = 1 + static_cast<std::int64_t>(rng() % max_k);
  const Raster raster = rng() % 2 ? Raster::grouped : Raster::row_major;
  const int sms = 1 + static_cast<int>(rng() % max_sms);
  GemmShape s = gemm(M, N, K, raster);
  s.block_m = 64 * (1 + static_cast<std::int64_t>(rng() % 3));
  s.block_n = 64 * (1 + static_cast<std::int64_t>(rng() % 3));
  return {s, sms};
}

TEST(GemmModel, WavePanelsMatchBruteForce) {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 3000; ++trial) {
    const auto [s, sms] = random_gemm(rng, 2000, 300, 50);
    const std::int64_t M = s.m, N = s.n, K = s.k;
    const Raster raster = s.raster;
    const AnalyticalResult r = analyze_gemm(toy(sms, 1e12), s);

    const std::int64_t m_t = ceil_div(M, s.block_m), n_t = ceil_div(N, s.block_n);
    const std::int64_t g = raster == Raster::grouped ? kGroupedRasterRows : 1;
    double a_bytes = 0, b_bytes = 0;
    std::int64_t fetches = 0;
    for (std::int64_t start = 0; start < m_t * n_t; start += sms) {
      std::set<std::int64_t> rows, cols;
      for (std::int64_t pid = start; pid < std::min(start + sms, m_t * n_t); ++pid) {
        const auto [row, col] = tile_of(pid, m_t, n_t, g);
        rows.insert(row);
        cols.insert(col);
      }
      for (std::int64_t row : rows) a_bytes += static_cast<double>(std::min(s.block_m, M - row * s.block_m) * K * 2);
      for (std::int64_t col : cols) b_bytes += static_cast<double>(std::min(s.block_n, N - col * s.block_n) * K * 2);
      fetches += static_cast<std::int64_t>(rows.size() + cols.size());
    }
    ASSERT_EQ(r.gemm.a_wave_read_bytes, a_bytes) << M << " " << N << " " << sms;
    ASSERT_EQ(r.gemm.b_wave_read_bytes, b_bytes) << M << " " << N << " " << sms;
    ASSERT_EQ(r.wave_factor, static_cast<double>(fetches) / static_cast<double>(m_t + n_t));
  }
}

// The survival model against sets of panels: wave w+1's panels split into those no earlier wave
// used (fetched), those wave w used (surviving by the mean survival over a stack distance from
// F_w + T_w to F_{w+1} + T_w) and older ones (one wave's panels F_w more in between).
TEST(GemmModel, SurvivalMatchesBruteForce) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 2000; ++trial) {
    const auto [s, sms] = random_gemm(rng, 3000, 500, 40);
    const double llc = static_cast<double>(10000 + rng() % 4000000);
    const AnalyticalResult r = analyze_gemm(toy(sms, llc), s);
    const std::int64_t m_t = r.gemm.tiles_m, n_t = r.gemm.tiles_n;
    const std::int64_t g = s.raster == Raster::grouped ? kGroupedRasterRows : 1;
    auto a_bytes = [&](std::int64_t row) { return static_cast<double>(std::min(s.block_m, s.m - row * s.block_m) * s.k * 2); };
    auto b_bytes = [&](std::int64_t col) { return static_cast<double>(std::min(s.block_n, s.n - col * s.block_n) * s.k * 2); };
    std::set<std::int64_t> seen_rows, seen_cols, prev_rows, prev_cols;
    double dram = 0, prev_bytes = 0, prev_tiles = 0;
    for (std::int64_t start = 0; start < m_t * n_t; start += sms) {
      const std::int64_t end = std::min<std::int64_t>(start + sms, m_t * n_t);
      std::set<std::int64_t> rows, cols;
      for (std::int64_t pid = start; pid < end; ++pid) {
        const auto [row, col] = tile_of(pid, m_t, n_t, g);
        rows.insert(row);
        cols.insert(col);
      }
      double bytes = 0, fresh = 0, shared = 0;
      for (std::int64_t row : rows) {
        bytes += a_bytes(row);
        if (!seen_rows.count(row)) fresh += a_bytes(row);
        else if (prev_rows.count(row)) shared += a_bytes(row);
      }
      for (std::int64_t col : cols) {
        bytes += b_bytes(col);
        if (!seen_cols.count(col)) fresh += b_bytes(col);
        else if (prev_cols.count(col)) shared += b_bytes(col);
      }
      const double older = bytes - fresh - shared;
      // The panels by the capacity their copies take: a wave's A panels are read by its CTAs over
      // its rows on average, its B panels by its CTAs over its columns.
      double a_sum = 0, b_sum = 0;
      for (std::int64_t row : rows) a_sum += a_bytes(row);
      for (std::int64_t col : cols) b_sum += b_bytes(col);
      const double n = static_cast<double>(end - start);
      const double capacity = a_sum * (1 - std::pow(2.0, -(n / static_cast<double>(rows.size()) + 1))) +
                              b_sum * (1 - std::pow(2.0, -(n / static_cast<double>(cols.size()) + 1)));
      const double d0 = prev_bytes + prev_tiles, d1 = capacity + prev_tiles;
      dram += start == 0 ? bytes
                         : fresh + shared * (1 - mean_llc_survival(d0, d1, llc)) +
                               older * (1 - mean_llc_survival(d0 + prev_bytes, d1 + prev_bytes, llc));
      seen_rows.insert(rows.begin(), rows.end());
      seen_cols.insert(cols.begin(), cols.end());
      prev_rows = rows;
      prev_cols = cols;
      prev_bytes = capacity;
      prev_tiles = static_cast<double>((end - start) * s.block_m * s.block_n * 2);
    }
    const double lockstep = r.gemm.lockstep_read_bytes;
    ASSERT_NEAR(lockstep, dram, 1e-9 * dram) << s.m << " " << s.n << " " << s.k << " " << sms << " " << llc;
    ASSERT_GE(lockstep, r.dram_ideal_read_bytes * (1 - 1e-12));
    ASSERT_LE(lockstep, r.dram_wave_read_bytes * (1 + 1e-12));
    // The drift moves the reads from the lockstep value toward the out-of-step bound, never past it.
    ASSERT_GE(r.dram_read_bytes, lockstep);
    ASSERT_LE(r.dram_read_bytes, std::max(lockstep, r.gemm.staggered_read_bytes) * (1 + 1e-12));
  }
}

// CTAs per SM follow from shared memory: Triton's 128x128x64 in 3 stages takes 3 x 32 KiB of A
// and B tiles and 24 B of mbarriers, 98328 B (ncu's launch__shared_mem_per_block_dynamic in
// validation/h200/gemm_ncu.csv); with the 1 KiB the runtime reserves, two fit 228 KiB. 128x256
// (147480 B) fits once, as ncu's launch__occupancy_limit_shared_mem says for both.
TEST(GemmModel, CtasPerSmFromSharedMemory) {
  AnalyticalGpu gpu = h800();
  gpu.smem_per_sm = 233472;
  const AnalyticalResult r = analyze_gemm(gpu, gemm(4096, 4096, 4096));
  EXPECT_EQ(r.gemm.smem_bytes, 98328);
  EXPECT_EQ(r.gemm.ctas_per_sm, 2);
  EXPECT_EQ(r.ctas_per_wave, 264);
  EXPECT_EQ(r.waves, 4);
  GemmShape wide = gemm(4096, 4096, 4096);
  wide.block_n = 256;
  const AnalyticalResult w = analyze_gemm(gpu, wide);
  EXPECT_EQ(w.gemm.smem_bytes, 147480);
  EXPECT_EQ(w.gemm.ctas_per_sm, 1);
  // Without the GPU's shared memory: one CTA per SM, as before.
  EXPECT_EQ(analyze_gemm(h800(), gemm(4096, 4096, 4096)).ctas_per_wave, 132);
}

// An H200-like GPU: 132 SMs, 228 KiB of shared memory per SM, a 30 MiB effective LLC, the L2
// rate per SM left unknown (gemm_model.cpp then takes bandwidth.csv's 34.8 B per SM cycle).
AnalyticalGpu h200_like() {
  AnalyticalGpu gpu = h800();
  gpu.l2_bytes = 60.0 * 1024 * 1024;
  gpu.smem_per_sm = 233472;
  return gpu;
}

GemmShape tiled(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t bm, std::int64_t bn,
                std::int64_t stages) {
  GemmShape s = gemm(m, n, k);
  s.block_m = bm;
  s.block_n = bn;
  s.stages = stages;
  return s;
}

// The memory-paced share of a k-step: the tile's MMA cycles per k-step, 2 BM BN BK / 4096,
// against its TMA bytes per k-step, (BM + BN) BK 2, at 34.8 B per SM cycle.
// 128x128x64: 512 cycles against 32768 / 34.8 = 941.6: e = 1 - 512 x 34.8 / 32768 = 0.45625.
// 64x128x64: 256 against 24576 / 34.8: e = 1 - 256 x 34.8 / 24576 = 0.6375.
// 128x256x64: 1024 against 49152 / 34.8: e = 0.275. FP8 halves both: 128x128 keeps 0.45625.
// A GPU whose L2 gives each SM 64 B a cycle (132 SMs at 1830 MHz: 15.46 TB/s) feeds 128x128 as
// fast as its tensor core eats it: e = 0, and its CTAs keep step.
TEST(GemmModel, MemoryPacedShareOfTheTile) {
  const AnalyticalGpu gpu = h200_like();
  EXPECT_NEAR(analyze_gemm(gpu, tiled(8192, 8192, 8192, 128, 128, 3)).gemm.memory_paced_share, 0.45625, 1e-12);
  EXPECT_NEAR(analyze_gemm(gpu, tiled(8192, 8192, 8192, 64, 128, 4)).gemm.memory_paced_share, 0.6375, 1e-12);
  EXPECT_NEAR(analyze_gemm(gpu, tiled(8192, 8192, 8192, 128, 256, 3)).gemm.memory_paced_share, 0.275, 1e-12);
  GemmShape fp8 = tiled(8192, 8192, 8192, 128, 128, 3);
  fp8.dtype = GemmDtype::fp8;
  fp8.elem_bytes = 1;
  EXPECT_NEAR(analyze_gemm(gpu, fp8).gemm.memory_paced_share, 0.45625, 1e-12);
  AnalyticalGpu fast_l2 = gpu;
  fast_l2.l2_bandwidth = 64.0 * 132 * 1830e6;
  const AnalyticalResult fed = analyze_gemm(fast_l2, tiled(8192, 8192, 8192, 128, 128, 3));
  EXPECT_NEAR(fed.gemm.memory_paced_share, 0, 1e-12);
  ASSERT_EQ(fed.gemm.ctas_per_sm, 2);
  EXPECT_EQ(fed.gemm.out_of_step_share, 0);
  EXPECT_EQ(fed.dram_read_bytes, fed.gemm.lockstep_read_bytes);
}

// configs/h200.toml's [gpu] as the analytical model reads it: 132 SMs at 1980 MHz, 60 MiB of L2
// in two partitions, 4.8 TB/s of DRAM, 228 KiB of shared memory, the L2 rate per SM unknown
// (34.8 B per SM cycle). DRAM per SM cycle: 4.8e12 / (132 x 1.98e9) = 18.3655 B.
AnalyticalGpu h200_manifest() {
  AnalyticalGpu gpu = h200_like();
  gpu.clock_mhz = 1980;
  gpu.dram_bandwidth = 4.8e12;
  return gpu;
}

// The DRAM's load per byte read for a 64x128x64 (or 128x128x64) launch: its ctas x k_t k-steps,
// each SM completing one every pace cycles (the L2's: 24576 / 34.8 = 706.207 cycles at 64x128,
// 32768 / 34.8 = 941.609 at 128x128), against 18.3655 DRAM bytes per SM cycle.
double h200_load_per_byte(std::int64_t ctas, std::int64_t k_t, double pace_cycles) {
  return 1 / (static_cast<double>(ctas * k_t) * pace_cycles * 4.8e12 / (132 * 1.98e9));
}

// The escape recurrence of gemm_model.cpp's out_of_step_share, written out wave by wave: the rate
// into wave w is h_w = 0.15 exp(-(1 - rho) (76 / (e k_t))^2), rho = min(1, the DRAM's load at the
// reads of the share escaped by wave w - 1); a CTA of wave w has escaped with probability
// 1 - exp(-(h_1 + ... + h_w)), and the share is over the launch's CTAs.
double drift_share(const AnalyticalResult& r, std::int64_t k_t, double load_per_byte) {
  const double e = r.gemm.memory_paced_share;
  const double barrier_sq = std::pow(76 / (e * static_cast<double>(k_t)), 2);
  const double lock = r.gemm.lockstep_read_bytes;
  const double extra = r.gemm.staggered_read_bytes - lock;
  double hazard = 0, escaped = 0, sum = 0;
  for (std::int64_t w = 1; w < r.waves; ++w) {
    const double rho = std::min(1.0, (lock + escaped * extra) * load_per_byte);
    hazard += 0.15 * std::exp(-(1 - rho) * barrier_sq);
    escaped = 1 - std::exp(-hazard);
    const std::int64_t ctas = w < r.waves - 1 ? r.ctas_per_wave : r.ctas - (r.waves - 1) * r.ctas_per_wave;
    sum += static_cast<double>(ctas) * escaped;
  }
  return sum / static_cast<double>(r.ctas);
}

// Two CTAs per SM drift out of step (gemm_model.cpp: out_of_step_share). 8192^3 at 64x128x64 in 4
// stages runs 2 per SM: 8192 CTAs in waves of 264, 31 full ones and a last of 8, k_t = 128,
// e k_t = 0.6375 x 128 = 81.6 k-steps, (76 / 81.6)^2 = 0.867455. The lockstep reads (each wave
// fetches B again), 4338.4 MB, load the DRAM to rho = 4.3384e9 / (8192 x 128 x 706.207 x 18.3655)
// = 0.31901: the first rate is 0.15 exp(-(1 - 0.31901) 0.867455) = 0.083088. The out-of-step bound
// (each tile row fetches all of B), 17314 MB, would load it to 1.2731: as CTAs escape the rate
// climbs toward 0.15, and the launch takes 0.71030 of the way (a constant 0.083088 would take
// 0.6265). The reads land at 13555 MB, loading the DRAM to 0.99671 (ncu: 15282 MB). The same shape
// at 128x256 (one per SM) keeps the lockstep reads.
TEST(GemmModel, TwoCtasPerSmDriftOneStaysInStep) {
  const AnalyticalGpu gpu = h200_manifest();
  const AnalyticalResult two = analyze_gemm(gpu, tiled(8192, 8192, 8192, 64, 128, 4));
  ASSERT_EQ(two.gemm.ctas_per_sm, 2);
  ASSERT_EQ(two.waves, 32);
  const double load_per_byte = h200_load_per_byte(8192, 128, 24576 / 34.8);
  EXPECT_NEAR(two.gemm.lockstep_read_bytes * load_per_byte, 0.319007, 5e-6);
  EXPECT_NEAR(two.gemm.staggered_read_bytes * load_per_byte, 1.273109, 5e-6);
  EXPECT_NEAR(0.15 * std::exp(-(1 - 0.319007) * std::pow(76 / (0.6375 * 128), 2)), 0.083088, 5e-6);
  const double share = drift_share(two, 128, load_per_byte);
  EXPECT_NEAR(two.gemm.out_of_step_share, share, 1e-12);
  EXPECT_NEAR(share, 0.710300, 5e-6);
  EXPECT_NEAR(two.gemm.dram_load, two.dram_read_bytes * load_per_byte, 1e-12);
  EXPECT_NEAR(two.gemm.dram_load, 0.996706, 5e-6);
  // Past the cliff: more than the lockstep value, no more than the out-of-step bound.
  EXPECT_GT(two.gemm.staggered_read_bytes, 2 * two.gemm.lockstep_read_bytes);
  EXPECT_NEAR(two.dram_read_bytes,
              two.gemm.lockstep_read_bytes +
                  share * (two.gemm.staggered_read_bytes - two.gemm.lockstep_read_bytes),
              1);
  EXPECT_GT(two.dram_read_bytes, two.gemm.lockstep_read_bytes);
  EXPECT_LT(two.dram_read_bytes, two.gemm.staggered_read_bytes);
  // The survival and regime stay the lockstep waves'.
  EXPECT_EQ(two.reuse_survival, reuse_survival(two.dram_ideal_read_bytes, two.dram_wave_read_bytes,
                                               two.gemm.lockstep_read_bytes));
  // One CTA per SM: no drift, the lockstep reads exactly (ncu's 128x256 points, to the MB), though
  // the tile is memory-paced too (e = 0.275).
  const AnalyticalResult one = analyze_gemm(gpu, tiled(8192, 8192, 8192, 128, 256, 3));
  ASSERT_EQ(one.gemm.ctas_per_sm, 1);
  EXPECT_GT(one.gemm.memory_paced_share, 0);
  EXPECT_EQ(one.gemm.out_of_step_share, 0);
  EXPECT_EQ(one.dram_read_bytes, one.gemm.lockstep_read_bytes);
  EXPECT_GT(one.gemm.staggered_read_bytes, one.dram_read_bytes);
  // One wave: nothing to drift from.
  const AnalyticalResult single = analyze_gemm(gpu, gemm(2048, 2048, 8192));
  ASSERT_EQ(single.waves, 1);
  EXPECT_EQ(single.dram_read_bytes, single.gemm.lockstep_read_bytes);
}

// The DRAM's load feeds the drift. The same 8192^3 at 64x128 with the DRAM 100 times faster loads
// it to at most 0.0127: the rate stays near 0.15 exp(-0.867455) = 0.063003 a wave, whose geometric
// series takes 0.54693 of the way; the load's little feedback makes it 0.54857. With the DRAM ten
// times slower the lockstep reads already saturate it (rho = 3.19): the rate is 0.15 from the
// first boundary, 0.77084. Between the two the share grows as the DRAM slows.
TEST(GemmModel, DriftFeedsOnTheDramsLoad) {
  const GemmShape s = tiled(8192, 8192, 8192, 64, 128, 4);
  auto constant_rate_share = [](double h) {
    // 264 CTAs in each of waves 1..30, 8 in wave 31, of 8192.
    double escaped = 8 * (1 - std::exp(-31 * h));
    for (int w = 1; w <= 30; ++w) escaped += 264 * (1 - std::exp(-w * h));
    return escaped / 8192;
  };
  AnalyticalGpu fast = h200_manifest();
  fast.dram_bandwidth *= 100;
  const double idle_rate = 0.15 * std::exp(-std::pow(76 / (0.6375 * 128), 2));
  EXPECT_NEAR(idle_rate, 0.063003, 5e-6);
  const AnalyticalResult idle = analyze_gemm(fast, s);
  EXPECT_NEAR(idle.gemm.out_of_step_share,
              drift_share(idle, 128, h200_load_per_byte(8192, 128, 24576 / 34.8) / 100), 1e-12);
  EXPECT_NEAR(idle.gemm.out_of_step_share, 0.548574, 5e-6);
  EXPECT_NEAR(constant_rate_share(idle_rate), 0.546929, 5e-6);
  EXPECT_GT(idle.gemm.out_of_step_share, constant_rate_share(idle_rate));
  AnalyticalGpu slow = h200_manifest();
  slow.dram_bandwidth /= 10;
  const AnalyticalResult saturated = analyze_gemm(slow, s);
  EXPECT_GT(saturated.gemm.lockstep_read_bytes * h200_load_per_byte(8192, 128, 24576 / 34.8) * 10, 1);
  EXPECT_NEAR(saturated.gemm.out_of_step_share, constant_rate_share(0.15), 1e-12);
  EXPECT_NEAR(saturated.gemm.out_of_step_share, 0.770843, 5e-6);
  double previous = 0;
  for (double bandwidth : {480e12, 48e12, 9.6e12, 4.8e12, 2.4e12, 0.48e12}) {
    AnalyticalGpu gpu = h200_manifest();
    gpu.dram_bandwidth = bandwidth;
    const double share = analyze_gemm(gpu, s).gemm.out_of_step_share;
    EXPECT_GT(share, previous) << bandwidth;
    previous = share;
  }
}

// Where the out-of-step bound outruns the DRAM the escape runs away; where it does not, the
// feedback stays mild. 4096x14336x4096 on the H200 reads each wave's B again in lockstep, and all
// of B per tile row out of step. At 64x128 (28 waves, k_t = 64, e k_t = 40.8) B is two thirds of
// the L2 traffic and the out-of-step bound would load the DRAM to 1.2689; the lockstep reads load
// it to 0.5478, a first rate of 0.15 exp(-(1 - 0.5478) 3.4698) = 0.031233, and the drift takes
// 0.51293 of the way, against 0.315 at that constant rate (ncu: 0.70; the model before the load,
// 0.19). At 128x128 (14 waves, e k_t = 29.2) the bound would load it to 0.9559, never past the
// DRAM; the rate starts at 0.0030799 and the drift takes 0.019985 (ncu: 0.00).
TEST(GemmModel, DriftRunsAwayWhereTheOutOfStepReadsOutrunTheDram) {
  const AnalyticalGpu gpu = h200_manifest();
  const AnalyticalResult narrow = analyze_gemm(gpu, tiled(4096, 14336, 4096, 64, 128, 4));
  ASSERT_EQ(narrow.waves, 28);
  const double narrow_load = h200_load_per_byte(narrow.ctas, 64, 24576 / 34.8);
  EXPECT_NEAR(narrow.gemm.lockstep_read_bytes * narrow_load, 0.547767, 5e-6);
  EXPECT_NEAR(narrow.gemm.staggered_read_bytes * narrow_load, 1.268879, 5e-6);
  EXPECT_NEAR(narrow.gemm.out_of_step_share, drift_share(narrow, 64, narrow_load), 1e-12);
  EXPECT_NEAR(narrow.gemm.out_of_step_share, 0.512926, 5e-6);
  const AnalyticalResult square = analyze_gemm(gpu, tiled(4096, 14336, 4096, 128, 128, 3));
  ASSERT_EQ(square.waves, 14);
  const double square_load = h200_load_per_byte(square.ctas, 64, 32768 / 34.8);
  EXPECT_NEAR(square.gemm.lockstep_read_bytes * square_load, 0.426396, 5e-6);
  EXPECT_NEAR(square.gemm.staggered_read_bytes * square_load, 0.955889, 5e-6);
  EXPECT_NEAR(square.gemm.out_of_step_share, drift_share(square, 64, square_load), 1e-12);
  EXPECT_NEAR(square.gemm.out_of_step_share, 0.019985, 5e-6);
}

// The first wave starts in step and the last may be partly empty: the share is over CTAs, not the
// last wave's. 2048x2048x16384 at 64x128 (k_t = 256): 512 CTAs, 264 in the first wave, 248 in the
// second. The lockstep reads, 203.42 MB, load the DRAM to 203423744 / (512 x 256 x 706.207 x
// 18.3655) = 0.11966, so a second-wave CTA has escaped with probability 1 - exp(-h), h = 0.15
// exp(-(1 - 0.11966) (76 / (0.6375 x 256))^2) = 0.123931, 0.116557, and the launch's share is
// 248 / 512 of that, 0.056458 (ncu: 0.033 of the way; the model before the weighting took 0.07
// for the whole launch, +27%).
TEST(GemmModel, DriftCountsTheLockstepFirstWaveAndThePartlyEmptyLast) {
  const AnalyticalGpu gpu = h200_manifest();
  const AnalyticalResult r = analyze_gemm(gpu, tiled(2048, 2048, 16384, 64, 128, 4));
  ASSERT_EQ(r.ctas, 512);
  ASSERT_EQ(r.waves, 2);
  EXPECT_EQ(r.gemm.lockstep_read_bytes, 203423744);
  const double rho = 203423744 * h200_load_per_byte(512, 256, 24576 / 34.8);
  EXPECT_NEAR(rho, 0.119662, 5e-6);
  const double second_wave = 1 - std::exp(-0.15 * std::exp(-(1 - rho) * std::pow(76 / (0.6375 * 256), 2)));
  EXPECT_NEAR(second_wave, 0.116557, 5e-6);
  EXPECT_NEAR(r.gemm.out_of_step_share, 248.0 / 512 * second_wave, 1e-12);
  EXPECT_NEAR(r.gemm.out_of_step_share, 0.056458, 5e-6);
}

// Short CTAs stay in step however many waves they run: their spread, e k_t = 0.6375 x 32 = 20.4
// k-steps, is about a quarter of the 76-k-step barrier, (76 / 20.4)^2 = 13.879. 8192^2 x 2048 at
// 64x128 (32 waves, the last of 8) loads the DRAM to 0.2176 in lockstep: a rate of 2.883e-6 a wave,
// 4.3e-5 of the way over the launch (ncu: none). 16384^2 x 2048 (125 waves, the last of 32) loads it
// to 0.6199, a rate of 7.67e-4, and the escaped CTAs' re-fetches feed it: 0.0673 of the way (ncu:
// 0.06). Twice the k-steps (8192 x 8192 x 4096: e k_t = 40.8) escape at 0.014105 from the first
// boundary, 0.317 of the way over 32 waves (ncu: 0.49).
TEST(GemmModel, ShortCtasStayInStepOverManyWaves) {
  const AnalyticalGpu gpu = h200_manifest();
  const AnalyticalResult square = analyze_gemm(gpu, tiled(8192, 8192, 2048, 64, 128, 4));
  ASSERT_EQ(square.waves, 32);
  EXPECT_NEAR(square.gemm.out_of_step_share, 4.33011e-5, 5e-10);
  const AnalyticalResult wide = analyze_gemm(gpu, tiled(16384, 16384, 2048, 64, 128, 4));
  ASSERT_EQ(wide.waves, 125);
  EXPECT_NEAR(wide.gemm.out_of_step_share, drift_share(wide, 32, h200_load_per_byte(wide.ctas, 32, 24576 / 34.8)),
              1e-12);
  EXPECT_NEAR(wide.gemm.out_of_step_share, 0.0673111, 5e-7);
  EXPECT_NEAR(analyze_gemm(gpu, tiled(8192, 8192, 4096, 64, 128, 4)).gemm.out_of_step_share, 0.317326, 5e-6);
}

// On H800 a 2048^3 GEMM's first wave (132 tiles of a 16 x 16 grid: 9 A and 16 B panels of
// 128 x 2048 x 2 = 512 KiB, plus 132 C tiles of 32 KiB) holds 17.2 MB < 26.2 MB: ideal. At 8192^3
// the first wave reads all 64 B panels (2 MiB each), and B crosses DRAM again every wave.
TEST(GemmModel, IdealWhilePanelsFitRefetchedBeyond) {
  const AnalyticalResult fits = analyze_gemm(h800(), gemm(2048, 2048, 2048));
  EXPECT_EQ(fits.gemm.wave_a_panels, 9);
  EXPECT_EQ(fits.gemm.wave_b_panels, 16);
  EXPECT_EQ(fits.working_set_bytes, 25 * 524288.0 + 132 * 32768.0);
  EXPECT_EQ(fits.regime, Regime::ideal);
  EXPECT_EQ(fits.dram_bytes(), fits.dram_ideal_bytes());
  const AnalyticalResult spills = analyze_gemm(h800(), gemm(8192, 8192, 8192));
  // Only the last wave's 4 CTAs re-use a little: 5 MiB of panels after a 138 MiB wave.
  EXPECT_LT(spills.reuse_survival, 0.01);
  EXPECT_GT(spills.dram_bytes(), spills.dram_ideal_bytes());
  // The grouped raster touches fewer panels per wave and re-streams less.
  const AnalyticalResult grouped = analyze_gemm(h800(), gemm(8192, 8192, 8192, Raster::grouped));
  EXPECT_LT(grouped.dram_bytes(), spills.dram_bytes());
}

}  // namespace
}  // namespace simfa::analytical
