// One kernel, one prediction (issue 17, item 3): workload.gemm without warp specialization must
// build, CTA by CTA, the program the static TTGIR route lowers from Triton's own TTGIR of that
// GEMM: same TensorMaps, the same raster, the pipelined prologue, steady state and epilogue,
// the same WGMMA groups and wait depths, the same store, instruction by instruction in every
// WarpGroup, clipped edge tiles included.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "gemm_source.h"
#include "simfa/int_math.h"
#include "support/null_build_context.h"
#include "support/program_listing.h"
#include "support/test_files.h"
#include "ttgir_source.h"

namespace simfa {
namespace {

using test::Keys;

const std::string kSrc = SIMFA_SOURCE_DIR;
/// Triton 3.6's TTGIR of tools/device/triton_kernels.py's gemm_tma_kernel, dumped on the H200:
/// 128x128x64 tiles, 3 stages, 4 warps, GROUP_M = 8.
const std::string kGrouped = kSrc + "/tests/data/ttgir/gemm_tma.ttgir";
/// The same loop with 8 warps (two WarpGroups of 64 rows) and the row-major raster
/// (pid_m = pid / tiles_n), also dumped on the H200 (docs/ttgir.md §9).
const std::string kRowMajorW8 = test::data_path("ttgir_gemm_nw8.ttgir");

ParamValue i64(std::int64_t v) {
  return ParamValue{v};
}
ParamValue str(const std::string& s) {
  return ParamValue{s};
}

struct Shape {
  std::int64_t m, n, k;
};

std::string ttgir_args(const Shape& s) {
  auto d = [](std::int64_t v) { return std::to_string(v); };
  return "M=" + d(s.m) + ";N=" + d(s.n) + ";K=" + d(s.k) + ";a_desc.shape=" + d(s.m) + "x" +
         d(s.k) + ";b_desc.shape=" + d(s.n) + "x" + d(s.k) + ";c_desc.shape=" + d(s.m) + "x" +
         d(s.n);
}

/// The gemm: keys of one Triton configuration.
struct Config {
  std::int64_t block_m = 128, block_n = 128, block_k = 64, stages = 3, warps = 4, group_m = 8;

