// Issue 5's memory checks: LLC traffic is fixed by the tiling, and GEMM DRAM reads lie between
// the compulsory footprint and the LLC bytes. Every expected count below is worked by hand from
// the tiling (the paper's section III-C: tiles per CTA x tile bytes, TMA boxes clipped at the
// tensor's edge), never taken from the simulator or the analytical model. docs/crosscheck.md.
//
// configs/h800.toml with coalescer.none, so every 128-byte line request the TMA units send
// (docs/workloads.md) arrives at the L2; 16 SMs keep the runs short (the SM count moves CTAs
// between SMs, not bytes).
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "crosscheck.h"

namespace simfa::crosscheck {
namespace {

const std::vector<kernel::Override> kNoCoalescer = no_coalescer({{"gpu.sm_count", "16"}});

void expect_llc(const std::string& workload, std::uint64_t reads, std::uint64_t writes) {
  const SimTotals t = simulate(kNoCoalescer, workload);
  ASSERT_TRUE(t.completed) << workload;
  EXPECT_EQ(t.llc_read_bytes, reads) << workload;
  EXPECT_EQ(t.llc_write_bytes, writes) << workload;
}

// ---- GEMM: A row panel per tile row, B column panel per tile column -----------------------
// Each of the n_t CTAs of a tile row loads its A panel (block_m x K, clipped at M), each of the
// m_t CTAs of a tile column its B panel (K x block_n, clipped at N): n_t M K e + m_t K N e read
// bytes; C is stored once, M N 2.

TEST(LlcTiling, Gemm512Cubed) {
  // 128x128x64 tiles: m_t = n_t = 4, 8 k-tiles. A: 4 x 512 x 512 x 2 = 2097152; B the same.
  // C: 512 x 512 x 2 = 524288.
  expect_llc("gemm:m=512,n=512,k=512", 2097152 + 2097152, 524288);
}

TEST(LlcTiling, GemmClippedInEveryDimension) {
  // 1000 x 704 x 576 with block_k 128, grouped raster: m_t = ceil(1000/128) = 8 (the last tile
  // row holds 104 rows), n_t = ceil(704/128) = 6 (the last column 64 wide), k_t = ceil(576/128)
  // = 5 (the last k-tile 64 wide). Every row is whole lines (A and B rows 576 x 2 = 1152 bytes
  // = 9 lines, C rows 704 x 2 = 1408 = 11 lines; box rows 256 or 128 bytes at line offsets).
  // A: 6 x 1000 x 576 x 2 = 6912000; B: 8 x 704 x 576 x 2 = 6488064; C: 1000 x 704 x 2 = 1408000.
  expect_llc("gemm:m=1000,n=704,k=576,block_k=128,raster=grouped", 6912000 + 6488064, 1408000);
}

TEST(LlcTiling, GemmWarpSpecializedWithKxNB) {
  // 384 x 640 x 192, B stored K x N: m_t = 3, n_t = 5, k_t = 3. A: 5 x 384 x 192 x 2 = 737280;
  // B: 3 x 192 x 640 x 2 = 737280; C (two consumers, 64 rows each): 384 x 640 x 2 = 491520.
  expect_llc("gemm:m=384,n=640,k=192,warp_specialized=true,b_layout=kn", 737280 + 737280, 491520);
}

TEST(LlcTiling, GemmFp8) {
  // FP8 (1 byte), block_k 128: m_t = 4, n_t = 3. A: 3 x 512 x 1024 = 1572864; B: 4 x 384 x 1024
  // = 1572864; C (2-byte): 512 x 384 x 2 = 393216.
  expect_llc("gemm:m=512,n=384,k=1024,block_k=128,dtype=fp8", 1572864 + 1572864, 393216);
}

TEST(LlcTiling, GemmBoxRowsOfHalfALineCostAWholeLine) {
  // FP8 with block_k 64: every box row is 64 bytes, half a line, and the L2 sees whole-line
  // requests (tma.traffic: line_bytes 128; per-op dedup cannot merge rows 512 bytes apart). So
  // the count derived from the tiling is in lines: 256 x 256 x 512, m_t = n_t = 2, 8 k-tiles;
  // A: n_t x 256 rows x 8 k-tiles = 4096 lines = 524288 bytes, twice its 262144 in-bounds
  // bytes; B the same. C rows 512 bytes, whole lines: 256 x 256 x 2 = 131072.
  expect_llc("gemm:m=256,n=256,k=512,dtype=fp8", 524288 + 524288, 131072);
}

// ---- FA3: each CTA loads its Q tile and streams the K and V tiles its mask allows -----------
// Q, K, V, O rows are head_dim x 2 = 256 bytes, two whole lines; a CTA loads its Q tile
// (block_m rows clipped at seqlen_q), and block_n-row K and V tiles clipped at seqlen_k.

TEST(LlcTiling, Fa3Gqa) {
  // B 1, H 4, Hkv 2, L = S = 256, 128x176 tiles: n_m = 2, n_n = 2 (176 + 80 rows), 8 CTAs.
  // Q: 4 x 256 rows x 256 B = 262144. K/V: each CTA 256 rows of K and of V, 8 x 2 x 256 x 256
  // = 1048576. O: 262144.
  expect_llc("fa3:heads=4,kv_heads=2,seqlen=256", 262144 + 1048576, 262144);
}

TEST(LlcTiling, Fa3SeqlenNotAMultipleOfTheTiles) {
  // B 2, H 4, Hkv 1, L = S = 600: n_m = 5 (the last Q tile 88 rows), n_n = 4 (3 x 176 + 72),
  // 40 CTAs. Q: 2 x 4 x 600 x 256 = 1228800. K/V: 40 CTAs x 2 x 600 rows x 256 = 12288000.
  expect_llc("fa3:batch=2,heads=4,kv_heads=1,seqlen=600", 1228800 + 12288000, 1228800);
}

TEST(LlcTiling, Fa3Causal) {
  // H = Hkv = 2, L = S = 1024, causal: block_n 128 (FA3's causal kBlockN), n_m = n_n = 8. Q tile
  // m sees keys [0, 128 (m+1)): m+1 K/V tiles, 1 + ... + 8 = 36 tiles = 4608 rows per head.
  // Q: 2 x 1024 x 256 = 524288; K/V: 2 heads x 2 x 4608 x 256 = 4718592; O: 524288.
  expect_llc("fa3:heads=2,seqlen=1024,causal=true", 524288 + 4718592, 524288);
}

TEST(LlcTiling, Fa3CausalWithQTilesThatSeeNoKey) {
  // H 2, Hkv 1, L = 640 > S = 256, causal, block_n 128: row i sees keys up to i - 384. Q tile m
  // sees clamp(128 (m+1) - 384, 0, 256) keys: 0, 0, 0, 128, 256, i.e. 0+0+0+1+2 K/V tiles =
  // 384 rows per head. Tiles 0-2 load nothing (FA3 skips their mainloop) and store zeros.
  // Q: 2 heads x 256 rows x 256 = 131072; K/V: 2 x 2 x 384 x 256 = 393216; O: 2 x 640 x 256.
  expect_llc("fa3:heads=2,kv_heads=1,seqlen_q=640,seqlen_k=256,causal=true", 131072 + 393216, 327680);
}

TEST(LlcTiling, Fa3CausalRectangularWithWideKvTiles) {
  // H = Hkv = 3, L = 300 < S = 700, causal, block_n 176 given: row i sees keys up to i + 400.
  // n_m = 3, n_n = 4 (3 x 176 + 172). Q tile 0 needs 528 keys: 3 tiles, 528 rows; tiles 1 and
  // 2 need 656 and 700 keys: 4 tiles clipped at 700 rows. 1928 rows per head.
  // Q: 3 x 300 x 256 = 230400; K/V: 3 x 2 x 1928 x 256 = 2961408; O: 230400.
  expect_llc("fa3:heads=3,seqlen_q=300,seqlen_k=700,causal=true,block_n=176", 230400 + 2961408, 230400);
}

TEST(LlcTiling, Fa3CudnnPersistentGridLoadsTheSameTiles) {
  // kernel = cudnn: 16 persistent CTAs (gpu.sm_count) take the tiles in turns; each tile loads
  // what it loads with a CTA of its own, so the counts are Fa3Gqa's and Fa3Causal's (block_n 128
  // both ways). The runs also prove the Q slot and the rings pass from tile to tile.
  expect_llc("fa3:kernel=cudnn,heads=4,kv_heads=2,seqlen=256", 262144 + 1048576, 262144);
  expect_llc("fa3:kernel=cudnn,heads=2,seqlen=1024,causal=true", 524288 + 4718592, 524288);
  // 128 tiles on 16 CTAs, 8 a CTA: Q 16 heads x 1024 rows x 256 B = 4194304; K/V: each tile
  // reads all 1024 rows of K and of V, 128 x 1024 x 256 x 2 = 67108864; O as Q.
  expect_llc("fa3:kernel=cudnn,heads=16,kv_heads=4,seqlen=1024", 4194304 + 67108864, 4194304);
}

// ---- GEMM DRAM reads: compulsory footprint <= DRAM <= LLC ----------------------------------

struct DramCase {
  const char* workload;
  std::uint64_t footprint;  ///< A and B bytes, each line once
};
// The footprints: (M K + K N) e. All rows are whole lines, so bytes = lines x 128.
constexpr DramCase kDramCases[] = {
    {"gemm:m=512,n=512,k=512", (512 * 512 + 512 * 512) * 2},                         // 1048576
    {"gemm:m=1000,n=704,k=576,block_k=128,raster=grouped", (1000 * 576 + 576 * 704) * 2},  // 1963008
    {"gemm:m=384,n=640,k=192,warp_specialized=true,b_layout=kn", (384 * 192 + 192 * 640) * 2},  // 393216
    {"gemm:m=512,n=384,k=1024,block_k=128,dtype=fp8", 512 * 1024 + 1024 * 384},       // 917504
};

void expect_dram_between(const std::vector<kernel::Override>& sets, const DramCase& c, bool fits) {
  const SimTotals t = simulate(sets, c.workload);
  ASSERT_TRUE(t.completed) << c.workload;
  EXPECT_GE(t.dram_read_bytes, c.footprint) << c.workload;
  EXPECT_LE(t.dram_read_bytes, t.llc_read_bytes) << c.workload;
  if (fits) {
    EXPECT_LE(static_cast<double>(t.dram_read_bytes), 1.05 * static_cast<double>(c.footprint))
        << c.workload << ": operands fit the L2, DRAM reads should be the footprint";
  }
}

TEST(GemmDram, WithinFivePercentOfTheFootprintWhenOperandsFitTheL2) {
  // configs/h800.toml as it stands (LRC coalescer, 50 MiB remote-copy L2, HBM3): operands of at
  // most 2 MB fit many times over.
  for (const DramCase& c : kDramCases) expect_dram_between({{"gpu.sm_count", "16"}}, c, true);
  // Without the coalescer the L2 sees more requests, not more misses.
  for (const DramCase& c : kDramCases) expect_dram_between(kNoCoalescer, c, true);
}

TEST(GemmDram, BetweenFootprintAndLlcWhenTheL2IsTooSmall) {
  // A 1280 KiB L2 (160 slices x 16 ways x 128 B x 4 sets) cannot hold the 1.96 MB of A and B of
  // the clipped GEMM, whose CTAs read 13.4 MB from it: panels are fetched again, but never
  // more often than CTAs ask for them.
  const DramCase& c = kDramCases[1];
  const auto sets = no_coalescer({{"gpu.sm_count", "16"}, {"memory.l2.size", "1280KiB"}});
  expect_dram_between(sets, c, false);
  const SimTotals t = simulate(sets, c.workload);
  EXPECT_GT(t.dram_read_bytes, c.footprint + c.footprint / 20) << "the small L2 should re-fetch";
}

}  // namespace
}  // namespace simfa::crosscheck
