// workload.ttgir and `simfa ttgir instrument`: the instrumentation pass against the device
// script's files, the static lowering instruction by instruction (GEMM, attention, 8 warps,
// warp specialization, spelling drift), the trace route against the static one on real Proton
// traces from the H200, and the errors malformed TTGIR and traces give (with their location).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "launch_args.h"
#include "proton_trace.h"
#include "simfa/error.h"
#include "support/null_build_context.h"
#include "support/program_listing.h"
#include "ttgir_instrument.h"
#include "ttgir_kernel.h"
#include "ttgir_source.h"
#include "ttgir_syntax.h"

namespace simfa::ttgir {
namespace {

const std::string kSrc = SIMFA_SOURCE_DIR;
const std::string kData = kSrc + "/tests/frontends/data/";
const std::string kDevice = kSrc + "/tests/data/ttgir/";
const std::string kTraces = kSrc + "/validation/h200/traces/";

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

using test::Keys;
using test::listing;
using test::repeat;
ParamValue str(const std::string& s) {
  return ParamValue{s};
}

/// Builds a TtgirSource from the schema's defaults and `keys`, key i on line 2 + i of "w.toml".
/// The lowering's tests read programs without the first-wave cold start (first_wave_bubble 0)
/// and without the mbarrier inits' and the store wait's calibrated cycles (mbarrier_init_cycles
/// and tma_store_wait_bytes_per_cycle 0) unless `keys` give them;
/// FirstWaveBubbleGoesToTheFirstWaveOnly and MbarrierInitsAndTheStoreWaitChargeTheirWarpGroups
/// test them.
struct Harness : test::NullBuildContext {
  std::unique_ptr<TtgirSource> make(Keys keys) {
    auto unless_given = [&](const char* name, ParamValue v) {
      bool given = false;
      for (const auto& k : keys) given = given || k.first == name;
      if (!given) keys.emplace_back(name, std::move(v));
    };
    unless_given("first_wave_bubble", ParamValue{std::int64_t{0}});
    unless_given("mbarrier_init_cycles", ParamValue{std::int64_t{0}});
    unless_given("tma_store_wait_bytes_per_cycle", ParamValue{0.0});
    return build<TtgirSource>(keys, ParamValue{std::int64_t{0}});
  }
};

// The committed GEMM (tests/data/ttgir/gemm_tma.ttgir): C = A B^T with A [M,K], B [N,K],
// 128x128x64 tiles, 3 stages, 4 warps, GROUP_M = 8.
std::string gemm_args(int m, int n, int k) {
  auto s = [](int v) { return std::to_string(v); };
  return "M=" + s(m) + ";N=" + s(n) + ";K=" + s(k) + ";a_desc.shape=" + s(m) + "x" + s(k) +
         ";b_desc.shape=" + s(n) + "x" + s(k) + ";c_desc.shape=" + s(m) + "x" + s(n);
}

// The committed attention (attn_fwd_tma.ttgir, 128x64 tiles, 8 warps) over Z*H heads.
std::string attn_args(int zh, int n_ctx) {
  const std::string rows = std::to_string(zh * n_ctx);
  return "N_CTX=" + std::to_string(n_ctx) + ";desc_q.shape=" + rows + "x128;desc_k.shape=" + rows +
         "x128;desc_v.shape=" + rows + "x128;desc_o.shape=" + rows + "x128";
}

/// What the two routes must agree on, per WarpGroup: the instruction list with TMA operands
/// resolved to their first row's global address (so "same tile" means "same lines").
std::vector<std::vector<std::string>> resolved(TtgirSource& source, std::uint64_t cta) {
  CtaProgram p;
  source.build(cta, p);
  std::vector<std::vector<std::string>> out;
  for (const WarpGroupProgram& wg : p.warpgroups) {
    std::vector<std::string> lines = listing(wg, p, source.tensor_maps());
    for (std::size_t k = 0; k < wg.code.size(); ++k) {
      const Instruction& i = wg.code[k];
      if (i.op != Opcode::kTmaLoad && i.op != Opcode::kTmaStore) continue;
      Addr first = 0;
      source.tensor_maps()[i.map].for_each_row(&p.coords[i.x], [&](Addr a, std::uint64_t) {
        if (first == 0) first = a;
      });
      lines[k] += " @" + std::to_string(first);
    }
    out.push_back(std::move(lines));
  }
  return out;
}

std::map<std::string, int> counts(const WarpGroupProgram& wg) {
  std::map<std::string, int> c;
  for (const Instruction& i : wg.code) ++c[opcode_name(i.op)];
  return c;
}

/// The message of the InputError `f` throws ("" when it throws none).
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// ---- the instrumentation pass ----

std::string instrumented(const std::string& path) {
  MlirDocument doc;
  read_mlir_file(path, doc, SourceLocation{path}, "TTGIR file");
  return instrument_ttgir(doc);
}

// tools/triton_trace.py's Python port wrote these fixtures (`--instrument`): the C++ pass must
// produce the same bytes, so the device and `simfa ttgir instrument` never drift apart.
TEST(TtgirInstrument, MatchesThePythonPortByteForByte) {
  for (const char* kernel : {"gemm_tma", "attn_fwd_tma"}) {
    SCOPED_TRACE(kernel);
    EXPECT_EQ(instrumented(kDevice + kernel + ".ttgir"),
              slurp(kData + "ttgir_" + kernel + ".instrumented.ttgir"));
  }
}

// The first device traces (tests/data/ttgir/*.instrumented.ttgir, tools/device/triton_trace.py)
// named sites "<op>_<NNN>_<shape>": the pass puts its markers at the same lines with the same
// site ids, so those traces translate too.
TEST(TtgirInstrument, SitesAreTheDeviceScriptsSites) {
  for (const char* kernel : {"gemm_tma", "attn_fwd_tma"}) {
    SCOPED_TRACE(kernel);
    const std::string device = slurp(kDevice + kernel + ".instrumented.ttgir");
    std::map<std::string, std::string> legacy;  // site id -> device name
    const std::regex record("proton.record start \"(([a-z_]+)_([0-9]{3})[^\"]*)\"");
    for (std::sregex_iterator it(device.begin(), device.end(), record), end; it != end; ++it)
      legacy[std::to_string(std::stoi((*it)[3]))] = (*it)[1];
    const std::string ours = instrumented(kDevice + kernel + ".ttgir");
    const std::regex scope("\"SIMFA\\|[^\"]*\\|site=([0-9]+)\"");
    std::string renamed;
    std::size_t last = 0;
    for (std::sregex_iterator it(ours.begin(), ours.end(), scope), end; it != end; ++it) {
      renamed += ours.substr(last, it->position() - last) + "\"" + legacy.at((*it)[1]) + "\"";
      last = it->position() + it->length();
    }
    renamed += ours.substr(last);
    EXPECT_EQ(renamed, device);
  }
}

TEST(TtgirInstrument, ScopesEncodeTheOpAsInThePapersStage2) {
  MlirDocument doc;
  read_mlir_file(kDevice + "gemm_tma.ttgir", doc, {}, "TTGIR file");
  const std::vector<Site> sites = enumerate_sites(doc);
  ASSERT_EQ(sites.size(), 12u);
  EXPECT_EQ(sites[5].scope,
            "SIMFA|WGMMA|M=128|N=128|K=64|instrM=64|instrN=128|instrK=16|warps=4x1|dtype=FP16|"
            "acc=FP32|mode=SS|async=1|site=5");
  EXPECT_EQ(sites[0].scope, "SIMFA|TMA_LOAD|desc=a_desc|box=128x64|dtype=FP16|bytes=16384|site=0");
  EXPECT_EQ(sites[4].scope, "SIMFA|MBAR_WAIT|site=4");
  EXPECT_EQ(sites[6].scope, "SIMFA|WGMMA_WAIT|pendings=1|site=6");
  EXPECT_EQ(sites[10].scope,
            "SIMFA|TMA_STORE|desc=c_desc|box=128x128|dtype=FP16|bytes=32768|site=10");
  // The attention's second dot takes P from registers (RS) and spans 8 warps (two WarpGroups).
  MlirDocument attn;
  read_mlir_file(kDevice + "attn_fwd_tma.ttgir", attn, {}, "TTGIR file");
  EXPECT_EQ(enumerate_sites(attn)[10].scope,
            "SIMFA|WGMMA|M=128|N=128|K=64|instrM=128|instrN=128|instrK=16|warps=8x1|dtype=FP16|"
            "acc=FP32|mode=RS|async=1|site=10");
}

TEST(TtgirInstrument, RunWritesTheFileAndRejectsInstrumentedInput) {
  const std::string out = ::testing::TempDir() + "ttgir_instrument_out.ttgir";
  testing::internal::CaptureStdout();
  EXPECT_EQ(run_ttgir_instrument(kDevice + "gemm_tma.ttgir", out), 0);
  const std::string printed = testing::internal::GetCapturedStdout();
  EXPECT_NE(printed.find("site 5 line 78: SIMFA|WGMMA|"), std::string::npos) << printed;
  EXPECT_EQ(slurp(out), slurp(kData + "ttgir_gemm_tma.instrumented.ttgir"));
  const std::string again = error_of([&] { run_ttgir_instrument(out, out + ".2"); });
  EXPECT_NE(again.find("ttgir_instrument_out.ttgir:56:5: error: the TTGIR is already "
                       "instrumented (proton.record)"),
            std::string::npos)
      << again;
  std::remove(out.c_str());
}

// ---- static lowering ----

// The committed GEMM for one 128x128 tile and K = 512 (8 k-tiles), derived from its TTGIR:
// a prologue loads k-tiles 0 and 1 into stages 0 and 1; iteration i waits for stage i % 3,
// issues the tile's 2 x 1 x 4 = 8 m64n128k16 WGMMAs as group i, keeps one group in flight and
// (for i < 6) loads k-tile i + 2 into stage (i + 2) % 3; the epilogue waits for every group,
// converts and stores the C tile. truncf and the local_alloc of C each touch 128x128 elements:
// 16384 / 128 lanes = 128 cycles, BUBBLE 256.
TEST(TtgirStatic, GemmIsTheSoftwarePipelineTritonEmitted) {
  Harness h;
  auto src = h.make({{"file", str(kDevice + "gemm_tma.ttgir")},
                     {"grid", str("1")},
                     {"args", str(gemm_args(128, 128, 512))}});
  CtaProgram p;
  src->build(0, p);
  ASSERT_EQ(p.warpgroups.size(), 1u);
  EXPECT_EQ(p.stage_count, 3u);
  EXPECT_EQ(p.consumers_per_stage, 1u);
  EXPECT_EQ(p.smem_bytes, 98328);  // 3 x (128x64 + 128x64) fp16 + 3 mbarriers; Triton: 98328
  EXPECT_EQ(p.warpgroups[0].registers, 168u * 128);  // 128 accumulators + 40
  std::vector<std::string> want = {"TMA_LOAD a_desc 0,0 s0", "TMA_LOAD b_desc 0,0 s0",
                                   "TMA_LOAD a_desc 64,0 s1", "TMA_LOAD b_desc 64,0 s1"};
  for (int i = 0; i < 8; ++i) {
    want.push_back("MB_WAIT " + std::to_string(i % 3));
    repeat(want, 8, "WGMMA 64,128,16 gid " + std::to_string(i));
    want.push_back("WGMMA_COMMIT " + std::to_string(i));
    want.push_back("WGMMA_WAIT 1");
    if (i < 6) {
      const std::string k = std::to_string(64 * (i + 2));
      const std::string s = " s" + std::to_string((i + 2) % 3);
      want.push_back("TMA_LOAD a_desc " + k + ",0" + s);
      want.push_back("TMA_LOAD b_desc " + k + ",0" + s);
    }
  }
  // The epilogue: truncf (one F2FP per 2 of the 128 x 128 accumulators) and the store of C to
  // shared memory, 1.5 ALU elements each, one compute BUBBLE.
  for (const char* line :
       {"WGMMA_WAIT 0", "BUBBLE 0 fp32 0 alu 24576 sfu 0", "TMA_STORE c_desc 0,0", "EXIT"})
    want.push_back(line);
  EXPECT_EQ(listing(p.warpgroups[0], p, src->tensor_maps()), want);

  // TensorMaps rebuilt from the descriptors: A [128, 512] fp16 row-major, box 128x64.
  const TensorMap& a = src->tensor_maps()[0];
  EXPECT_EQ(a.name, "a_desc");
  EXPECT_EQ(a.rank, 2u);
  EXPECT_EQ(a.shape[0], 512u);
  EXPECT_EQ(a.shape[1], 128u);
  EXPECT_EQ(a.stride[1], 1024u);
  EXPECT_EQ(a.box[0], 64u);
  EXPECT_EQ(a.box[1], 128u);
  EXPECT_EQ(a.base, kFirstTensorBase);
  EXPECT_EQ(src->tensor_maps()[1].base, kFirstTensorBase + kTensorAlignment);
}

// One k-tile: the prologue's second loads and the loop's loads are predicated off.
TEST(TtgirStatic, PredicatedCopiesOfAShortLoopAreNotIssued) {
  Harness h;
  auto src = h.make({{"file", str(kDevice + "gemm_tma.ttgir")},
                     {"grid", str("1")},
                     {"args", str(gemm_args(128, 128, 64))}});
  CtaProgram p;
  src->build(0, p);
  auto c = counts(p.warpgroups[0]);
  EXPECT_EQ(c["TMA_LOAD"], 2);
  EXPECT_EQ(c["MB_WAIT"], 1);
  EXPECT_EQ(c["WGMMA"], 8);
  EXPECT_EQ(c["WGMMA_WAIT"], 2);
}

// GROUP_M raster for a 2x2 tile grid: pid_m = pid % 2, pid_n = pid / 2. CTAs with one pid_m
// load the same A lines, CTAs with one pid_n the same B lines.
TEST(TtgirStatic, CtasSharingATileLoadTheSameAddresses) {
  Harness h;
  auto src = h.make({{"file", str(kDevice + "gemm_tma.ttgir")},
                     {"grid", str("4")},
                     {"args", str(gemm_args(256, 256, 128))}});
  auto tma = [&](std::uint64_t cta, const std::string& map) {
    std::vector<std::string> out;
    const auto programs = resolved(*src, cta);
    for (const std::string& line : programs[0])
      if (line.starts_with("TMA_LOAD " + map)) out.push_back(line);
    return out;
  };
  EXPECT_EQ(tma(0, "a_desc"), tma(2, "a_desc"));
  EXPECT_EQ(tma(1, "a_desc"), tma(3, "a_desc"));
  EXPECT_NE(tma(0, "a_desc"), tma(1, "a_desc"));
  EXPECT_EQ(tma(0, "b_desc"), tma(1, "b_desc"));
  EXPECT_NE(tma(0, "b_desc"), tma(2, "b_desc"));
  // CTA 3 is tile (1, 1): A rows from 128, at the real row stride K x 2 = 256 bytes.
  EXPECT_EQ(tma(3, "a_desc")[0],
            "TMA_LOAD a_desc 0,128 s0 @" + std::to_string(kFirstTensorBase + 128 * 256));
}

// 8 warps in two WarpGroups: each issues its half of the M rows (warpsPerCTA [8, 1]: one m64
// round covers 128 rows), the TMA copies come from the first WarpGroup alone.
TEST(TtgirStatic, EightWarpsSplitTheTileBetweenTwoWarpGroups) {
  Harness h;
  auto src = h.make({{"file", str(kData + "ttgir_gemm_nw8.ttgir")},
                     {"grid", str("4")},
                     {"args", str(gemm_args(256, 256, 512))}});
  CtaProgram p;
  src->build(0, p);
  ASSERT_EQ(p.warpgroups.size(), 2u);
  auto c0 = counts(p.warpgroups[0]);
  auto c1 = counts(p.warpgroups[1]);
  EXPECT_EQ(c0["WGMMA"], 8 * 4);
  EXPECT_EQ(c1["WGMMA"], 8 * 4);
  EXPECT_EQ(c0["TMA_LOAD"], 16);
  EXPECT_EQ(c1["TMA_LOAD"], 0);
  EXPECT_EQ(c0["TMA_STORE"], 1);
  EXPECT_EQ(c1["TMA_STORE"], 0);
  EXPECT_EQ(c0["MB_WAIT"], 8);
  EXPECT_EQ(c1["MB_WAIT"], 8);
  // The TMA store reads what both WarpGroups wrote to shared memory: Membar's barrier comes
  // before it in both (the SASS: BAR.SYNC between the STSMs and the UTMASTG), so the first
  // WarpGroup cannot store before the second has written its half.
  const auto l0 = listing(p.warpgroups[0], p, src->tensor_maps());
  const auto l1 = listing(p.warpgroups[1], p, src->tensor_maps());
  const auto store = std::find_if(l0.begin(), l0.end(),
                                  [](const std::string& l) { return l.starts_with("TMA_STORE"); });
  ASSERT_NE(store, l0.end());
  EXPECT_EQ(*std::prev(store), "BAR_WAIT 0");
  EXPECT_EQ(std::count(l0.begin(), l0.end(), "BAR_WAIT 0"),
            std::count(l1.begin(), l1.end(), "BAR_WAIT 0"));
  ASSERT_GE(l1.size(), 2u);
  EXPECT_EQ(l1[l1.size() - 2], "BAR_WAIT 0");  // the second meets the first's store barrier
  EXPECT_EQ(l1.back(), "EXIT");
}

// The 128x256 tile with 8 warps: each WarpGroup's m64n256k16 holds 128 accumulator registers a
// thread, and ptxas serializes them (its SASS waits after every HGMMA: validation/h200/ttgir/
// gemm_bm128_bn256_bk64_s3_w8_g1.sass), so with wgmma_serialization = auto each of a k-tile's
// four WGMMAs is a group of its own, waited for before the next; false keeps the TTGIR's one
// group a k-tile. The 128x128 tile's m64n128k16 (64 registers) stays one group; true forces it.
TEST(TtgirStatic, PtxasSerializesTheWideWgmmaOfThe128x256Tile) {
  const std::string wide = kSrc + "/validation/h200/ttgir/gemm_bm128_bn256_bk64_s3_w8_g1.ttgir";
  const std::string args = gemm_args(128, 256, 256);
  auto lowered = [&](const std::string& file, const std::string& serialization) {
    Harness h;
    auto src = h.make({{"file", str(file)},
                       {"grid", str("1")},
                       {"args", str(args)},
                       {"wgmma_serialization", str(serialization)}});
    CtaProgram p;
    src->build(0, p);
    return listing(p.warpgroups.back(), p, src->tensor_maps());
  };
  // The lines from the k-tile's first WGMMA up to the loop's wait_group 1.
  auto first_k_tile = [](const std::vector<std::string>& l) {
    auto b =
        std::find_if(l.begin(), l.end(), [](const auto& x) { return x.starts_with("WGMMA "); });
    auto e = std::find(b, l.end(), "WGMMA_WAIT 1");
    return std::vector<std::string>(b, e == l.end() ? e : e + 1);
  };
  std::vector<std::string> serialized;
  for (int g = 0; g < 4; ++g) {
    serialized.push_back("WGMMA 64,256,16 gid " + std::to_string(g));
    serialized.push_back("WGMMA_COMMIT " + std::to_string(g));
    serialized.push_back("WGMMA_WAIT 0");
  }
  serialized.push_back("WGMMA_WAIT 1");
  EXPECT_EQ(first_k_tile(lowered(wide, "auto")), serialized);
  EXPECT_EQ(first_k_tile(lowered(wide, "true")), serialized);

  std::vector<std::string> grouped;
  repeat(grouped, 4, "WGMMA 64,256,16 gid 0");
  grouped.push_back("WGMMA_COMMIT 0");
  grouped.push_back("WGMMA_WAIT 1");
  EXPECT_EQ(first_k_tile(lowered(wide, "false")), grouped);

  const auto narrow = first_k_tile(lowered(kDevice + "gemm_tma.ttgir", "auto"));
  EXPECT_EQ(std::count(narrow.begin(), narrow.end(), "WGMMA_COMMIT 0"), 1);
  EXPECT_EQ(std::count(narrow.begin(), narrow.end(), "WGMMA_WAIT 0"), 0);
  const auto forced = first_k_tile(lowered(kDevice + "gemm_tma.ttgir", "true"));
  EXPECT_EQ(std::count(forced.begin(), forced.end(), "WGMMA_WAIT 0"), 8);
}

// The register estimate (docs/ttgir.md §4): 40 + what one loop's dots hold, accumulators and a
// register A operand. The committed attention (128x64, D = 128, 8 warps): S 128x64 fp32 (32
// registers a thread), O 128x128 fp32 (64) and P 128x64 fp16 (16): 152. The causal D = 64 kernel
// runs two loops (off-band, then the diagonal) whose dots do not hold theirs at once: 40 + 32 + 32
// + 16 = 120, where summing both loops' accumulators gave 168 and a CTA an SM; ptxas gave it 128
// (validation/h200/attention/attention_suite.csv, n_regs), two CTAs an SM.
TEST(TtgirStatic, RegisterEstimateHoldsOneLoopsDotsAndTheirRegisterOperands) {
  Harness h;
  auto attn = h.make({{"file", str(kDevice + "attn_fwd_tma.ttgir")},
                      {"grid", str("4x4")},
                      {"args", str(attn_args(4, 512))}});
  CtaProgram p;
  attn->build(0, p);
  ASSERT_EQ(p.warpgroups.size(), 2u);
  EXPECT_EQ(p.warpgroups[0].registers, 152u * 128);
  const std::string causal =
      kSrc + "/validation/h200/attention/ttgir/attn_fwd_128x64_w8_s3_d64_c1_g0.ttgir";
  auto src = h.make({{"file", str(causal)},
                     {"grid", str("8x64")},
                     {"args", str("desc_q.shape=65536x64;desc_k.shape=65536x64;desc_v.shape="
                                  "65536x64;desc_o.shape=65536x64;N_CTX=1024;HQ=16")}});
  CtaProgram c;
  src->build(7, c);
  ASSERT_EQ(c.warpgroups.size(), 2u);
  EXPECT_EQ(c.warpgroups[0].registers, 120u * 128);
  EXPECT_EQ(c.warpgroups[1].registers, 120u * 128);
}

// Attention, 128x64 tiles, 8 warps: per KV tile each WarpGroup issues QK^T (8 m64n64k16, K =
// 128 in steps of 16) and PV (4 m64n128k16), and pays the online softmax as compute BUBBLEs
// priced by the cost table (docs/ttgir.md §4).
TEST(TtgirStatic, AttentionLowersQkSoftmaxPvPerWarpGroup) {
  Harness h;
  auto src = h.make({{"file", str(kDevice + "attn_fwd_tma.ttgir")},
                     {"grid", str("4x4")},
                     {"args", str(attn_args(4, 512))},
                     {"fuse_reductions", ParamValue{false}},
                     {"reduce_cycles_per_element", ParamValue{10.0}}});
  CtaProgram p;
  src->build(5, p);  // program id (1, 1)
  ASSERT_EQ(p.warpgroups.size(), 2u);
  EXPECT_EQ(p.stage_count, 7u);  // Q's barrier and two rings of 3
  for (std::size_t w = 0; w < 2; ++w) {
    auto c = counts(p.warpgroups[w]);
    EXPECT_EQ(c["WGMMA"], 8 * (8 + 4));
    EXPECT_EQ(c["WGMMA_COMMIT"], 16);
    EXPECT_EQ(c["MB_WAIT"], 1 + 8 * 2);
    EXPECT_EQ(c["TMA_LOAD"], w == 0 ? 1 + 2 * 8 : 0);
    EXPECT_GT(c["BUBBLE"], 8);
  }
  const auto lines = listing(p.warpgroups[0], p, src->tensor_maps());
  ASSERT_GT(lines.size(), 31u);
  // Triton's Membar barriers: before every TMA copy and mbarrier wait.
  EXPECT_EQ(lines[0], "BAR_WAIT 0");
  EXPECT_EQ(lines[1], "TMA_LOAD desc_q 0,640 s0");  // off_hz * N_CTX + start_m * 128
  EXPECT_EQ(lines[4], "BAR_WAIT 0");
  EXPECT_EQ(lines[5], "TMA_LOAD desc_k 0,512 s1");
  EXPECT_EQ(lines[7], "TMA_LOAD desc_v 0,512 s4");
  EXPECT_EQ(lines[23], "WGMMA_WAIT 0");
  // The first KV step's softmax over this WarpGroup's 64 x 64 scores (32 a thread, a row's 64
  // over 4 threads: 16 each in sequence, 10 cycles each = 160). The barrier Triton puts before
  // V's mbarrier wait meets before the softmax, right after the QK^T wait, where ptxas
  // schedules it (the SASS of validation/h200/attention/ttgir/): the register arithmetic
  // between them runs after it.
  const std::vector<std::string> softmax = {
      "BAR_WAIT 0",
      "BUBBLE 160 fp32 0 alu 4096 sfu 0",    // row max: 4096 FMNMX
      "BUBBLE 0 fp32 4288 alu 64 sfu 4160",  // S * scale - max (FFMA), exp2, the rescale
                                             // factor of the 64 rows, the rows' max
      "BUBBLE 160 fp32 4096 alu 0 sfu 0",    // row sum: 4096 FADD
      "BUBBLE 0 fp32 8192 alu 64 sfu 0",     // acc (64 x 128) * alpha, l_i
      "MB_WAIT 4",
      "BUBBLE 0 fp32 0 alu 2048 sfu 0",  // P to f16 (two a F2FP); to the dot: free
      "WGMMA 64,128,16 gid 1"};
  EXPECT_EQ(std::vector<std::string>(lines.begin() + 24, lines.begin() + 32), softmax);
}

// fuse_reductions (docs/calibration.md §20; the default since §30): the row sum of P joins the
// phase that computes P,
// as ptxas interleaves them (an FADD after each MUFU.EX2 in validation/h200/attention/ttgir/
// attn_fwd_*.sass.gz). That phase lasts at least the sum's 13 x 16 = 208 cycles and no phase
// of its own follows; the row max, of the QK^T dot's result, stays a phase of its own.
TEST(TtgirStatic, FusedRowSumRunsInThePhaseOfItsExp2) {
  Harness h;
  auto src = h.make({{"file", str(kDevice + "attn_fwd_tma.ttgir")},
                     {"grid", str("4x4")},
                     {"args", str(attn_args(4, 512))}});  // the defaults: fused, 13 cycles
  CtaProgram p;
  src->build(5, p);
  const auto lines = listing(p.warpgroups[0], p, src->tensor_maps());
  ASSERT_GT(lines.size(), 31u);
  EXPECT_EQ(lines[23], "WGMMA_WAIT 0");
  const std::vector<std::string> softmax = {
      "BAR_WAIT 0",
      "BUBBLE 208 fp32 0 alu 4096 sfu 0",      // row max: 4096 FMNMX
      "BUBBLE 208 fp32 8384 alu 64 sfu 4160",  // S * scale - max (FFMA), exp2, the rescale
                                               // factor, the rows' max, and the row sum:
                                               // 4096 FADD
      "BUBBLE 0 fp32 8192 alu 64 sfu 0",       // acc (64 x 128) * alpha, l_i
      "MB_WAIT 4",
      "BUBBLE 0 fp32 0 alu 2048 sfu 0",  // P to f16
      "WGMMA 64,128,16 gid 1"};
  EXPECT_EQ(std::vector<std::string>(lines.begin() + 24, lines.begin() + 31), softmax);
}

// Warp specialization (hand-written fixture): the default partition consumes, the 1-warp
// producer partition is a WarpGroup of its own. Empty barriers (arrived by the consumer,
// waited by the producer with the opposite parity) become ACQUIRE/RELEASE_STAGE, full barriers
// (TMA bytes) MB_WAIT; registers come from actualRegisters.
TEST(TtgirStatic, WarpSpecializePartitionsAreWarpGroups) {
  Harness h;
  auto src = h.make({{"file", str(kData + "ttgir_ws_small.ttgir")},
                     {"grid", str("1")},
                     {"args", str("K=256;a_desc.shape=128x256;b_desc.shape=128x256")}});
  CtaProgram p;
  src->build(0, p);
  ASSERT_EQ(p.warpgroups.size(), 2u);
  EXPECT_EQ(p.stage_count, 4u);  // full 0, 1; empty 2, 3
  EXPECT_EQ(p.consumers_per_stage, 1u);
  EXPECT_EQ(p.warpgroups[0].registers, 232u * 128);
  EXPECT_EQ(p.warpgroups[1].registers, 40u * 128);
  std::vector<std::string> consumer, producer;
  for (int i = 0; i < 4; ++i) {
    const std::string s = std::to_string(i % 2);
    consumer.push_back("MB_WAIT " + s);
    repeat(consumer, 8, "WGMMA 64,128,16 gid " + std::to_string(i));
    consumer.push_back("WGMMA_COMMIT " + std::to_string(i));
    consumer.push_back("WGMMA_WAIT 0");
    consumer.push_back("RELEASE_STAGE " + std::to_string(2 + i % 2));
    producer.push_back("ACQUIRE_STAGE " + std::to_string(2 + i % 2));
    producer.push_back("TMA_LOAD a_desc " + std::to_string(64 * i) + ",0 s" + s);
    producer.push_back("TMA_LOAD b_desc " + std::to_string(64 * i) + ",0 s" + s);
  }
  consumer.push_back("EXIT");
  producer.push_back("EXIT");
  EXPECT_EQ(listing(p.warpgroups[0], p, src->tensor_maps()), consumer);
  EXPECT_EQ(listing(p.warpgroups[1], p, src->tensor_maps()), producer);
}

// Triton 3.0-3.2 spellings (triton_gpu./triton_nvidia_gpu. prefixes, memdesc_subview with a
// trailing index) lower to the same program.
TEST(TtgirStatic, OlderSpellingsLowerTheSame) {
  std::string text = slurp(kDevice + "gemm_tma.ttgir");
  text =
      std::regex_replace(text, std::regex("ttg\\.memdesc_index (%[a-z_0-9]+)\\[(%[a-z_0-9]+)\\]"),
                         "triton_gpu.memdesc_subview $1[$2, %c0_i32]");
  text = std::regex_replace(text, std::regex("ttng\\.warp_group_dot "),
                            "triton_nvidia_gpu.warp_group_dot ");
  ASSERT_NE(text.find("triton_gpu.memdesc_subview %acc[%c0_i32, %c0_i32]"), std::string::npos);
  const std::string old_path = ::testing::TempDir() + "gemm_old_spelling.ttgir";
  std::ofstream(old_path) << text;
  Harness h;
  const std::string args = gemm_args(256, 256, 512);
  auto old_src = h.make({{"file", str(old_path)}, {"grid", str("4")}, {"args", str(args)}});
  auto new_src =
      h.make({{"file", str(kDevice + "gemm_tma.ttgir")}, {"grid", str("4")}, {"args", str(args)}});
  for (std::uint64_t cta = 0; cta < 4; ++cta)
    EXPECT_EQ(resolved(*old_src, cta), resolved(*new_src, cta));
  std::remove(old_path.c_str());
}

TEST(TtgirStatic, CalibrationBubblesGoWhereTheyBelong) {
  Harness h;
  auto src = h.make({{"file", str(kDevice + "gemm_tma.ttgir")},
                     {"grid", str("1")},
                     {"args", str(gemm_args(128, 128, 512))},
                     {"prologue_bubble", ParamValue{std::int64_t{4000}}},
                     {"per_iteration_bubble", ParamValue{std::int64_t{300}}}});
  CtaProgram p;
  src->build(0, p);
  const auto lines = listing(p.warpgroups[0], p, src->tensor_maps());
  EXPECT_EQ(lines[0], "BUBBLE 4000");
  EXPECT_EQ(lines[5], "BUBBLE 300");  // the first iteration, before its MB_WAIT
  EXPECT_EQ(lines[6], "MB_WAIT 0");
  EXPECT_EQ(counts(p.warpgroups[0])["BUBBLE"], 1 + 8 + 1);
}

// The first wave is SMs x the CTAs one SM holds (here its shared memory: one CTA, then two);
// only its CTAs start with first_wave_bubble, every WarpGroup of them, before prologue_bubble's
// work (docs/calibration.md §21).
TEST(TtgirStatic, FirstWaveBubbleGoesToTheFirstWaveOnly) {
  const Keys keys{{"file", str(kDevice + "gemm_tma.ttgir")},
                  {"grid", str("8")},
                  {"args", str(gemm_args(256, 512, 128))},
                  {"first_wave_bubble", ParamValue{std::int64_t{2600}}}};
  for (const std::int64_t per_sm : {1, 2}) {
    SCOPED_TRACE(std::to_string(per_sm) + " CTAs an SM");
    Harness h;
    CtaProgram probe;
    h.make(keys)->build(0, probe);
    h.gpu.sm_count = 2;
    h.gpu.max_ctas_per_sm = 32;
    h.gpu.max_warpgroups_per_sm = 16;
    h.gpu.regs_per_sm = 65536;
    h.gpu.smem_per_sm_bytes = probe.smem_bytes * per_sm + probe.smem_bytes / 2;
    auto src = h.make(keys);
    const auto wave = static_cast<std::uint64_t>(2 * per_sm);
    bool reported = false;
    for (const auto& [k, v] : src->parameters())
      if (k == "first_wave_ctas") reported = v == std::to_string(wave);
    EXPECT_TRUE(reported);
    for (std::uint64_t cta = 0; cta < src->cta_count(); ++cta) {
      CtaProgram p;
      src->build(cta, p);
      const auto lines = listing(p.warpgroups[0], p, src->tensor_maps());
      EXPECT_EQ(lines[0] == "BUBBLE 2600", cta < wave) << "CTA " << cta;
    }
  }
}

// mbarrier_init_cycles and tma_store_wait_bytes_per_cycle (docs/calibration.md §30): every
// WarpGroup waits at each of the 7 ttng.init_barrier (Q's and two rings of 3), and the WarpGroup
// that issued O's 128x128 fp16 store (32 KiB) waits at async_tma_store_wait for its bytes at the
// given rate; nothing else moves, and the trace route takes neither.
TEST(TtgirStatic, MbarrierInitsAndTheStoreWaitChargeTheirWarpGroups) {
  auto calibration_cycles = [](const WarpGroupProgram& wg) {
    std::uint64_t c = 0;
    for (const Instruction& i : wg.code)
      if (i.op == Opcode::kBubble && i.stage == 0) c += i.x;
    return c;
  };
  const Keys base{{"file", str(kDevice + "attn_fwd_tma.ttgir")},
                  {"grid", str("4x4")},
                  {"args", str(attn_args(4, 512))}};
  Keys plain = base, costed = base;
  plain.emplace_back("mbarrier_init_cycles", ParamValue{std::int64_t{0}});
  plain.emplace_back("tma_store_wait_bytes_per_cycle", ParamValue{0.0});
  costed.emplace_back("mbarrier_init_cycles", ParamValue{std::int64_t{100}});
  costed.emplace_back("tma_store_wait_bytes_per_cycle", ParamValue{30.0});
  Harness h;
  CtaProgram p0, p1;
  h.make(plain)->build(5, p0);
  h.make(costed)->build(5, p1);
  ASSERT_EQ(p0.warpgroups.size(), 2u);
  ASSERT_EQ(p1.warpgroups.size(), 2u);
  const std::uint64_t store = (32768 + 29) / 30;  // ceil(32 KiB / 30 B a cycle)
  EXPECT_EQ(calibration_cycles(p1.warpgroups[0]), calibration_cycles(p0.warpgroups[0]) + 7 * 100 + store);
  EXPECT_EQ(calibration_cycles(p1.warpgroups[1]), calibration_cycles(p0.warpgroups[1]) + 7 * 100);
  for (std::size_t w = 0; w < 2; ++w) {
    auto c0 = counts(p0.warpgroups[w]);
    auto c1 = counts(p1.warpgroups[w]);
    c0.erase("BUBBLE");
    c1.erase("BUBBLE");
    EXPECT_EQ(c0, c1) << "WarpGroup " << w;
  }
  // The first init is Q's, before its copy: the first thing each WarpGroup does.
  const auto lines = listing(p1.warpgroups[1], p1, h.make(costed)->tensor_maps());
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0], "BUBBLE 100");
}