  Keys keys(const Shape& s) const {
    Keys k = {{"m", i64(s.m)},           {"n", i64(s.n)},           {"k", i64(s.k)},
              {"block_m", i64(block_m)}, {"block_n", i64(block_n)}, {"block_k", i64(block_k)},
              {"stages", i64(stages)},   {"warps", i64(warps)}};
    if (group_m == 1) {
      k.emplace_back("raster", str("row_major"));
    } else {
      k.emplace_back("raster", str("grouped"));
      k.emplace_back("group_m", i64(group_m));
    }
    return k;
  }
  std::uint64_t ctas(const Shape& s) const {
    return static_cast<std::uint64_t>(ceil_div(s.m, block_m) * ceil_div(s.n, block_n));
  }
};

struct Harness : test::NullBuildContext {
  std::unique_ptr<ttgir::TtgirSource> ttgir(const std::string& file, const Config& c,
                                            const Shape& s) {
    // The gemm: generator has no first-wave cold start (docs/calibration.md §21); both routes
    // charge the mbarrier inits and the store's wait at their defaults (§30).
    return build<ttgir::TtgirSource>({{"file", str(file)},
                                      {"grid", str(std::to_string(c.ctas(s)))},
                                      {"args", str(ttgir_args(s))},
                                      {"first_wave_bubble", ParamValue{std::int64_t{0}}}},
                                     ParamValue{std::int64_t{0}});
  }
  std::unique_ptr<gemm::GemmSource> gemm(const Config& c, const Shape& s) {
    return build<gemm::GemmSource>(c.keys(s), ParamValue{std::int64_t{0}});
  }
};

/// The routes name their TensorMaps differently (a_desc, A); they must agree on everything else.
std::vector<TensorMap> by_id(std::vector<TensorMap> maps) {
  for (std::size_t i = 0; i < maps.size(); ++i) maps[i].name = "map" + std::to_string(i);
  return maps;
}

/// A difference between two TensorMap lists, or nothing.
std::optional<std::string> map_difference(const std::vector<TensorMap>& t,
                                          const std::vector<TensorMap>& g) {
  if (t.size() != g.size())
    return std::to_string(t.size()) + " TensorMaps against " + std::to_string(g.size());
  for (std::size_t i = 0; i < t.size(); ++i) {
    const TensorMap &a = t[i], &b = g[i];
    const std::string at = "TensorMap " + std::to_string(i) + " (" + a.name + "/" + b.name + "): ";
    if (a.base != b.base)
      return at + "base " + std::to_string(a.base) + " vs " + std::to_string(b.base);
    if (a.elem_bytes != b.elem_bytes || a.rank != b.rank) return at + "element size or rank";
    for (std::uint32_t d = 0; d < a.rank; ++d)
      if (a.shape[d] != b.shape[d] || a.stride[d] != b.stride[d] || a.box[d] != b.box[d])
        return at + "dimension " + std::to_string(d) + ": shape " + std::to_string(a.shape[d]) +
               " vs " + std::to_string(b.shape[d]) + ", stride " + std::to_string(a.stride[d]) +
               " vs " + std::to_string(b.stride[d]) + ", box " + std::to_string(a.box[d]) + " vs " +
               std::to_string(b.box[d]);
  }
  return std::nullopt;
}

/// The first difference between the two programs of one CTA, or nothing: the CTA's resources,
/// then per WarpGroup its registers and its code line by line (opcodes; TensorMap ids, tile
/// coordinates and stages of the TMA ops; MB_WAIT stages; WGMMA shapes and group ids; wait
/// depths; bubble cycles).
std::optional<std::string> program_difference(const CtaProgram& t, const std::vector<TensorMap>& tm,
                                              const CtaProgram& g,
                                              const std::vector<TensorMap>& gm) {
  auto num = [](auto v) { return std::to_string(v); };
  if (t.smem_bytes != g.smem_bytes)
    return "smem_bytes " + num(t.smem_bytes) + " vs " + num(g.smem_bytes);
  if (t.stage_count != g.stage_count)
    return "stage_count " + num(t.stage_count) + " vs " + num(g.stage_count);
  if (t.consumers_per_stage != g.consumers_per_stage)
    return "consumers_per_stage " + num(t.consumers_per_stage) + " vs " +
           num(g.consumers_per_stage);
  if (t.barrier_participants != g.barrier_participants) return "barrier_participants";
  if (t.warpgroups.size() != g.warpgroups.size())
    return num(t.warpgroups.size()) + " WarpGroups vs " + num(g.warpgroups.size());
  const auto t_maps = by_id(tm), g_maps = by_id(gm);
  for (std::size_t w = 0; w < t.warpgroups.size(); ++w) {
    const std::string wg = "WarpGroup " + num(w) + ": ";
    if (t.warpgroups[w].registers != g.warpgroups[w].registers)
      return wg + "registers " + num(t.warpgroups[w].registers) + " vs " +
             num(g.warpgroups[w].registers);
    const auto a = test::listing(t.warpgroups[w], t, t_maps);
    const auto b = test::listing(g.warpgroups[w], g, g_maps);
    const std::size_t n = std::min(a.size(), b.size());
    for (std::size_t i = 0; i <= n; ++i) {
      if (i < n && a[i] == b[i]) continue;
      if (i == n && a.size() == b.size()) break;
      return wg + "instruction " + num(i) + " of " + num(a.size()) + " / " + num(b.size()) +
             ": TTGIR '" + (i < a.size() ? a[i] : "(end)") + "', gemm '" +
             (i < b.size() ? b[i] : "(end)") + "'";
    }
  }
  return std::nullopt;
}

/// The first difference between the two routes over the CTAs `ctas` (all when empty).
std::optional<std::string> route_difference(const std::string& file, const Config& c,
                                            const Shape& s, std::vector<std::uint64_t> ctas = {}) {
  Harness h;
  auto ttgir = h.ttgir(file, c, s);
  auto gemm = h.gemm(c, s);
  if (ttgir->cta_count() != gemm->cta_count())
    return "grid " + std::to_string(ttgir->cta_count()) + " vs " +
           std::to_string(gemm->cta_count());
  if (auto d = map_difference(ttgir->tensor_maps(), gemm->tensor_maps())) return d;
  if (ctas.empty())
    for (std::uint64_t i = 0; i < gemm->cta_count(); ++i) ctas.push_back(i);
  CtaProgram pt, pg;
  for (std::uint64_t cta : ctas) {
    ttgir->build(cta, pt);
    gemm->build(cta, pg);
    if (auto d = program_difference(pt, ttgir->tensor_maps(), pg, gemm->tensor_maps()))
      return "CTA " + std::to_string(cta) + ": " + *d;
  }
  return std::nullopt;
}

std::string describe(const Shape& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
}

// Every CTA of each grid: a single CTA; clipped edge tiles in M, N and K (1000 = 7 x 128 + 104,
// 15 x 64 + 40); the skinny 640 x 5120 x 5120 (5 x 40 tiles, one partial group of 5 tile
// rows); the 4096 x 1024 x 4096 that disagreed by 2.6x; a last group of 3 tile rows whose
// 8 x 4 = 32 CTAs per group are no multiple of 3 (Triton's pid_m = first + pid % 3, not the
// rank in the group); K of one k-tile (the pipeline's copies predicated off) and of two, the
// second clipped.
const Shape kShapes[] = {{128, 128, 4096},   {1000, 1000, 1000}, {640, 5120, 5120},
                         {4096, 1024, 4096}, {1408, 512, 256},   {256, 384, 64},
                         {384, 256, 104}};

TEST(GemmTtgirEquivalence, GroupedRasterFourWarpsEveryCta) {
  for (const Shape& s : kShapes) {
    const auto d = route_difference(kGrouped, Config{}, s);
    EXPECT_FALSE(d.has_value()) << describe(s) << ": " << d.value_or("");
  }
}

TEST(GemmTtgirEquivalence, RowMajorEightWarpsEveryCta) {
  const Config w8{.warps = 8, .group_m = 1};
  for (const Shape& s : kShapes) {
    const auto d = route_difference(kRowMajorW8, w8, s);
    EXPECT_FALSE(d.has_value()) << describe(s) << ": " << d.value_or("");
  }
}

// The 128x256 tile with 8 warps, whose m64n256k16 ptxas serializes (simfa/wgmma_codegen.h): both
// routes make each WGMMA a group of its own, numbered alike, waited for before the next.
TEST(GemmTtgirEquivalence, SerializedWideTileEveryCta) {
  const std::string wide = kSrc + "/validation/h200/ttgir/gemm_bm128_bn256_bk64_s3_w8_g1.ttgir";
  const Config c{.block_n = 256, .warps = 8, .group_m = 1};
  for (const Shape& s : kShapes) {
    const auto d = route_difference(wide, c, s);
    EXPECT_FALSE(d.has_value()) << describe(s) << ": " << d.value_or("");
  }
  Harness h;
  CtaProgram p;
  h.gemm(c, kShapes[0])->build(0, p);
  const auto& code = p.warpgroups[1].code;
  EXPECT_EQ(std::count(code.begin(), code.end(), Instruction::wgmma_wait(0)),
            4 * 4096 / 64 + 1);  // four a k-tile and the loop's last
}

// The calibration bubbles land where the TTGIR route charges them: the prologue's before each
// WarpGroup's first instruction, the per-iteration one at the top of every K-loop iteration
// (merged with the prologue's where nothing comes between; in the 8-warp kernel the prologue's
// CTA barriers come between, so its second WarpGroup has one per k-tile too).
TEST(GemmTtgirEquivalence, CalibrationBubblesLandAlike) {
  const Shape s{256, 256, 640};
  struct Case {
    std::string file;
    Config config;
    int bubbles_330;  ///< in the last WarpGroup: one per k-tile, less any merged
  };
  for (const auto& [file, config, bubbles_330] :
       {Case{kGrouped, Config{}, 10}, Case{kRowMajorW8, Config{.warps = 8, .group_m = 1}, 10}}) {
    Harness h;
    const Keys bubbles = {{"prologue_bubble", i64(4314)}, {"per_iteration_bubble", i64(330)}};
    Keys t_keys = {{"file", str(file)},
                   {"grid", str(std::to_string(config.ctas(s)))},
                   {"args", str(ttgir_args(s))},
                   {"first_wave_bubble", i64(0)}};
    Keys g_keys = config.keys(s);
    t_keys.insert(t_keys.end(), bubbles.begin(), bubbles.end());
    g_keys.insert(g_keys.end(), bubbles.begin(), bubbles.end());
    auto ttgir = h.build<ttgir::TtgirSource>(t_keys, ParamValue{std::int64_t{0}});
    auto gemm = h.build<gemm::GemmSource>(g_keys, ParamValue{std::int64_t{0}});
    CtaProgram pt, pg;
    ttgir->build(3, pt);
    gemm->build(3, pg);
    const auto d = program_difference(pt, ttgir->tensor_maps(), pg, gemm->tensor_maps());
    EXPECT_FALSE(d.has_value()) << file << ": " << d.value_or("");
    const auto& last = pg.warpgroups.back().code;
    EXPECT_EQ(std::count(last.begin(), last.end(), Instruction::bubble(330)), bubbles_330);
  }
}

// The comparison sees what it must: a gemm: raster that is not Triton's, or a TTGIR whose
// in-loop wait keeps no group in flight, is a difference, named at its first instruction.
TEST(GemmTtgirEquivalence, ADifferentRasterOrWaitDepthIsCaught) {
  const Shape s{1000, 1000, 1000};
  const auto raster = route_difference(kGrouped, Config{.group_m = 1}, s, {0, 1});
  ASSERT_TRUE(raster.has_value());
  // CTA 1 is tile (1, 0) in groups of 8 rows and (0, 1) row by row: A's rows differ, from the
  // first copy after the mbarrier inits' BUBBLE.
  EXPECT_NE(raster->find("CTA 1: WarpGroup 0: instruction 1 "), std::string::npos) << *raster;
  EXPECT_NE(raster->find("TMA_LOAD map0 0,128 s0"), std::string::npos) << *raster;

  std::string text = test::read_file(kGrouped);
  const std::string depth = "{pendings = 1 : i32}";
  ASSERT_NE(text.find(depth), std::string::npos);
  text.replace(text.find(depth), depth.size(), "{pendings = 0 : i32}");
  // In this build tree: other trees may run the same test at the same time.
  const std::filesystem::path path = std::string(SIMFA_BINARY_DIR) + "/gemm_ttgir_wait0.ttgir";
  std::ofstream(path) << text;
  const auto wait = route_difference(path.string(), Config{}, s, {0});
  std::filesystem::remove(path);
  ASSERT_TRUE(wait.has_value());
  EXPECT_NE(wait->find("TTGIR 'WGMMA_WAIT 0', gemm 'WGMMA_WAIT 1'"), std::string::npos) << *wait;
}

// Triton's own dumps of further configurations, when validation/h200/ttgir holds them
// (gemm_bm<BM>_bn<BN>_bk<BK>_s<S>_w<W>_g<G>.ttgir, written by tools/device on the H200): the
// tile, stages and warps come from the lowered kernel itself, GROUP_M from the name; the first,
// an interior and the last CTA of each shape are compared.
TEST(GemmTtgirEquivalence, DumpedConfigurationsFirstInteriorAndLastCta) {
  const std::filesystem::path dir = kSrc + "/validation/h200/ttgir";
  const std::regex name(R"(gemm_bm\d+_bn\d+_bk\d+_s\d+_w\d+_g(\d+)\.ttgir)");
  std::vector<std::filesystem::path> files;
  if (std::filesystem::is_directory(dir))
    for (const auto& e : std::filesystem::directory_iterator(dir))
      if (std::regex_match(e.path().filename().string(), name)) files.push_back(e.path());
  if (files.empty()) GTEST_SKIP() << "no gemm_bm*_bn*_bk*_s*_w*_g*.ttgir in " << dir;
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    std::smatch m;
    const std::string base = file.filename().string();
    std::regex_match(base, m, name);
    // The configuration as lowered: A's box is block_k x block_m, B's block_k x block_n.
    Harness h;
    auto lowered = h.ttgir(file.string(), Config{}, Shape{64, 64, 64});
    CtaProgram p;
    lowered->build(0, p);
    const auto& maps = lowered->tensor_maps();
    const Config c{.block_m = maps[0].box[1],
                   .block_n = maps[1].box[1],
                   .block_k = maps[0].box[0],
                   .stages = p.stage_count,
                   .warps = static_cast<std::int64_t>(4 * p.warpgroups.size()),
                   .group_m = std::stoll(m[1].str())};
    for (const Shape& s : kShapes) {
      const std::uint64_t n = c.ctas(s);
      const auto d = route_difference(file.string(), c, s, {0, n / 2, n - 1});
      EXPECT_FALSE(d.has_value()) << base << " " << describe(s) << ": " << d.value_or("");
    }
  }
}

}  // namespace
}  // namespace simfa
