// workload.gemm: the per-CTA programs instruction by instruction, the raster orders, real
// addresses shared between CTAs, the bytes the tiling loads, parameter checks.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gemm_kernel.h"
#include "gemm_source.h"
#include "simfa/error.h"
#include "support/null_build_context.h"
#include "support/program_listing.h"

namespace simfa::gemm {
namespace {

using test::Keys;
using test::listing;
using test::repeat;

/// Builds a GemmSource from `keys`, each given on its own line of "w.toml" (line 2 + its index),
/// as the manifest loader would hand them over. make(): the program's structure, without the
/// measured costs of Triton's mbarrier inits and store wait; make_as_triton(): the schema's
/// defaults, with them.
struct Harness : test::NullBuildContext {
  std::unique_ptr<GemmSource> make(Keys keys) {
    keys.insert(keys.end(), {{"mbarrier_init_cycles", ParamValue{std::int64_t{0}}},
                             {"tma_store_wait_bytes_per_cycle", ParamValue{0.0}}});
    return make_as_triton(keys);
  }
  std::unique_ptr<GemmSource> make_as_triton(const Keys& keys) {
    return build<GemmSource>(keys, ParamValue{std::int64_t{0}});
  }
};

ParamValue i64(std::int64_t v) {
  return ParamValue{v};
}

TEST(GemmProgram, NonWarpSpecialized256x256x128IsTheHandWrittenPipeline) {
  Harness h;
  auto source = h.make_as_triton({{"m", i64(256)}, {"n", i64(256)}, {"k", i64(128)}});
  ASSERT_EQ(source->cta_count(), 4u);
  CtaProgram p;
  source->build(1, p);  // row-major: tile row 0, tile column 1
  EXPECT_EQ(p.cta_id, 1u);
  EXPECT_EQ(p.stage_count, 3u);
  EXPECT_EQ(p.consumers_per_stage, 1u);
  // 3 x (A + B tile) + 3 mbarriers; the C tile reuses the ring (Triton reported 98328).
  EXPECT_EQ(p.smem_bytes, 3 * (16384 + 16384) + 3 * 8);
  ASSERT_EQ(p.warpgroups.size(), 1u);
  EXPECT_EQ(p.warpgroups[0].registers, 168u * 128);  // 128 accumulators + 40

  // Three mbarrier inits of 177 cycles; two k-tiles of 64 with three stages: both are loaded
  // before the first WGMMA; every iteration keeps one group in flight, the first too.
  std::vector<std::string> expected = {"BUBBLE 531",           "TMA_LOAD A 0,0 s0",
                                       "TMA_LOAD B 0,128 s0",  "TMA_LOAD A 64,0 s1",
                                       "TMA_LOAD B 64,128 s1", "MB_WAIT 0"};
  repeat(expected, 8, "WGMMA 64,128,16 gid 0");  // 2 m64 rows x 1 n128 x 4 k16
  expected.insert(expected.end(), {"WGMMA_COMMIT 0", "WGMMA_WAIT 1", "MB_WAIT 1"});
  repeat(expected, 8, "WGMMA 64,128,16 gid 1");
  // The epilogue converts and writes 128 x 128 accumulators: 2 x 16384 / 128 cycles; the store's
  // wait drains its 32 KiB at 36 B a cycle.
  expected.insert(expected.end(),
                  {"WGMMA_COMMIT 1", "WGMMA_WAIT 1", "WGMMA_WAIT 0",
                   "BUBBLE 0 fp32 0 alu 24576 sfu 0", "TMA_STORE C 128,0", "BUBBLE 911", "EXIT"});
  EXPECT_EQ(listing(p.warpgroups[0], p, source->tensor_maps()), expected);

  const auto& maps = source->tensor_maps();
  ASSERT_EQ(maps.size(), 3u);
  EXPECT_EQ(maps[0].name, "A");
  EXPECT_EQ(maps[0].base, kFirstTensorBase);
  EXPECT_EQ(maps[0].shape[0], 128u);  // K contiguous
  EXPECT_EQ(maps[0].shape[1], 256u);
  EXPECT_EQ(maps[0].stride[1], 256u);
  EXPECT_EQ(maps[0].box[0], 64u);
  EXPECT_EQ(maps[0].box[1], 128u);
  EXPECT_EQ(maps[1].base, kFirstTensorBase + kTensorAlignment);  // A is 64 KiB: next 2 MiB
  EXPECT_EQ(maps[2].base, kFirstTensorBase + 2 * kTensorAlignment);
  EXPECT_EQ(maps[2].box[0], 128u);
  EXPECT_EQ(maps[2].box[1], 128u);
}

TEST(GemmProgram, SteadyStateRefillsTheSlotOfTheRetiredGroup) {
  Harness h;
  auto source = h.make({{"m", i64(128)}, {"n", i64(128)}, {"k", i64(256)}, {"stages", i64(2)}});
  CtaProgram p;
  source->build(0, p);
  EXPECT_EQ(p.smem_bytes, 2 * 32768 + 2 * 8);
  std::vector<std::string> expected = {"TMA_LOAD A 0,0 s0", "TMA_LOAD B 0,0 s0"};
  for (int k = 0; k < 4; ++k) {
    const std::string s = std::to_string(k % 2), next = std::to_string((k + 1) % 2);
    expected.push_back("MB_WAIT " + s);
    repeat(expected, 8, "WGMMA 64,128,16 gid " + std::to_string(k));
    // WGMMA_WAIT 1 retires k-1's group, which read the slot k+1 is loaded into.
    expected.insert(expected.end(), {"WGMMA_COMMIT " + std::to_string(k), "WGMMA_WAIT 1"});
    if (k + 1 < 4)
      expected.insert(expected.end(),
                      {"TMA_LOAD A " + std::to_string(64 * (k + 1)) + ",0 s" + next,
                       "TMA_LOAD B " + std::to_string(64 * (k + 1)) + ",0 s" + next});
  }
  expected.insert(expected.end(),
                  {"WGMMA_WAIT 0", "BUBBLE 0 fp32 0 alu 24576 sfu 0", "TMA_STORE C 0,0", "EXIT"});
  EXPECT_EQ(listing(p.warpgroups[0], p, source->tensor_maps()), expected);
}

// Triton's 128 x 256 x 64 tile with 8 warps: warpsPerCTA [8, 1], so each WarpGroup owns 64 rows
// (4 m64n256k16 a k-tile); the first WarpGroup issues every copy and the store of the whole tile.
TEST(GemmProgram, EightWarpsShareTheTileByRows) {
  Harness h;
  auto source = h.make(
      {{"m", i64(256)}, {"n", i64(512)}, {"k", i64(64)}, {"block_n", i64(256)}, {"warps", i64(8)}});
  CtaProgram p;
  source->build(3, p);  // tile (1, 1)
  ASSERT_EQ(p.warpgroups.size(), 2u);
  EXPECT_EQ(p.consumers_per_stage, 1u);
  EXPECT_EQ(p.smem_bytes, 3 * (128 + 256) * 64 * 2 + 3 * 8);
  for (const auto& wg : p.warpgroups) EXPECT_EQ(wg.registers, 168u * 128);  // 64 x 256 / 128 + 40
  // Two WarpGroups: Triton's Membar barrier before every copy (the store too) and mbarrier wait,
  // kept where the copy is predicated off (the second prologue k-tile and the refill are past
  // K's one k-tile).
  const std::string bar = "BAR_WAIT 0";
  // Each m64n256k16 holds 128 accumulator registers a thread: ptxas serializes them, each its
  // own group waited for before the next (simfa/wgmma_codegen.h).
  std::vector<std::string> serialized;
  for (int g = 0; g < 4; ++g)
    serialized.insert(serialized.end(), {"WGMMA 64,256,16 gid " + std::to_string(g),
                                         "WGMMA_COMMIT " + std::to_string(g), "WGMMA_WAIT 0"});
  std::vector<std::string> first = {
      bar, "TMA_LOAD A 0,128 s0", bar, "TMA_LOAD B 0,256 s0", bar, bar, bar, "MB_WAIT 0"};
  first.insert(first.end(), serialized.begin(), serialized.end());
  // 64 x 256 accumulators a WarpGroup, 1.5 ALU elements each.
  first.insert(first.end(),
               {"WGMMA_WAIT 1", bar, bar, "WGMMA_WAIT 0", "BUBBLE 0 fp32 0 alu 24576 sfu 0", bar,
                "TMA_STORE C 256,128", "EXIT"});
  EXPECT_EQ(listing(p.warpgroups[0], p, source->tensor_maps()), first);
  EXPECT_EQ(p.barrier_participants, (std::vector<std::uint32_t>{2}));
  std::vector<std::string> second = {bar, bar, bar, bar, bar, "MB_WAIT 0"};
  second.insert(second.end(), serialized.begin(), serialized.end());
  second.insert(second.end(), {"WGMMA_WAIT 1", bar, bar, "WGMMA_WAIT 0",
                               "BUBBLE 0 fp32 0 alu 24576 sfu 0", bar, "EXIT"});
  EXPECT_EQ(listing(p.warpgroups[1], p, source->tensor_maps()), second);
  EXPECT_EQ(source->tensor_maps()[2].box[1], 128u);  // the whole tile in one store
}

// wgmma_serialization: auto serializes the Triton kernel's m64n256 (above) and neither its
// m64n128 nor the warp-specialized kernel's m64n256, whose consumers setmaxnreg 232; true and
// false force it either way.
TEST(GemmProgram, WgmmaSerializationFollowsPtxasOrTheKey) {
  auto waits = [](const Keys& keys) {
    Harness h;
    auto source = h.make(keys);
    CtaProgram p;
    source->build(0, p);
    const auto& code = p.warpgroups.back().code;
    return std::count(code.begin(), code.end(), Instruction::wgmma_wait(0));
  };
  const Keys narrow = {{"m", i64(256)}, {"n", i64(256)}, {"k", i64(256)}, {"warps", i64(8)}};
  Keys ws_wide = {{"m", i64(256)},
                  {"n", i64(256)},
                  {"k", i64(256)},
                  {"block_n", i64(256)},
                  {"warp_specialized", ParamValue{true}}};
  EXPECT_EQ(waits(narrow), 1);   // the loop's last wait alone
  EXPECT_EQ(waits(ws_wide), 1);  // likewise: 64 x 256 per consumer, kept in flight
  Keys forced = narrow;
  forced.emplace_back("wgmma_serialization", ParamValue{std::string("true")});
  EXPECT_EQ(waits(forced), 4 * 4 + 1);  // 4 a k-tile (64 rows, K 64 in 16s), 4 k-tiles, the last
  ws_wide.emplace_back("wgmma_serialization", ParamValue{std::string("true")});
  EXPECT_EQ(waits(ws_wide), 4 * 4 + 1);
  Keys wide = {{"m", i64(128)},   {"n", i64(256)},
               {"k", i64(256)},   {"block_n", i64(256)},
               {"warps", i64(8)}, {"wgmma_serialization", ParamValue{std::string("false")}}};
  EXPECT_EQ(waits(wide), 1);
}

TEST(GemmProgram, WarpSpecializedHasAProducerAndTwoConsumers) {
  Harness h;
  auto source = h.make({{"m", i64(256)},
                        {"n", i64(256)},
                        {"k", i64(128)},
                        {"stages", i64(2)},
                        {"warp_specialized", ParamValue{true}}});
  CtaProgram p;
  source->build(3, p);  // tile (1, 1)
  ASSERT_EQ(p.warpgroups.size(), 3u);
  EXPECT_EQ(p.consumers_per_stage, 2u);
  EXPECT_EQ(p.warpgroups[0].registers, 40u * 128);
  EXPECT_EQ(p.warpgroups[1].registers, 232u * 128);
  EXPECT_EQ(listing(p.warpgroups[0], p, source->tensor_maps()),
            (std::vector<std::string>{"ACQUIRE_STAGE 0", "TMA_LOAD A 0,128 s0",
                                      "TMA_LOAD B 0,128 s0", "ACQUIRE_STAGE 1",
                                      "TMA_LOAD A 64,128 s1", "TMA_LOAD B 64,128 s1", "EXIT"}));
  for (int c = 0; c < 2; ++c) {
    std::vector<std::string> expected = {"MB_WAIT 0"};
    repeat(expected, 4, "WGMMA 64,128,16 gid 0");  // 64 rows each: 1 x 1 x 4
    expected.insert(expected.end(), {"WGMMA_COMMIT 0", "MB_WAIT 1"});
    repeat(expected, 4, "WGMMA 64,128,16 gid 1");
    // Each converts and writes its 64 x 128 accumulators: 2 x 8192 / 128 cycles.
    expected.insert(expected.end(),
                    {"WGMMA_COMMIT 1", "WGMMA_WAIT 1", "RELEASE_STAGE 0", "WGMMA_WAIT 0",
                     "RELEASE_STAGE 1", "BUBBLE 0 fp32 0 alu 12288 sfu 0",
                     "TMA_STORE C 128," + std::to_string(128 + 64 * c), "EXIT"});
    EXPECT_EQ(listing(p.warpgroups[1 + c], p, source->tensor_maps()), expected) << "consumer " << c;
  }
  EXPECT_EQ(source->tensor_maps()[2].box[1], 64u);  // each consumer stores 64 rows
  EXPECT_EQ(p.smem_bytes, 2 * 32768 + 32768);       // the ring and a C tile of its own
}

TEST(GemmProgram, CalibrationBubblesAndFp8) {
  Harness h;
  auto source = h.make({{"m", i64(128)},
                        {"n", i64(128)},
                        {"k", i64(256)},
                        {"dtype", ParamValue{"fp8"}},
                        {"block_k", i64(128)},
                        {"prologue_bubble", i64(4314)},
                        {"per_iteration_bubble", i64(330)}});
  CtaProgram p;
  source->build(0, p);
  const auto& code = p.warpgroups[0].code;
  EXPECT_EQ(code.front(), Instruction::bubble(4314));
  int bubbles = 0, wgmmas = 0;
  for (std::size_t i = 0; i < code.size(); ++i) {
    if (code[i].op == Opcode::kWgmma) {
      ++wgmmas;
      EXPECT_EQ(code[i].wgmma_k(), 32u);  // m64nNk32 for 8-bit types
    }
    if (code[i].op == Opcode::kBubble && code[i].x == 330) {
      ++bubbles;
      EXPECT_EQ(code[i + 1].op, Opcode::kMbWait);  // at the top of the k-tile's iteration
    }
  }
  EXPECT_EQ(bubbles, 2);         // two k-tiles of 128
  EXPECT_EQ(wgmmas, 2 * 2 * 4);  // 2 m64 rows x 4 k32 per k-tile
  EXPECT_EQ(source->tensor_maps()[0].elem_bytes, 1u);
  EXPECT_EQ(source->tensor_maps()[2].elem_bytes, 2u);  // C stays 16-bit
}

TEST(GemmRaster, GroupedFollowsTritonsGroupsOfEightTileRows) {
  GemmShape s;
  s.m = 10 * 128;  // 10 tile rows: a group of 8 and a last group of 2
  s.n = 3 * 128;
  s.k = 64;
  s.raster = Raster::kGrouped;
  const GemmKernel kernel(s);
  auto at = [&](std::uint64_t cta) {
    const auto t = kernel.tile_of(cta);
    return std::make_pair(t.m, t.n);
  };
  EXPECT_EQ(at(0), std::make_pair(std::int64_t{0}, std::int64_t{0}));
  EXPECT_EQ(at(7), std::make_pair(std::int64_t{7}, std::int64_t{0}));
  EXPECT_EQ(at(8), std::make_pair(std::int64_t{0}, std::int64_t{1}));
  EXPECT_EQ(at(23), std::make_pair(std::int64_t{7}, std::int64_t{2}));
  EXPECT_EQ(at(24), std::make_pair(std::int64_t{8}, std::int64_t{0}));
  EXPECT_EQ(at(25), std::make_pair(std::int64_t{9}, std::int64_t{0}));
  EXPECT_EQ(at(26), std::make_pair(std::int64_t{8}, std::int64_t{1}));
  EXPECT_EQ(at(29), std::make_pair(std::int64_t{9}, std::int64_t{2}));
  std::set<std::pair<std::int64_t, std::int64_t>> seen;
  for (std::uint64_t c = 0; c < kernel.cta_count(); ++c) seen.insert(at(c));
  EXPECT_EQ(seen.size(), 30u);

  // 11 x 4 tiles: the last group's 3 rows start at CTA 32, and Triton's pid_m = 8 + pid % 3
  // takes pid itself modulo 3 (32 % 3 = 2), not its rank in the group.
  s.m = 11 * 128;
  s.n = 4 * 128;
  const GemmKernel eleven(s);
  EXPECT_EQ(eleven.tile_of(32).m, 10);
  EXPECT_EQ(eleven.tile_of(32).n, 0);
  EXPECT_EQ(eleven.tile_of(33).m, 8);
  EXPECT_EQ(eleven.tile_of(43).m, 9);
  EXPECT_EQ(eleven.tile_of(43).n, 3);

  s.group_m = 2;  // groups of 2 rows: CTA 9 is the second group's second row, first column
  const GemmKernel pairs(s);
  EXPECT_EQ(pairs.tile_of(9).m, 3);
  EXPECT_EQ(pairs.tile_of(9).n, 0);

  s.raster = Raster::kRowMajor;
  const GemmKernel rows(s);
  EXPECT_EQ(rows.tile_of(5).m, 1);  // 4 tile columns
  EXPECT_EQ(rows.tile_of(5).n, 1);
}

/// The (address, bytes) rows a TMA op of map `id` fetches, per CTA.
std::vector<std::pair<Addr, std::uint64_t>> rows_of(const CtaProgram& p,
                                                    const std::vector<TensorMap>& maps,
                                                    std::uint16_t id) {
  std::vector<std::pair<Addr, std::uint64_t>> out;
  for (const auto& wg : p.warpgroups)
    for (const Instruction& i : wg.code)
      if (i.op == Opcode::kTmaLoad && i.map == id)
        maps[id].for_each_row(&p.coords[i.x],
                              [&](Addr a, std::uint64_t b) { out.emplace_back(a, b); });
  return out;
}

TEST(GemmAddresses, CtasSharingATileRowOrColumnLoadTheSameLines) {
  for (const char* raster : {"row_major", "grouped"}) {
    Harness h;
    auto source = h.make({{"m", i64(1024)},
                          {"n", i64(768)},
                          {"k", i64(256)},
                          {"raster", ParamValue{raster}},
                          {"b_layout", ParamValue{"kn"}}});
    std::map<std::int64_t, std::vector<std::pair<Addr, std::uint64_t>>> a_rows, b_cols;
    for (std::uint64_t cta = 0; cta < source->cta_count(); ++cta) {
      CtaProgram p;
      source->build(cta, p);
      // The C store's coordinates name the tile: (n0, m0).
      const Instruction& store = p.warpgroups[0].code[p.warpgroups[0].code.size() - 2];
      ASSERT_EQ(store.op, Opcode::kTmaStore);
      const std::int64_t tm = p.coords[store.x + 1] / 128, tn = p.coords[store.x] / 128;
      const auto a = rows_of(p, source->tensor_maps(), 0);
      const auto b = rows_of(p, source->tensor_maps(), 1);
      EXPECT_EQ(a.size(), 4u * 128);  // 4 k-tiles of 128 rows of 128 bytes
      if (a_rows.count(tm))
        EXPECT_EQ(a_rows[tm], a) << raster << " CTA " << cta;
      else
        a_rows[tm] = a;
      if (b_cols.count(tn))
        EXPECT_EQ(b_cols[tn], b) << raster << " CTA " << cta;
      else
        b_cols[tn] = b;
    }
    EXPECT_EQ(a_rows.size(), 8u);
    EXPECT_EQ(b_cols.size(), 6u);
    // Different tile rows read disjoint parts of A.
    std::set<Addr> all;
    std::size_t count = 0;
    for (const auto& [tm, rows] : a_rows)
      for (const auto& [addr, bytes] : rows) {
        all.insert(addr);
        ++count;
      }
    EXPECT_EQ(all.size(), count);
  }
}

/// Bytes inside the tensors summed over every TMA_LOAD of every CTA, and the boxes' bytes.
std::pair<std::uint64_t, std::uint64_t> loaded_bytes(GemmSource& source) {
  std::uint64_t in_bounds = 0, boxes = 0;
  CtaProgram p;
  for (std::uint64_t cta = 0; cta < source.cta_count(); ++cta) {
    source.build(cta, p);
    for (const auto& wg : p.warpgroups)
      for (const Instruction& i : wg.code)
        if (i.op == Opcode::kTmaLoad) {
          const TensorMap& map = source.tensor_maps()[i.map];
          in_bounds += map.bytes_in_bounds(&p.coords[i.x]);
          boxes += map.box_bytes();
        }
  }
  return {in_bounds, boxes};
}

TEST(GemmTraffic, LlcBytesFollowFromTheTiling) {
  struct Case {
    Keys keys;
    std::uint64_t m, n, k, e, bm, bn, bk;
  };
  const std::vector<Case> cases = {
      {{{"m", i64(1024)}, {"n", i64(1024)}, {"k", i64(1024)}}, 1024, 1024, 1024, 2, 128, 128, 64},
      // Edge tiles clipped in every dimension.
      {{{"m", i64(1000)}, {"n", i64(1000)}, {"k", i64(1000)}}, 1000, 1000, 1000, 2, 128, 128, 64},
      {{{"m", i64(300)},
        {"n", i64(720)},
        {"k", i64(208)},
        {"dtype", ParamValue{"fp8"}},
        {"block_n", i64(256)},
        {"warp_specialized", ParamValue{true}}},
       300,
       720,
       208,
       1,
       128,
       256,
       64},
      {{{"m", i64(520)},
        {"n", i64(264)},
        {"k", i64(96)},
        {"b_layout", ParamValue{"kn"}},
        {"block_m", i64(64)},
        {"block_n", i64(64)},
        {"block_k", i64(32)},
        {"raster", ParamValue{"grouped"}}},
       520,
       264,
       96,
       2,
       64,
       64,
       32},
  };
  for (const Case& c : cases) {
    Harness h;
    auto source = h.make(c.keys);
    const std::uint64_t tm = (c.m + c.bm - 1) / c.bm, tn = (c.n + c.bn - 1) / c.bn;
    const std::uint64_t kt = (c.k + c.bk - 1) / c.bk;
    // Section III-C: every CTA reads its A row-block and B column-block, tile by tile; TMA clips
    // boxes at the tensor's edge, so each CTA reads exactly its rows / columns of A / B.
    const std::uint64_t llc = tn * c.m * c.k * c.e + tm * c.n * c.k * c.e;
    const auto [in_bounds, boxes] = loaded_bytes(*source);
    EXPECT_EQ(in_bounds, llc) << c.m << "x" << c.n << "x" << c.k;
    // Shared memory receives whole boxes (zero-filled past the edge).
    EXPECT_EQ(boxes, tm * tn * kt * (c.bm + c.bn) * c.bk * c.e);
  }
}

TEST(GemmSourceComponent, ParametersAndDefaults) {
  Schema schema;
  GemmSource::describe(schema);
  EXPECT_FALSE(schema.find("m")->default_value.has_value());
  Harness h;
  auto source = h.make({{"m", i64(4096)}, {"n", i64(4096)}, {"k", i64(4096)}});
  std::map<std::string, std::string> p;
  for (const auto& [k, v] : source->parameters()) p[k] = v;
  EXPECT_EQ(p["block_m"], "128");
  EXPECT_EQ(p["block_n"], "128");
  EXPECT_EQ(p["block_k"], "64");
  EXPECT_EQ(p["stages"], "3");
  EXPECT_EQ(p["raster"], "row_major");
  EXPECT_EQ(p["dtype"], "fp16");
  EXPECT_EQ(p["b_layout"], "nk");
  EXPECT_EQ(p["warp_specialized"], "false");
  EXPECT_EQ(p["grid"], "32x32");
  EXPECT_EQ(p["cta_count"], "1024");
  EXPECT_EQ(p["k_tiles"], "64");
  EXPECT_EQ(p["wgmmas_per_k_tile"], "8");
  EXPECT_EQ(p["a_base"], "0x7f0000000000");
  EXPECT_EQ(p["b_base"], "0x7f0002000000");  // A is 32 MiB
  EXPECT_EQ(p["c_base"], "0x7f0004000000");
  EXPECT_EQ(p["smem_bytes"], "98328");
  EXPECT_EQ(p["warps"], "4");
  EXPECT_EQ(p["group_m"], "8");
  EXPECT_EQ(p["epilogue_alu_elements"], "24576");  // 128 x 128 x 1.5

  auto given = h.make({{"m", i64(128)},
                       {"n", i64(128)},
                       {"k", i64(64)},
                       {"a_base", i64(0x10000)},
                       {"c_base", i64(0x900000)}});
  EXPECT_EQ(given->tensor_maps()[0].base, 0x10000u);
  EXPECT_EQ(given->tensor_maps()[1].base, 0x200000u);  // after A, 2 MiB aligned
  EXPECT_EQ(given->tensor_maps()[2].base, 0x900000u);
}

// Triton's warpsPerTileV3: [8, 1] for 128 rows and more, [4, 2] for 64 rows with 8 warps, as in
// the TTGIRs dumped on the H200 (validation/h200/rank/ttgir.tgz: bm64_bn128_bk64_s3_w8 has
// warpsPerCTA = [4, 2], instrShape [16, 64, 16]; bm128_bn64_bk64_s3_w8 [8, 1]).
TEST(GemmKernel, EightWarpsSplitTheTileAsTritonDoes) {
  EXPECT_EQ(triton_warps_per_cta(64, 4).m, 4);
  EXPECT_EQ(triton_warps_per_cta(64, 4).n, 1);
  EXPECT_EQ(triton_warps_per_cta(64, 8).m, 4);
  EXPECT_EQ(triton_warps_per_cta(64, 8).n, 2);
  EXPECT_EQ(triton_warps_per_cta(128, 8).m, 8);
  EXPECT_EQ(triton_warps_per_cta(128, 8).n, 1);
  EXPECT_EQ(triton_warps_per_cta(256, 8).m, 8);
  EXPECT_EQ(triton_warps_per_cta(128, 16).n, 2);
  GemmShape s;
  s.m = s.n = s.k = 512;
  s.block_m = 64;
  s.block_n = 128;
  s.warps = 8;
  const GemmKernel narrow(s);
  EXPECT_EQ(narrow.consumers(), 2u);
  EXPECT_EQ(narrow.rows_per_consumer(), 64);
  EXPECT_EQ(narrow.cols_per_consumer(), 64);
  EXPECT_EQ(narrow.accumulator_registers(), 32u);  // 64 x 64 / 128 threads
  EXPECT_EQ(narrow.wgmmas_per_k_tile(), 4u);       // one 64-row WGMMA x 4 k16 steps
  s.block_m = 128;
  const GemmKernel tall(s);
  EXPECT_EQ(tall.rows_per_consumer(), 64);
  EXPECT_EQ(tall.cols_per_consumer(), 128);
}

TEST(GemmSourceComponent, ErrorsNameTheKey) {
  auto expect_error = [](const Keys& keys, std::uint32_t line, const std::string& needle,
                         std::int64_t smem = 0) {
    Harness h;
    h.gpu.smem_per_sm_bytes = smem;
    try {
      h.make(keys);
      ADD_FAILURE() << "no error; expected " << needle;
    } catch (const InputError& e) {
      EXPECT_EQ(e.where().file, "w.toml") << e.what();
      EXPECT_EQ(e.where().line, line) << e.what();
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  const Keys mnk = {{"m", i64(512)}, {"n", i64(512)}, {"k", i64(512)}};
  auto with = [&](std::pair<std::string, ParamValue> extra) {
    Keys keys = mnk;
    keys.push_back(std::move(extra));
    return keys;
  };
  expect_error(with({"block_m", i64(96)}), 5, "not a multiple of 64");
  expect_error(with({"block_n", i64(100)}), 5, "not a multiple of 8");
  expect_error(with({"block_k", i64(24)}), 5, "not a multiple of 16");
  expect_error({{"m", i64(512)}, {"n", i64(512)}, {"k", i64(1001)}}, 4,
               "A's rows 2002 bytes long; TMA needs row strides that are multiples of 16 bytes");
  expect_error({{"m", i64(512)}, {"n", i64(513)}, {"k", i64(512)}}, 3, "C's rows 1026 bytes");
  expect_error({{"dtype", ParamValue{"fp8"}},
                {"b_layout", ParamValue{"kn"}},
                {"m", i64(512)},
                {"n", i64(512)},
                {"k", i64(512)}},
               3, "8-bit WGMMA reads B only K-major");
  expect_error(with({"a_base", i64(0x1008)}), 5, "is not 16-byte aligned");
  // 256 x 256 in one WarpGroup: 512 accumulators per thread.
  expect_error({{"m", i64(512)},
                {"n", i64(512)},
                {"k", i64(512)},
                {"block_m", i64(256)},
                {"block_n", i64(256)}},
               6, "needs 512 accumulator registers per thread");
  expect_error(with({"stages", i64(8)}), 5,
               "and their mbarriers need 262208 bytes of shared memory; gpu.smem_per_sm is 228 KiB",
               228 * 1024);
  expect_error(with({"warps", i64(6)}), 5, "warps = 6 is not a multiple of 4");
  // Triton gives 8 warps over a 64-row tile warpsPerCTA = [4, 2]: 8 columns leave 4 a WarpGroup.
  expect_error({{"m", i64(512)},
                {"n", i64(512)},
                {"k", i64(512)},
                {"block_m", i64(64)},
                {"block_n", i64(8)},
                {"warps", i64(8)}},
               7, "warpsPerCTA = [4, 2]: WarpGroups of 64 x 4, which must be a multiple of 64 x 8");
  expect_error({{"m", i64(512)},
                {"n", i64(512)},
                {"k", i64(512)},
                {"warp_specialized", ParamValue{true}},
                {"warps", i64(8)}},
               6, "warps sets the non-warp-specialized kernel");
  expect_error(with({"group_m", i64(4)}), 5, "group_m = 4 sets raster = \"grouped\"");
}

}  // namespace
}  // namespace simfa::gemm