// The static route's defaults are the probe's calibration (docs/calibration.md §30), reported
// with the workload's parameters; the trace route takes neither (its times hold both).
TEST(TtgirStatic, DefaultsChargeTheProbesInitAndStoreWait) {
  test::NullBuildContext ctx;
  auto src = ctx.build<TtgirSource>({{"file", str(kDevice + "attn_fwd_tma.ttgir")},
                                     {"grid", str("4x4")},
                                     {"args", str(attn_args(4, 512))},
                                     {"first_wave_bubble", ParamValue{std::int64_t{0}}}},
                                    ParamValue{std::int64_t{0}});
  const auto reported = src->parameters();
  std::map<std::string, std::string> params(reported.begin(), reported.end());
  EXPECT_EQ(params["mbarrier_init_cycles"], "177");
  EXPECT_EQ(params["tma_store_wait_bytes_per_cycle"].substr(0, 4), "36.0");
  CtaProgram p;
  src->build(5, p);
  const auto lines = listing(p.warpgroups[1], p, src->tensor_maps());
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0], "BUBBLE 177");  // Q's mbarrier init
  const auto last = listing(p.warpgroups[0], p, src->tensor_maps());
  ASSERT_GT(last.size(), 2u);
  EXPECT_EQ(last[last.size() - 2], "BUBBLE 911");  // ceil(32 KiB / 36 B a cycle), then EXIT
}

// ---- the trace route against the static route ----

/// Both routes for every CTA: same instructions per WarpGroup, same tile addresses, same gids.
void expect_routes_agree(const std::string& trace, const std::string& ttgir,
                         const std::string& grid, const std::string& args) {
  Harness h;
  auto traced = h.make(
      {{"trace", str(trace)}, {"ttgir", str(ttgir)}, {"grid", str(grid)}, {"args", str(args)}});
  auto lowered = h.make({{"file", str(ttgir)}, {"grid", str(grid)}, {"args", str(args)}});
  ASSERT_EQ(traced->cta_count(), lowered->cta_count());
  for (std::uint64_t cta = 0; cta < traced->cta_count(); ++cta) {
    SCOPED_TRACE("CTA " + std::to_string(cta));
    const auto a = resolved(*traced, cta);
    const auto b = resolved(*lowered, cta);
    ASSERT_EQ(a, b);
  }
}

// H200, Triton 3.6, SIMFA scopes (tools/triton_trace.py): 1 CTA x 4 warps x 47 scopes.
TEST(TtgirTrace, GemmTraceTranslatesToTheStaticProgram) {
  expect_routes_agree(kData + "ttgir_gemm_128x128x512.chrome_trace", kDevice + "gemm_tma.ttgir",
                      "1", gemm_args(128, 128, 512));
  // The instrumented TTGIR works as the trace's TTGIR too.
  expect_routes_agree(kData + "ttgir_gemm_128x128x512.chrome_trace",
                      kData + "ttgir_gemm_tma.instrumented.ttgir", "1", gemm_args(128, 128, 512));
}

TEST(TtgirTrace, GzippedMultiCtaTrace) {
  expect_routes_agree(kData + "ttgir_gemm_256x256x512.chrome_trace.gz", kDevice + "gemm_tma.ttgir",
                      "4", gemm_args(256, 256, 512));
}

// The first device traces with the "<op>_<NNN>_<shape>" scope names.
TEST(TtgirTrace, DeviceScriptTracesTranslate) {
  expect_routes_agree(kDevice + "gemm_tma_128x128x512.chrome_trace", kDevice + "gemm_tma.ttgir",
                      "1", gemm_args(128, 128, 512));
  expect_routes_agree(kTraces + "attn_1x4x512.chrome_trace.gz", kDevice + "attn_fwd_tma.ttgir",
                      "4x4", attn_args(4, 512));
}

// 1024 CTAs on 132 SMs, 192512 events.
TEST(TtgirTrace, FullGridTrace) {
  expect_routes_agree(kTraces + "gemm_4096x4096x512.chrome_trace.gz", kDevice + "gemm_tma.ttgir",
                      "1024", gemm_args(4096, 4096, 512));
}

// K = 8192 runs 647 scopes a warp; Proton kept the last 128 (it warned "first 1038 events are
// dropped due to insufficient buffer size (256/1294)" on the device).
TEST(TtgirTrace, ProtonBufferOverflowIsReportedOrFilled) {
  Harness h;
  const Keys keys = {{"trace", str(kData + "ttgir_gemm_128x128x8192.chrome_trace.gz")},
                     {"ttgir", str(kDevice + "gemm_tma.ttgir")},
                     {"args", str(gemm_args(128, 128, 8192))}};
  const std::string e = error_of([&] { h.make(keys); });
  EXPECT_NE(e.find("ttgir_gemm_128x128x8192.chrome_trace.gz:1:"), std::string::npos) << e;
  EXPECT_NE(e.find("records 128 scopes where the TTGIR executes 647 sites"), std::string::npos)
      << e;
  EXPECT_NE(e.find("Proton keeps 256 records (128 scopes) a warp"), std::string::npos) << e;

  Keys fill = keys;
  fill.emplace_back("lost_events", str("fill"));
  auto traced = h.make(fill);
  auto lowered = h.make({{"file", str(kDevice + "gemm_tma.ttgir")},
                         {"grid", str("1")},
                         {"args", str(gemm_args(128, 128, 8192))}});
  EXPECT_EQ(resolved(*traced, 0), resolved(*lowered, 0));
  bool reported = false;
  for (const auto& [k, v] : traced->parameters())
    reported |= k == "trace.filled_scopes" && v != "0";
  EXPECT_TRUE(reported);
}

// A warp-specialized kernel's warps: 0-3 the default partition, 4 the producer (its
// warpGroupStartIds); each partition's warps form its WarpGroups.
TEST(TtgirTrace, PartitionWarpsFormTheirOwnWarpGroups) {
  Harness h;
  const std::string ttgir = kData + "ttgir_ws_small.ttgir";
  const std::string args = "K=256;a_desc.shape=128x256;b_desc.shape=128x256";
  MlirDocument doc;
  read_mlir_file(ttgir, doc, {}, "TTGIR file");
  const std::vector<Site> sites = enumerate_sites(doc);
  std::string json = "{\"traceEvents\": [\n";
  double ts = 0;
  auto event = [&](int warp, int site) {
    const std::string sep = ts > 0 ? ",\n" : "";
    ts += 1;
    json += sep + "{\"name\": \"" + sites[site].scope +
            "\", \"ph\": \"X\", \"pid\": \"ws_gemm Core3 CTA0\", \"tid\": \"warp " +
            std::to_string(warp) + " (line 0)\", \"ts\": " + std::to_string(ts) + "}";
  };
  for (int i = 0; i < 4; ++i) {
    for (int warp = 0; warp < 4; ++warp)
      for (int site : {0, 1, 2, 3}) event(warp, site);  // consumer: wait, dot, dot wait, arrive
    for (int site : {4, 5, 6}) event(4, site);          // producer: wait, two loads
  }
  json += "\n]}\n";
  const std::string path = ::testing::TempDir() + "ws_small.chrome_trace";
  std::ofstream(path) << json;
  expect_routes_agree(path, ttgir, "1", args);
  std::remove(path.c_str());
}

// ---- errors ----

TEST(TtgirErrors, TruncatedJsonIsLocated) {
  Harness h;
  const std::string e = error_of([&] {
    h.make({{"trace", str(kData + "ttgir_truncated.chrome_trace")},
            {"ttgir", str(kDevice + "gemm_tma.ttgir")},
            {"args", str(gemm_args(128, 128, 512))}});
  });
  EXPECT_NE(e.find("ttgir_truncated.chrome_trace:1:"), std::string::npos) << e;
  EXPECT_NE(e.find("truncated JSON: the file ends inside the traceEvents array"), std::string::npos)
      << e;
}

TEST(TtgirErrors, AWarpWithMissingEventsIsLocated) {
  Harness h;
  const std::string e = error_of([&] {
    h.make({{"trace", str(kData + "ttgir_missing_warp_events.chrome_trace")},
            {"ttgir", str(kDevice + "gemm_tma.ttgir")},
            {"args", str(gemm_args(128, 128, 512))}});
  });
  // Warp 2's 10th scope was removed: the error points at its 10th event now (line 105).
  EXPECT_NE(e.find("ttgir_missing_warp_events.chrome_trace:105:1: error: CTA 0 warp 2 has 46 "
                   "events where warp 0 of its WarpGroup has 47: a warp with missing events"),
            std::string::npos)
      << e;
}

TEST(TtgirErrors, UnknownOpIsNamedOrChargedByTheRule) {
  Harness h;
  const Keys keys = {{"file", str(kData + "ttgir_unknown_op.ttgir")}, {"grid", str("2")}};
  const std::string e = error_of([&] { h.make(keys); });
  EXPECT_NE(e.find("ttgir_unknown_op.ttgir:7:5: error: unknown op 'tt.store'"), std::string::npos)
      << e;
  Keys bubble = keys;
  bubble.emplace_back("unknown_ops", str("bubble"));
  auto src = h.make(bubble);
  CtaProgram p;
  src->build(1, p);
  // 256 elements over one WarpGroup, charged as ALU work.
  EXPECT_EQ(listing(p.warpgroups[0], p, src->tensor_maps()),
            (std::vector<std::string>{"BUBBLE 0 fp32 0 alu 256 sfu 0", "EXIT"}));
  bool listed = false;
  for (const auto& [k, v] : src->parameters())
    listed |= k == "unknown_ops_charged" && v == "tt.store at 7:5";
  EXPECT_TRUE(listed);
}

TEST(TtgirErrors, MissingDescriptorIsNamed) {
  Harness h;
  const std::string e = error_of([&] {
    h.make({{"file", str(kDevice + "gemm_tma.ttgir")},
            {"grid", str("1")},
            {"args", str("M=128;N=128;K=512;a_desc.shape=128x512;c_desc.shape=128x128")}});
  });
  EXPECT_NE(e.find("w.toml:4:1: error: [workload] missing descriptor shape: b_desc (declared at "),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("gemm_tma.ttgir:58:5) needs b_desc.shape=AxB in args (elements, outermost "
                   "first; its block is 128x64)"),
            std::string::npos)
      << e;
}

TEST(TtgirErrors, MissingScalarArgumentIsNamedWhereItIsNeeded) {
  Harness h;
  const std::string e = error_of([&] {
    h.make({{"file", str(kDevice + "gemm_tma.ttgir")},
            {"grid", str("1")},
            {"args", str("M=128;N=128;a_desc.shape=128x512;b_desc.shape=128x512;"
                         "c_desc.shape=128x128")}});
  });
  // The first op that needs a number computed from K: the prologue's load predicate.
  EXPECT_NE(e.find("gemm_tma.ttgir:56:5: error: the predicate %acc_20 is not known: it depends on "
                   "kernel argument %K ('K'), which args does not give"),
            std::string::npos)
      << e;
}

TEST(TtgirErrors, UnknownArgumentSuggestsTheClosest) {
  Harness h;
  const std::string e = error_of([&] {
    h.make({{"file", str(kDevice + "gemm_tma.ttgir")},
            {"grid", str("1")},
            {"args", str(gemm_args(128, 128, 512) + ";a_dsc.shape=1x1")}});
  });
  EXPECT_NE(e.find("'a_dsc.shape' is not an argument of kernel gemm_tma_kernel (did you mean "
                   "'a_desc.shape'?)"),
            std::string::npos)
      << e;
}

TEST(TtgirErrors, UnbalancedRegionIsLocated) {
  Harness h;
  const std::string e = error_of([&] {
    h.make({{"file", str(kData + "ttgir_unbalanced.ttgir")}, {"grid", str("1")}});
  });
  EXPECT_NE(e.find("ttgir_unbalanced.ttgir:9:3: error: this '}' closes the region opened at 6:52"),
            std::string::npos)
      << e;
}

// Found fuzzing (docs/reliability.md): each was a crash (an escaped std::out_of_range, a 32 GB
// allocation, a stack overflow) before it was a located error.
TEST(TtgirErrors, HostileCountsAndNestingAreLocated) {
  auto parse_error = [](const std::string& text) {
    return error_of([&] {
      MlirDocument doc;
      doc.file = "k.ttgir";
      doc.text = text;
      parse_mlir(doc);
    });
  };
  EXPECT_EQ(parse_error("%a:99999999999999999999 = arith.constant 1 : i32\n"),
            "k.ttgir:1:4: error: %a:99999999999999999999: a result group holds 1 to 1024 values");
  EXPECT_EQ(parse_error("%a:-1 = arith.constant 1 : i32\n"),
            "k.ttgir:1:4: error: %a:-1: a result group holds 1 to 1024 values");
  EXPECT_EQ(parse_error("%a:0 = arith.constant 1 : i32\n"),
            "k.ttgir:1:4: error: %a:0: a result group holds 1 to 1024 values");
  EXPECT_EQ(parse_error("%b = arith.addi %a#3000000000, %a : i32\n"),
            "k.ttgir:1:20: error: result index #3000000000 is too large");
  std::string deep;
  for (int k = 0; k < 100000; ++k) deep += "x.y {\n";
  EXPECT_EQ(parse_error(deep), "k.ttgir:65:5: error: regions nested more than 64 deep");
}

// fuzz_ttgir's finding (docs/reliability.md): the lowering read past an op's operands and wrote
// through a result slot it did not have.
TEST(TtgirErrors, ScalarOpsTakeTheirOperandsAndGiveOneResult) {
  auto compile_error = [](const std::string& body) {
    return error_of([&] {
      MlirDocument doc;
      doc.file = "k.ttgir";
      doc.text = "module {\n  tt.func @k() {\n" + body + "    tt.return\n  }\n}\n";
      parse_mlir(doc);
      KernelProgram kernel(doc, CostRules{});
    });
  };
  const std::string a = "    %a = arith.constant 1 : i32\n";
  EXPECT_EQ(compile_error(a + "    %b = arith.addi +a#9, %a : i32\n"),
            "k.ttgir:4:10: error: 'arith.addi' takes 2 operand(s), here 1");
  EXPECT_EQ(compile_error(a + "    arith.addi %a, %a : i32\n"),
            "k.ttgir:4:5: error: 'arith.addi' gives one result, here 0");
  EXPECT_EQ(compile_error("    arith.constant 1 : i32\n"),
            "k.ttgir:3:5: error: 'arith.constant' gives one result, here 0");
}

// UBSan's reports in the lowering (docs/reliability.md): -2^63 / -1, shifts by a negative amount,
// an i64 memdesc index times the view's stride.
TEST(TtgirErrors, ScalarArithmeticStaysDefined) {
  Harness h;
  const std::string corpus = kSrc + "/tests/fuzz/corpus/ttgir/";
  auto error = [&](const std::string& file, const std::string& args = "") {
    return error_of([&] {
      h.make({{"file", str(corpus + file)}, {"grid", str("4")}, {"args", str(args)}});
    });
  };
  for (const char* op : {"divsi", "remsi", "ceildivsi", "floordivsi"}) {
    const std::string e = error(std::string("regression-") + op + "-int64-min-by-minus-one.ttgir");
    EXPECT_NE(e.find(":5:10: error: signed division overflows: -2^63 / -1 (CTA 0)"),
              std::string::npos)
        << e;
  }
  for (const char* op : {"shli", "shrsi", "shrui"})
    EXPECT_EQ(error(std::string("regression-") + op + "-by-minus-one.ttgir"), "") << op;
  const std::string e = error("regression-memdesc-index-int64-max.ttgir", gemm_args(256, 256, 512));
  EXPECT_NE(
      e.find(":57:13: error: memdesc index 9223372036854775807 puts the view outside 64 bits"),
      std::string::npos)
      << e;
}

// Found reviewing the warp_specialize reader (docs/reliability.md): a partition of 10^9 warps ran
// out of memory, one of 2^32 - 1 wrapped its WarpGroup count to 0 and overflowed a heap buffer.
TEST(TtgirErrors, PartitionWarpsStartsAndRegistersAreBounded) {
  Harness h;
  const std::string corpus = kSrc + "/tests/fuzz/corpus/ttgir/";
  auto error = [&](const std::string& file) {
    return error_of([&] {
      h.make({{"file", str(corpus + file)},
              {"grid", str("1")},
              {"args", str("K=256;a_desc.shape=128x256;b_desc.shape=128x256")}});
    });
  };
  std::string e = error("regression-partition-4294967295-warps.ttgir");
  EXPECT_NE(e.find(":53:379: error: num_warps(4294967295): a partition has 1 to 64 warps"),
            std::string::npos)
      << e;
  e = error("regression-warp-group-start-4294967295.ttgir");
  EXPECT_NE(e.find(":33:12: error: warpGroupStartIds holds 4294967295, outside 0..64"),
            std::string::npos)
      << e;
  e = error("regression-actual-registers-4294967295.ttgir");
  EXPECT_NE(e.find(":33:12: error: actualRegisters holds 4294967295, outside setmaxnreg's 24..256"),
            std::string::npos)
      << e;
}

// UBSan's reports (docs/reliability.md): -INT64_MIN negated as an int64, and the product of a
// memdesc's dimensions overflowing.
TEST(TtgirErrors, IntegerLiteralsAndShapesStayInRange) {
  std::int64_t v = 0;
  ASSERT_TRUE(parse_integer_literal("-9223372036854775808", v));
  EXPECT_EQ(v, std::numeric_limits<std::int64_t>::min());
  EXPECT_FALSE(parse_integer_literal("-9223372036854775809", v));
  ASSERT_TRUE(parse_integer_literal("0xFFFFFFFFFFFFFFFF", v));
  EXPECT_EQ(v, -1);
  ASSERT_TRUE(parse_integer_literal("-42", v));
  EXPECT_EQ(v, -42);

  Harness h;
  const std::string path =
      kSrc + "/tests/fuzz/corpus/ttgir/regression-memdesc-shape-2-65-elements.ttgir";
  const std::string e = error_of([&] {
    h.make({{"file", str(path)}, {"grid", str("4")}, {"args", str(gemm_args(256, 256, 512))}});
  });
  EXPECT_NE(e.find(path + ":48:62: error: shape '3x4294967296x4294967296xi64': dimensions are 1 or "
                          "more and hold at most 16777216 elements"),
            std::string::npos)
      << e;
  // A descriptor stride of 2^63 - 1 elements overflowed times the element size.
  const std::string stride = error_of([&] {
    h.make({{"file", str(kDevice + "gemm_tma.ttgir")},
            {"grid", str("4")},
            {"args", str(gemm_args(256, 256, 512) + ";a_desc.strides=9223372036854775807x1")}});
  });
  EXPECT_NE(stride.find("a_desc.strides=9223372036854775807x1: a stride must be a multiple of 16 "
                        "bytes below 2^40, not 18446744073709551614"),
            std::string::npos)
      << stride;
  // The limits are the trace's tensormap statements' (simfa/tensor_map_limits.h): a base is
  // 16-byte aligned.
  const std::string base = error_of([&] {
    h.make({{"file", str(kDevice + "gemm_tma.ttgir")},
            {"grid", str("4")},
            {"args", str(gemm_args(256, 256, 512) + ";a_desc.base=8")}});
  });
  EXPECT_NE(base.find("a_desc.base=8: base must be a multiple of 16 bytes, not 8"),
            std::string::npos)
      << base;
}

TEST(TtgirErrors, CtaIdOfTwoToTheThirtyTwoMinusOneIsRejected) {
  const std::string trace =
      R"json({"traceEvents": [{"name": "s", "ph": "X", "ts": 1, )json"
      R"json("pid": "k Core0 CTA4294967295", "tid": "warp 0 (line 0)"}]})json";
  EXPECT_EQ(error_of([&] { parse_proton_trace(trace, "t.json"); }),
            "t.json:1:18: error: pid 'k Core0 CTA4294967295': CTA ids go up to 4294967294");
}

TEST(TtgirErrors, DeepJsonIsRejectedBeforeTheStackOverflows) {
  const std::string deep = "{\"traceEvents\": [], \"x\": " + std::string(100000, '[');
  EXPECT_EQ(error_of([&] { parse_proton_trace(deep, "t.json"); }),
            "t.json:1:90: error: JSON nested more than 64 deep");
}

TEST(TtgirErrors, TraceOfOtherArgumentsOrAnotherKernel) {
  Harness h;
  const std::string trace = kData + "ttgir_gemm_128x128x512.chrome_trace";
  std::string e = error_of([&] {
    h.make({{"trace", str(trace)},
            {"ttgir", str(kDevice + "gemm_tma.ttgir")},
            {"args", str(gemm_args(128, 128, 256))}});
  });
  EXPECT_NE(e.find("records execution 5 of site 4 (74:7 of the TTGIR), which runs 4 times"),
            std::string::npos)
      << e;
  e = error_of([&] {
    h.make({{"trace", str(trace)},
            {"ttgir", str(kDevice + "attn_fwd_tma.ttgir")},
            {"args", str(attn_args(1, 128))}});
  });
  EXPECT_NE(e.find("the trace is of kernel 'gemm_tma_kernel', the TTGIR of 'attn_fwd_tma'"),
            std::string::npos)
      << e;
}

TEST(TtgirErrors, RouteKeysAreChecked) {
  Harness h;
  EXPECT_NE(error_of([&] { h.make({}); }).find("give either file=K.ttgir"), std::string::npos);
  EXPECT_NE(error_of([&] {
              h.make({{"file", str(kDevice + "gemm_tma.ttgir")}});
            }).find("the static route needs grid=X[xYxZ]"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              h.make({{"trace", str(kData + "ttgir_truncated.chrome_trace")}});
            }).find("the trace route needs ttgir=K.ttgir"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              h.make({{"file", str(kData + "nonexistent.ttgir")}, {"grid", str("1")}});
            }).find("w.toml:2:1: error: cannot read TTGIR file"),
            std::string::npos);
}

}  // namespace
}  // namespace simfa::ttgir
