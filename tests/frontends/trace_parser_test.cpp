// The native trace format: examples, expressions, repeat expansion, every error with its
// position, streaming per-CTA expansion, hostile input, and the workload.trace component.
#include "trace_parser.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "simfa/error.h"
#include "support/null_build_context.h"
#include "support/test_files.h"
#include "trace_source.h"

namespace simfa::trace {
namespace {

std::string example_path(const std::string& name) {
  return std::string(SIMFA_SOURCE_DIR) + "/examples/traces/" + name;
}
using test::data_path;
using test::read_file;

TraceProgram parse(std::string_view text) {
  return parse_trace(text, "t.trace");
}

CtaProgram expand(const TraceProgram& program, std::uint64_t cta,
                  std::uint64_t max_instructions = 1 << 24) {
  CtaExpander expander(program, max_instructions);
  CtaProgram out;
  expander.expand(cta, out);
  return out;
}

std::vector<std::int32_t> coords(const CtaProgram& p, const Instruction& i, std::uint32_t rank) {
  return {p.coords.begin() + i.x, p.coords.begin() + i.x + rank};
}

std::size_t instruction_count(const CtaProgram& p) {
  std::size_t n = 0;
  for (const auto& wg : p.warpgroups) n += wg.code.size();
  return n;
}

/// Parses `text` and expands CTA `cta`; expects an InputError at line:column whose message
/// contains `needle`.
void expect_error(std::string_view text, std::uint32_t line, std::uint32_t column,
                  std::string_view needle, std::uint64_t cta = 0) {
  try {
    TraceProgram program = parse(text);
    expand(program, cta);
    ADD_FAILURE() << "no error; expected " << needle;
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().file, "t.trace");
    EXPECT_EQ(e.where().line, line) << e.what();
    EXPECT_EQ(e.where().column, column) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

// Body lines of in_warpgroup() start on line 6, and the map A has rank 2.
constexpr std::string_view kHeader =
    "grid 4\n"
    "tensormap A base=0x1000 elem=fp16 shape=[256, 256] box=[64, 64]\n"
    "cta {\n"
    "  stages 2\n"
    "  warpgroup w regs=32 {\n";

std::string in_warpgroup(std::string_view body) {
  return std::string(kHeader) + std::string(body) + "\n  }\n}\n";
}

/// The BUBBLE cycles of CTA `cta`'s first warpgroup, in order: a probe for expression values.
std::vector<std::uint32_t> bubbles(std::string_view body, std::uint64_t cta = 0) {
  CtaProgram p = expand(parse(in_warpgroup(body)), cta);
  std::vector<std::uint32_t> out;
  for (const auto& i : p.warpgroups[0].code)
    if (i.op == Opcode::kBubble) out.push_back(i.x);
  return out;
}

// ---- examples
// ------------------------------------------------------------------------------------

TEST(TraceExamples, TinyLoadMma) {
  TraceProgram program = parse_trace(read_file(example_path("tiny_load_mma.trace")), "tiny");
  ASSERT_EQ(program.maps.size(), 2u);
  const TensorMap& a = program.maps[0];
  EXPECT_EQ(a.name, "A");
  EXPECT_EQ(a.base, 0x7f0000000000u);
  EXPECT_EQ(a.elem_bytes, 2u);
  EXPECT_EQ(a.rank, 2u);
  EXPECT_EQ(a.shape[0], 64u);
  EXPECT_EQ(a.stride[0], 2u);
  EXPECT_EQ(a.stride[1], 128u);  // packed: 64 fp16
  EXPECT_EQ(a.box_bytes(), 8192u);
  EXPECT_EQ(program.maps[1].box_bytes(), 16384u);
  EXPECT_EQ(program.cta_count(), 1u);

  CtaProgram p = expand(program, 0);
  EXPECT_EQ(p.smem_bytes, 24 * 1024);
  EXPECT_EQ(p.stage_count, 1u);
  EXPECT_EQ(p.consumers_per_stage, 1u);
  ASSERT_EQ(p.warpgroups.size(), 1u);
  EXPECT_EQ(p.warpgroups[0].registers, 128u * 128u);
  const auto& code = p.warpgroups[0].code;
  ASSERT_EQ(code.size(), 12u);
  EXPECT_EQ(code[0], Instruction::acquire_stage(0));
  EXPECT_EQ(code[1].op, Opcode::kTmaLoad);
  EXPECT_EQ(code[1].map, 0u);
  EXPECT_EQ(code[2].map, 1u);
  EXPECT_EQ(coords(p, code[2], 2), (std::vector<std::int32_t>{0, 0}));
  EXPECT_EQ(code[3], Instruction::mb_wait(0));
  for (int i = 4; i < 8; ++i)
    EXPECT_EQ(code[static_cast<std::size_t>(i)], Instruction::wgmma(64, 128, 16, 0));
  EXPECT_EQ(code[8], Instruction::wgmma_commit(0));
  EXPECT_EQ(code[9], Instruction::wgmma_wait(0));
  EXPECT_EQ(code[10], Instruction::release_stage(0));
  EXPECT_EQ(code[11], Instruction::exit());  // implicit
}

TEST(TraceExamples, WarpSpecializedTwoStage) {
  TraceProgram program = parse_trace(read_file(example_path("gemm_ws_2stage.trace")), "ws");
  CtaProgram p = expand(program, 0);
  EXPECT_EQ(p.smem_bytes, 96 * 1024);
  EXPECT_EQ(p.stage_count, 2u);
  ASSERT_EQ(p.warpgroups.size(), 2u);
  EXPECT_EQ(p.warpgroups[0].registers, 40u * 128u);
  EXPECT_EQ(p.warpgroups[1].registers, 232u * 128u);
  // Producer: 16 x (ACQUIRE + 2 loads) + EXIT. Consumer: 16 x (MB_WAIT + 8 WGMMA + COMMIT +
  // WAIT + RELEASE) + BUBBLE + 2 stores + EXIT.
  const auto& producer = p.warpgroups[0].code;
  const auto& consumer = p.warpgroups[1].code;
  ASSERT_EQ(producer.size(), 49u);
  ASSERT_EQ(consumer.size(), 196u);
  const Instruction& load_a5 = producer[5 * 3 + 1];  // k = 5
  EXPECT_EQ(load_a5.op, Opcode::kTmaLoad);
  EXPECT_EQ(load_a5.stage, 1u);
  EXPECT_EQ(coords(p, load_a5, 2), (std::vector<std::int32_t>{320, 0}));
  EXPECT_EQ(consumer[12 * 16], Instruction::bubble(320));
  EXPECT_EQ(coords(p, consumer[12 * 16 + 2], 2), (std::vector<std::int32_t>{64, 0}));
  EXPECT_EQ(program.maps[2].name, "C");
  EXPECT_EQ(program.maps[2].stride[1], 2048u);
}

TEST(TraceExamples, GemmGridTileCoordinatesFromCtaIndex) {
  TraceProgram program = parse_trace(read_file(example_path("gemm_grid.trace")), "gemm");
  EXPECT_EQ(program.cta_count(), 64u);
  EXPECT_EQ(program.grid[0], 8u);
  EXPECT_EQ(program.grid[1], 8u);
  EXPECT_EQ(program.grid[2], 1u);
  ASSERT_EQ(program.maps.size(), 3u);
  EXPECT_EQ(program.maps[0].shape[1], 1024u);
  EXPECT_EQ(program.maps[0].stride[1], 2048u);
  EXPECT_EQ(program.maps[2].box[0], 64u);
  EXPECT_EQ(program.maps[2].box[1], 128u);

  CtaExpander expander(program, 1 << 24);
  CtaProgram p;
  expander.expand(10, p);  // cta_x = 2, cta_y = 1: m0 = 128, n0 = 256
  EXPECT_EQ(p.cta_id, 10u);
  EXPECT_EQ(p.smem_bytes, 4 * 32 * 1024);
  EXPECT_EQ(p.stage_count, 3u);
  ASSERT_EQ(p.warpgroups.size(), 1u);
  const auto& code = p.warpgroups[0].code;
  // Prologue 6, block 0: 13, steady state 13 x 15, drain 2 x 12, final wait + release 2,
  // epilogue 3, EXIT 1.
  ASSERT_EQ(code.size(), 244u);
  EXPECT_EQ(coords(p, code[1], 2), (std::vector<std::int32_t>{0, 128}));   // A (k, m0)
  EXPECT_EQ(coords(p, code[2], 2), (std::vector<std::int32_t>{0, 256}));   // B (k, n0)
  EXPECT_EQ(coords(p, code[4], 2), (std::vector<std::int32_t>{64, 128}));  // A, stage 1
  EXPECT_EQ(code[4].stage, 1u);
  // Steady state, k = 1: release and refill slot 0 with K-block 3.
  const std::size_t k1 = 6 + 13;
  EXPECT_EQ(code[k1], Instruction::mb_wait(1));
  EXPECT_EQ(code[k1 + 1], Instruction::wgmma(64, 128, 16, 1));
  EXPECT_EQ(code[k1 + 10], Instruction::wgmma_wait(1));
  EXPECT_EQ(code[k1 + 11], Instruction::release_stage(0));
  EXPECT_EQ(code[k1 + 12], Instruction::acquire_stage(0));
  EXPECT_EQ(code[k1 + 13].stage, 0u);
  EXPECT_EQ(coords(p, code[k1 + 13], 2), (std::vector<std::int32_t>{192, 128}));
  EXPECT_EQ(code[240], Instruction::bubble(320));
  EXPECT_EQ(coords(p, code[241], 2), (std::vector<std::int32_t>{256, 128}));  // C (n0, m0)
  EXPECT_EQ(coords(p, code[242], 2), (std::vector<std::int32_t>{320, 128}));
  EXPECT_EQ(code[243], Instruction::exit());

  for (std::uint64_t cta = 0; cta < program.cta_count(); ++cta) {
    expander.expand(cta, p);
    EXPECT_EQ(instruction_count(p), 244u);
    const auto& c = p.warpgroups[0].code;
    EXPECT_EQ(coords(p, c[1], 2)[1], static_cast<std::int32_t>(cta / 8 * 128));
    EXPECT_EQ(coords(p, c[2], 2)[1], static_cast<std::int32_t>(cta % 8 * 128));
  }
}

TEST(TraceExamples, Fa3PingPong) {
  TraceProgram program = parse_trace(read_file(example_path("fa3_pingpong.trace")), "fa3");
  EXPECT_EQ(program.cta_count(), 256u);
  EXPECT_EQ(program.grid[0], 8u);
  EXPECT_EQ(program.grid[1], 32u);
  ASSERT_EQ(program.maps.size(), 4u);
  const TensorMap& q = program.maps[0];
  EXPECT_EQ(q.rank, 4u);
  EXPECT_EQ(q.stride[1], 32u * 128u * 2u);
  EXPECT_EQ(q.stride[2], 256u);
  EXPECT_EQ(q.stride[3], 1024u * 32u * 128u * 2u);
  EXPECT_EQ(program.maps[1].box[1], 176u);

  CtaProgram p = expand(program, 37);  // cta_x = 5, cta_y = 4: m0 = 640, head 4, kv_head 1
  EXPECT_EQ(p.smem_bytes, 208 * 1024);
  EXPECT_EQ(p.stage_count, 5u);
  EXPECT_EQ(p.consumers_per_stage, 2u);
  EXPECT_EQ(p.barrier_participants, (std::vector<std::uint32_t>{2, 2, 2}));
  ASSERT_EQ(p.warpgroups.size(), 3u);
  EXPECT_EQ(p.warpgroups[0].registers, 24u * 128u);
  EXPECT_EQ(p.warpgroups[1].registers, 240u * 128u);
  const auto& producer = p.warpgroups[0].code;
  const auto& c0 = p.warpgroups[1].code;
  const auto& c1 = p.warpgroups[2].code;
  // Producer: Q (2) + 6 x (K 2 + V 2) + EXIT. Consumer: MB_WAIT Q, block 0 (15), blocks 1..5
  // (5 x 30), last P V (15), epilogue (2), EXIT; consumer 1 also arrives first.
  EXPECT_EQ(producer.size(), 27u);
  EXPECT_EQ(c0.size(), 184u);
  EXPECT_EQ(c1.size(), 185u);
  EXPECT_EQ(coords(p, producer[1], 4), (std::vector<std::int32_t>{0, 640, 4, 0}));
  EXPECT_EQ(producer[1].stage, 0u);
  EXPECT_EQ(coords(p, producer[7], 4), (std::vector<std::int32_t>{0, 176, 1, 0}));  // K, j = 1
  EXPECT_EQ(producer[7].stage, 2u);
  EXPECT_EQ(c0[0], Instruction::mb_wait(0));
  EXPECT_EQ(c1[0], Instruction::bar_arrive(1));
  EXPECT_EQ(c0[1], Instruction::bar_wait(1));
  EXPECT_EQ(c1[2], Instruction::bar_wait(2));
  EXPECT_EQ(c0[3], Instruction::wgmma(64, 176, 16, 0));
  EXPECT_EQ(c0[12], Instruction::bar_arrive(2));
  EXPECT_EQ(c1[13], Instruction::bar_arrive(1));
  EXPECT_EQ(c0[15], Instruction::bubble(988));
  EXPECT_EQ(coords(p, c0[182], 4), (std::vector<std::int32_t>{0, 640, 4, 0}));
  EXPECT_EQ(coords(p, c1[183], 4), (std::vector<std::int32_t>{0, 704, 4, 0}));
}

TEST(TraceExamples, EveryCtaOfEveryExampleExpands) {
  for (const char* name :
       {"tiny_load_mma.trace", "gemm_ws_2stage.trace", "gemm_grid.trace", "fa3_pingpong.trace"}) {
    SCOPED_TRACE(name);
    TraceProgram program = parse_trace(read_file(example_path(name)), name);
    CtaExpander expander(program, 1 << 24);
    CtaProgram p;
    for (std::uint64_t cta = 0; cta < program.cta_count(); ++cta) expander.expand(cta, p);
  }
}

TEST(TraceExamples, DeadlockDataParses) {
  TraceProgram program = parse_trace(read_file(data_path("deadlock.trace")), "deadlock");
  CtaProgram p = expand(program, 0);
  ASSERT_EQ(p.warpgroups.size(), 2u);
  EXPECT_EQ(p.warpgroups[0].code.size(), 9u);
  EXPECT_EQ(p.warpgroups[0].code[4], Instruction::acquire_stage(0));  // k = 2: blocks forever
  EXPECT_EQ(p.warpgroups[1].code.size(), 29u);
  EXPECT_EQ(p.warpgroups[1].code[14], Instruction::mb_wait(0));  // k = 2: never loaded
}

// ---- expressions
// -----------------------------------------------------------------------------------

TEST(TraceExpressions, ArithmeticPrecedenceAndCSemantics) {
  EXPECT_EQ(bubbles("    BUBBLE 2 + 3 * 4\n"
                    "    BUBBLE (2 + 3) * 4\n"
                    "    BUBBLE 10 - 4 - 3\n"
                    "    BUBBLE 100 / 10 / 5\n"
                    "    BUBBLE 10 + -7 / 2\n"  // truncation toward zero: -3
                    "    BUBBLE 10 + -7 % 2\n"  // -1
                    "    BUBBLE -(-(5))\n"
                    "    BUBBLE max(1, 5, 3) * min(4, 2)\n"
                    "    BUBBLE 1KiB + 0x10 + 1_000 + 1KB\n"
                    "    BUBBLE 2MiB / 1MB"),
            (std::vector<std::uint32_t>{14, 20, 3, 2, 7, 9, 5, 10, 3040, 2}));
}

TEST(TraceExpressions, BuiltinsTopLevelAndBodyLets) {
  const std::string text =
      "let T = 10\n"
      "let U = T * 3 + 1\n"
      "grid 4, 3, 2\n"
      "cta {\n"
      "  let base = cta * 1000\n"
      "  warpgroup w regs=8 count=2 {\n"
      "    let t = base + U\n"
      "    BUBBLE t\n"
      "    BUBBLE cta_x * 100 + cta_y * 10 + cta_z\n"
      "    BUBBLE wg\n"
      "  }\n"
      "}\n";
  TraceProgram program = parse(text);
  ASSERT_EQ(program.lets.size(), 2u);
  EXPECT_EQ(program.lets[1], (std::pair<std::string, std::int64_t>{"U", 31}));
  EXPECT_EQ(program.cta_count(), 24u);
  CtaProgram p = expand(program, 23);  // x = 3, y = 2, z = 1
  ASSERT_EQ(p.warpgroups.size(), 2u);
  EXPECT_EQ(p.warpgroups[0].code[0], Instruction::bubble(23031));
  EXPECT_EQ(p.warpgroups[0].code[1], Instruction::bubble(321));
  EXPECT_EQ(p.warpgroups[0].code[2], Instruction::bubble(0));
  EXPECT_EQ(p.warpgroups[1].code[2], Instruction::bubble(1));
  p = expand(program, 5);  // x = 1, y = 1, z = 0
  EXPECT_EQ(p.warpgroups[0].code[1], Instruction::bubble(110));
}

TEST(TraceExpressions, ConstantsFoldAndDefinesOverrideLets) {
  TraceProgram program = parse("let N = 1 + 2 * 3\n" + in_warpgroup("    BUBBLE (N - 1) * 4 + N"));
  const Stmt& bubble = program.stmts.back();
  ASSERT_EQ(bubble.op, Opcode::kBubble);
  const Expr& e = program.operands[bubble.operands];
  ASSERT_EQ(e.end - e.begin, 1u);  // folded to one constant
  EXPECT_EQ(program.code[e.begin].value, 31);
  TraceProgram overridden =
      parse_trace("let N = 7\n" + in_warpgroup("    BUBBLE N * 2"), "t.trace", {{"N", 50}});
  EXPECT_EQ(overridden.lets[0].second, 50);
  EXPECT_EQ(expand(overridden, 0).warpgroups[0].code[0], Instruction::bubble(100));
}

// ---- repeat
// ----------------------------------------------------------------------------------------

TEST(TraceRepeat, NestedRangesAndCounts) {
  EXPECT_EQ(bubbles("    repeat i in 0..3 {\n"
                    "      repeat j in i..3 { BUBBLE i * 10 + j }\n"
                    "    }"),
            (std::vector<std::uint32_t>{0, 1, 2, 11, 12, 22}));
  EXPECT_EQ(bubbles("    repeat 2 { repeat 3 { BUBBLE 7 } }").size(), 6u);
  EXPECT_EQ(bubbles("    repeat k in 0..4 {\n"
                    "      let sq = k * k\n"
                    "      BUBBLE sq\n"
                    "    }"),
            (std::vector<std::uint32_t>{0, 1, 4, 9}));
  EXPECT_TRUE(bubbles("    repeat 0 { BUBBLE 1 }\n    repeat k in 5..3 { BUBBLE 1 }").empty());
  EXPECT_EQ(bubbles("    repeat cta { BUBBLE 9 }", 3).size(), 3u);  // a guard: 0 or more times
}

TEST(TraceRepeat, ExpansionIsBoundedPerCta) {
  TraceProgram runaway = parse(in_warpgroup("    repeat 2000 { BUBBLE 1 }"));
  EXPECT_THROW(expand(runaway, 0, 1000), InputError);
  EXPECT_NO_THROW(expand(runaway, 0, 2001));  // 2000 bubbles and EXIT
  // An empty loop body still counts its iterations: no silent spin.
  TraceProgram spin = parse(in_warpgroup("    repeat 1000000000000 { repeat 0 { BUBBLE 1 } }"));
  try {
    expand(spin, 0, 1000);
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, 6u);
    EXPECT_NE(std::string(e.what()).find("more than 1000 loop iterations"), std::string::npos)
        << e.what();
  }
}

// ---- errors
// ----------------------------------------------------------------------------------------

TEST(TraceErrors, UnknownOpcodeSuggestsTheClosest) {
  expect_error(in_warpgroup("    TMA_LAOD A, 0, 0, 0"), 6, 5,
               "unknown opcode 'TMA_LAOD' (did you mean 'TMA_LOAD'?)");
  expect_error(in_warpgroup("    bubble 3"), 6, 5,
               "unknown opcode 'bubble' (did you mean 'BUBBLE'?)");
  expect_error(in_warpgroup("    smem 3"), 6, 5, "'smem' belongs directly inside the cta block");
}

TEST(TraceErrors, MissingAndExtraOperands) {
  expect_error(in_warpgroup("    MB_WAIT"), 6, 12, "missing operand 'stage' (MB_WAIT stage)");
  expect_error(in_warpgroup("    WGMMA 64, 128"), 6, 18,
               "missing operand 'K' (WGMMA M, N, K, gid)");
  expect_error(in_warpgroup("    WGMMA 64,, 16, 0"), 6, 14, "missing operand 'N'");
  expect_error(in_warpgroup("    MB_WAIT 0, 1"), 6, 16,
               "extra operand: MB_WAIT takes 1 operand (MB_WAIT stage)");
  expect_error(in_warpgroup("    EXIT 1"), 6, 10, "EXIT takes no operands");
  expect_error(in_warpgroup("    BUBBLE 10 20"), 6, 15, "found '20'");
  expect_error(in_warpgroup("    TMA_LOAD"), 6, 13, "missing operand 'map'");
  expect_error(in_warpgroup("    TMA_LOAD A"), 6, 15, "missing operands: coordinates and a stage");
}

TEST(TraceErrors, UndefinedNames) {
  expect_error(in_warpgroup("    TMA_LOAD X, 0, 0, 0"), 6, 14,
               "undefined TensorMap 'X' (did you mean 'A'?)");
  expect_error(in_warpgroup("    repeat k in 0..2 {\n      BUBBLE kk\n    }"), 7, 14,
               "undefined variable 'kk' (did you mean 'k'?)");
  expect_error("let SEQLEN = 1\nlet X = SEQLN\n", 2, 9,
               "undefined variable 'SEQLN' (did you mean 'SEQLEN'?)");
  expect_error("let x = cta\n" + in_warpgroup(""), 1, 9,
               "'cta' is only defined inside the cta block");
  expect_error(in_warpgroup("    BUBBLE A"), 6, 12, "'A' is a TensorMap");
  expect_error("let grid = 3\n", 1, 5, "'grid' is reserved");
  expect_error(in_warpgroup("    repeat k in 0..2 {\n      let k = 1\n    }"), 7, 11,
               "'k' is already defined at 6:12");
}

TEST(TraceErrors, Blocks) {
  expect_error("grid 1\ncta {\n  warpgroup w regs=8 {\n    BUBBLE 1\n", 3, 22,
               "this warpgroup block is never closed");
  expect_error(in_warpgroup("    BUBBLE 1") + "}\n", 9, 1, "unexpected '}': no block is open");
  expect_error(in_warpgroup("    EXIT\n    BUBBLE 1"), 6, 5,
               "EXIT must be the last statement of a warpgroup body");
  expect_error(in_warpgroup("    repeat 2 { EXIT }"), 6, 16, "EXIT must be the last statement");
  std::string deep;
  for (int i = 0; i < 40; ++i) deep += "repeat 1 {\n";
  // cta and warpgroup are two of the 32 levels: the 31st repeat is one too many.
  expect_error(in_warpgroup(deep), 36, 10, "nested more than 32 deep");
  expect_error(in_warpgroup("    BUBBLE " + std::string(500, '(') + "1" + std::string(500, ')')), 6,
               212, "expression nested too deeply");
}

TEST(TraceErrors, BadNumbers) {
  expect_error(in_warpgroup("    BUBBLE 12abc"), 6, 12,
               "bad number '12abc': 'abc' is not a size unit");
  expect_error(in_warpgroup("    BUBBLE 1.5"), 6, 12, "bad number '1.5': numbers are integers");
  expect_error(in_warpgroup("    BUBBLE 0x"), 6, 12, "no hexadecimal digits");
  expect_error(in_warpgroup("    BUBBLE 0x1g"), 6, 12, "'g' is not a hexadecimal digit");
  expect_error(in_warpgroup("    BUBBLE 99999999999999999999"), 6, 12, "too large");
  expect_error(in_warpgroup("    BUBBLE 9223372036854775807 + 1"), 6, 32, "integer overflow");
  expect_error(in_warpgroup("    BUBBLE 3 @ 4"), 6, 14, "found an unexpected character '@'");
  expect_error(in_warpgroup("    BUBBLE \x01"), 6, 12,
               "expected an expression, found an unexpected byte 0x01");
}

TEST(TraceErrors, RankMismatch) {
  expect_error(in_warpgroup("    TMA_LOAD A, 0, 0, 0, 1"), 6, 14,
               "rank mismatch: 'A' has rank 2, so TMA_LOAD takes 2 coordinates and a stage, but 4 "
               "operands follow");
  expect_error(in_warpgroup("    TMA_STORE A, 0"), 6, 15,
               "TMA_STORE takes 2 coordinates, but 1 operand follows the map");
}

TEST(TraceErrors, StagesAndBarriersAtExpansion) {
  expect_error(in_warpgroup("    MB_WAIT 2"), 6, 13,
               "CTA 0: stage 2 is out of range: the CTA declares 2 stages (0..1)");
  expect_error(in_warpgroup("    TMA_LOAD A, 0, 0, cta"), 6, 23, "CTA 3: stage 3 is out of range",
               3);
  expect_error("grid 1\ncta {\n  warpgroup w regs=8 {\n    ACQUIRE_STAGE 0\n  }\n}\n", 4, 19,
               "the CTA declares no stages");
  expect_error("grid 1\ncta {\n  barrier 1 participants=3\n  warpgroup w regs=8 {\n  }\n}\n", 3, 3,
               "barrier 1 waits for 3 participants but the CTA has 1 warpgroups");
  expect_error(in_warpgroup("    BAR_WAIT 16"), 6, 14, "the barrier id is 16; it must be in 0..15");
}

TEST(TraceErrors, DivisionByZero) {
  // Only CTA 3 divides by zero; the message names it and the '/'.
  const std::string text = in_warpgroup("    BUBBLE 12 / (3 - cta)");
  EXPECT_EQ(bubbles("    BUBBLE 12 / (3 - cta)", 2), (std::vector<std::uint32_t>{12}));
  expect_error(text, 6, 15, "CTA 3: division by zero", 3);
  expect_error(in_warpgroup("    BUBBLE cta % (cta - 1)"), 6, 16,
               "CTA 1: division by zero (in '%')", 1);
  expect_error(in_warpgroup("    BUBBLE 12 / 0"), 6, 15,
               "division by zero");  // constant: at parse time
}

TEST(TraceErrors, BadValues) {
  expect_error("grid 1\ncta {\n  smem -1\n  warpgroup w regs=8 {\n  }\n}\n", 3, 8,
               "smem is -1; it must be in 0..");
  expect_error("grid 1\ncta {\n  warpgroup w regs=300 {\n  }\n}\n", 3, 20,
               "regs (per thread) is 300; it must be in 1..255");
  expect_error("grid 1\ncta {\n  warpgroup w {\n  }\n}\n", 3, 13, "warpgroup 'w' needs regs=N");
  expect_error("grid 1\ncta {\n  warpgroup w regs=8 count=9 {\n  }\n}\n", 3, 28,
               "the warpgroup count is 9");
  expect_error("grid 1\ncta {\n  warpgroup w regs=8 cout=2 {\n  }\n}\n", 3, 22,
               "unknown attribute 'cout' (did you mean 'count'?)");
  expect_error("grid 0\n", 1, 6, "grid x is 0; it must be in 1..");
  expect_error(in_warpgroup("    BUBBLE cta - 1"), 6, 12, "BUBBLE cycles is -1");
  expect_error(in_warpgroup("    repeat cta - 1 { }"), 6, 12, "the repeat count is -1");
  expect_error(in_warpgroup("    WGMMA 128, 128, 16, 0"), 6, 11,
               "WGMMA M is 128; Hopper's wgmma is m64");
  expect_error(in_warpgroup("    WGMMA 64, 100, 16, 0"), 6, 15,
               "WGMMA N is 100; it must be a multiple of 8");
  expect_error(in_warpgroup("    WGMMA 64, 128, 12, 0"), 6, 20,
               "WGMMA K is 12; it must be 8, 16 or 32");
  expect_error(in_warpgroup("    TMA_BULK 0x1008, 64, 0"), 6, 14,
               "the TMA_BULK address 4104 is not 16-byte aligned");
  expect_error(in_warpgroup("    TMA_BULK 0x1000, 24, 0"), 6, 22,
               "the TMA_BULK size 24 is not a multiple of 16 bytes");
  expect_error(in_warpgroup("    TMA_LOAD A, 3000000000, 0, 0"), 6, 17,
               "a TMA coordinate is 3000000000");
}

TEST(TraceErrors, TensorMaps) {
  const auto map = [](std::string_view decl) { return "grid 1\n" + std::string(decl) + "\n"; };
  expect_error(map("tensormap T base=0x1008 elem=fp16 shape=[64] box=[64]"), 2, 18,
               "TensorMap 'T': base must be a multiple of 16 bytes, not 4104");
  expect_error(map("tensormap T base=-16 elem=fp16 shape=[64] box=[64]"), 2, 18,
               "base must be a non-negative multiple of 16");
  expect_error(map("tensormap T base=0 elem=fp16 shape=[64, 64] box=[64]"), 2, 49,
               "box has 1 entries but the rank is 2");
  expect_error(map("tensormap T base=0 elem=fp16 shape=[3, 4] box=[8, 4]"), 2, 37,
               "a stride must be a multiple of 16 bytes below 2^40, not 6 (the packed stride of "
               "dimension 1; give stride=[...])");
  expect_error(map("tensormap T base=0 elem=fp16 shape=[64, 4] stride=[100] box=[8, 4]"), 2, 52,
               "a stride must be a multiple of 16 bytes below 2^40, not 100");
  expect_error(map("tensormap T base=0 elem=fp16 shape=[64, 0] box=[8, 4]"), 2, 41,
               "shape entries must be in 1..2^32, not 0");
  expect_error(map("tensormap T base=0 elem=fp16 shape=[64, 4] strid=[128] box=[8, 4]"), 2, 44,
               "(did you mean 'stride'?)");
  expect_error(map("tensormap T base=0 elem=fp16 shape=[64, 4] stride=[128, 64] box=[8, 4]"), 2, 51,
               "so it has 1 entries for rank 2");
  expect_error(map("tensormap T base=0 elem=fp16 shape=[1, 1, 1, 1, 1, 1] box=[8]"), 2, 37,
               "rank is 1 to 5, but shape has 6 entries");
  expect_error(map("tensormap T base=0 elem=fp61 shape=[64] box=[8]"), 2, 25,
               "unknown element type 'fp61' (did you mean 'fp16'?)");
  expect_error(map("tensormap T base=0 elem=3 shape=[64] box=[8]"), 2, 25,
               "an element is 1, 2, 4 or 8 bytes");
  expect_error(map("tensormap T base=0 elem=fp16 shape=[64] box=[300]"), 2, 46,
               "box entries must be in 1..256");
  expect_error(map("tensormap T base=0 elem=fp16 shape=[64] box=[4]"), 2, 46,
               "the box's inner dimension is 8 bytes");
  expect_error(map("tensormap T base=0 elem=fp16 shape=[64]"), 2, 11,
               "TensorMap 'T' needs box=[...]");
  expect_error(map("tensormap T base=0 elem=fp16 shape=[64] box=[8]\ntensormap T base=0 elem=fp16 "
                   "shape=[64] box=[8]"),
               3, 11, "TensorMap 'T' is already declared at 2:11");
}

TEST(TraceErrors, FileLevel) {
  expect_error("cta {\n  warpgroup w regs=8 {\n  }\n}\n", 0, 0, "the trace declares no grid");
  expect_error("grid 1\n", 0, 0, "the trace has no cta block");
  expect_error("grid 1\ncta {\n}\n", 2, 1, "the cta block declares no warpgroups");
  expect_error("grid 1\nBUBBLE 3\n", 2, 1, "instructions belong inside a warpgroup body");
  expect_error("grid 1\ngird 2\n", 2, 1, "unknown statement 'gird' (did you mean 'grid'?)");
}

TEST(TraceErrors, AllErrorsOfAFileAreReported) {
  try {
    parse(
        in_warpgroup("    FOO 1\n    BUBBLE 2\n    TMA_LOAD B, 0, 0, 0\n    repeat k in 0..2 {\n   "
                     "   BAR 1\n    }"));
    ADD_FAILURE();
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.where().line, 6u);
    EXPECT_EQ(e.where().column, 5u);
    EXPECT_NE(what.find("t.trace:6:5: error: unknown opcode 'FOO'"), std::string::npos) << what;
    EXPECT_NE(what.find("\nt.trace:8:14: error: undefined TensorMap 'B'"), std::string::npos)
        << what;
    EXPECT_NE(what.find("\nt.trace:10:7: error: unknown opcode 'BAR'"), std::string::npos) << what;
    EXPECT_EQ(what.find("BUBBLE"), std::string::npos) << what;
  }
}

// ---- streaming
// ---------------------------------------------------------------------------------------

TEST(TraceStreaming, EachCtaGetsItsOwnCoordinatesFromOneTemplate) {
  TraceProgram program = parse_trace(read_file(example_path("gemm_grid.trace")), "gemm");
  CtaExpander expander(program, 1 << 24);
  CtaProgram reused;
  expander.expand(63, reused);
  const CtaProgram fresh0 = expand(program, 0);
  expander.expand(0, reused);  // the same output object: nothing of CTA 63 remains
  EXPECT_EQ(reused.cta_id, 0u);
  EXPECT_EQ(reused.coords, fresh0.coords);
  EXPECT_EQ(reused.warpgroups[0].code, fresh0.warpgroups[0].code);
  // Per CTA, the pools hold that CTA's operands only: 2 coordinates per TMA op.
  EXPECT_EQ(reused.coords.size(), 2u * (2 * 16 + 2));
  const CtaProgram other = expand(program, 63);
  EXPECT_NE(other.coords, fresh0.coords);
  EXPECT_EQ(other.warpgroups[0].code, fresh0.warpgroups[0].code);  // same offsets, other values
}

// ---- hostile input
// -------------------------------------------------------------------------------------

/// Parses and, when that succeeds, expands the first and the last CTA: only InputError may
/// come out.
void survive(std::string_view text) {
  try {
    TraceProgram program = parse_trace(text, "fuzz");
    CtaExpander expander(program, 1 << 16);
    CtaProgram p;
    expander.expand(0, p);
    expander.expand(program.cta_count() - 1, p);
  } catch (const InputError&) {
  }
}

TEST(TraceFuzz, TruncationsAndCorruptionsOfTheExamples) {
  std::mt19937 rng(12345);
  for (const char* name :
       {"tiny_load_mma.trace", "gemm_ws_2stage.trace", "gemm_grid.trace", "fa3_pingpong.trace"}) {
    const std::string text = read_file(example_path(name));
    ASSERT_FALSE(text.empty()) << name;
    for (std::size_t n = 0; n <= text.size(); ++n) survive(std::string_view(text).substr(0, n));
    for (int i = 0; i < 300; ++i) {
      std::string corrupt = text;
      for (int j = 0; j < 3; ++j) {
        std::size_t at = rng() % corrupt.size();
        switch (rng() % 3) {
          case 0:
            corrupt[at] = static_cast<char>(rng() % 256);
            break;
          case 1:
            corrupt.erase(at, 1 + rng() % 8);
            break;
          default:
            corrupt.insert(at, std::string(1, "{}()[],=.#\\\n-*/%0x9_"[rng() % 20]));
            break;
        }
        if (corrupt.empty()) corrupt = "x";
      }
      survive(corrupt);
    }
  }
}

TEST(TraceFuzz, Garbage) {
  std::mt19937 rng(7);
  for (int i = 0; i < 200; ++i) {
    std::string junk(rng() % 400, ' ');
    for (char& c : junk) c = static_cast<char>(rng() % 256);
    survive(junk);
  }
  survive(std::string(100000, '{'));
  survive(std::string(100000, '}'));
  survive("let x = " + std::string(100000, '('));
  survive("let x = " + std::string(100000, '-') + "1");
  survive(std::string("\xEF\xBB\xBFgrid 1\\\n"));
}

// ---- the component
// -------------------------------------------------------------------------------------

struct Harness : test::NullBuildContext {
  std::unique_ptr<TraceSource> make(const std::string& path, const std::string& defines = "") {
    Params params("workload", SourceLocation{"m.toml", 3, 1},
                  {{"path", path, SourceLocation{"m.toml", 4, 8}},
                   {"defines", defines, SourceLocation{"m.toml", 5, 11}},
                   {"max_instructions_per_cta", std::int64_t{1} << 24, SourceLocation{}}});
    return build<TraceSource>(params);
  }
};

TEST(TraceSourceComponent, SchemaAndParameters) {
  Schema schema;
  TraceSource::describe(schema);
  ASSERT_NE(schema.find("path"), nullptr);
  EXPECT_FALSE(schema.find("path")->default_value.has_value());
  ASSERT_NE(schema.find("defines"), nullptr);
  ASSERT_NE(schema.find("max_instructions_per_cta"), nullptr);

  Harness h;
  auto source = h.make(example_path("gemm_grid.trace"));
  EXPECT_EQ(source->cta_count(), 64u);
  EXPECT_EQ(source->tensor_maps().size(), 3u);
  const auto params = source->parameters();
  auto value = [&](const std::string& key) {
    for (const auto& [k, v] : params)
      if (k == key) return v;
    return std::string("<missing>");
  };
  EXPECT_EQ(value("path"), example_path("gemm_grid.trace"));
  EXPECT_EQ(value("grid"), "8x8x1");
  EXPECT_EQ(value("cta_count"), "64");
  EXPECT_EQ(value("tensor_maps"), "A,B,C");
  EXPECT_EQ(value("let.K"), "1024");
  EXPECT_EQ(value("cta0.warpgroups"), "1");
  EXPECT_EQ(value("cta0.instructions"), "244");
  EXPECT_EQ(value("cta0.registers"), std::to_string(168 * 128));
  EXPECT_EQ(value("cta0.smem_bytes"), std::to_string(128 * 1024));
  EXPECT_EQ(value("cta0.stages"), "3");
  EXPECT_EQ(value("defines"), "<missing>");

  CtaProgram p;
  source->build(9, p);
  EXPECT_EQ(p.cta_id, 9u);
}

TEST(TraceSourceComponent, DefinesResizeTheGrid) {
  Harness h;
  auto source = h.make(example_path("gemm_grid.trace"), "M=2048, K=512");
  EXPECT_EQ(source->cta_count(), 128u);
  CtaProgram p;
  source->build(0, p);
  EXPECT_EQ(instruction_count(p), 6u + 13 + 5 * 15 + 2 * 12 + 2 + 3 + 1);  // 8 K-blocks
}

TEST(TraceSourceComponent, InputErrorsPointAtTheManifestOrTheTrace) {
  Harness h;
  auto expect_at = [&](const std::string& path, const std::string& defines, std::uint32_t line,
                       const std::string& needle) {
    try {
      h.make(path, defines);
      ADD_FAILURE() << needle;
    } catch (const InputError& e) {
      EXPECT_EQ(e.where().line, line) << e.what();
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  const std::string gemm = example_path("gemm_grid.trace");
  expect_at("/nonexistent.trace", "", 4, "cannot read trace '/nonexistent.trace': no such file");
  expect_at(std::string(SIMFA_SOURCE_DIR), "", 4, "not a regular file");
  expect_at(gemm, "BM=64,MM=3", 5,
            "'MM' is not a top-level let of " + gemm + " (did you mean 'M'?)");
  expect_at(gemm, "M", 5, "bad define 'M': expected NAME=INTEGER");
  expect_at(gemm, "M=1.5", 5, "numbers are integers");
  expect_at(gemm, "M=1,M=2", 5, "'M' is defined twice");
  // A define that breaks the CTA body is caught at construction, at the trace's line.
  expect_at(gemm, "S=300", 30, "CTA 0: the stage count is 300; it must be in 1..256");
  // ... or while parsing, when a define makes a constant expression fail.
  expect_at(gemm, "S=0", 78, "division by zero (in '%')");
}

// An instruction added to the table, as a plugin's descriptor adds it, is written, checked,
// encoded and printed as its spec says, with no change to the parser.
std::string even_rule(std::int64_t v) {
  return v % 2 == 0 ? "" : "UMMA N is " + std::to_string(v) + "; it must be even";
}
constexpr OperandSpec kUmmaOperands[] = {
    {.name = "N", .field = Field::kXLow, .what = "UMMA N", .min = 8, .max = 256,
     .rule = even_rule},
    {.name = "column", .field = Field::kY, .what = "the tensor-memory column", .max = 511},
    {.name = "stage", .kind = OperandKind::kStage}};
constexpr InstructionSpec kUmma{
    .name = "UMMA", .engine = "umma", .operands = kUmmaOperands, .span = "umma"};

TEST(TraceParser, InstructionsAddedToTheTable) {
  InstructionSet set;
  const Opcode umma = set.add(kUmma);
  EXPECT_EQ(static_cast<int>(umma), kOpcodeCount);
  EXPECT_EQ(set.find("UMMA"), &set[umma]);
  EXPECT_THROW(set.add(kUmma), Error);  // a name is declared once

  const std::string text = in_warpgroup("    UMMA 128, 32 + 1, 1");
  const CtaProgram cta = expand(parse_trace(text, "t.trace", {}, set), 0);
  const Instruction& in = cta.warpgroups[0].code[0];
  EXPECT_EQ(in.op, umma);
  EXPECT_EQ(in.x, 128u);
  EXPECT_EQ(in.y, 33u);
  EXPECT_EQ(in.stage, 1u);
  EXPECT_EQ(instruction_text(set[umma], in, cta, nullptr), "UMMA 128 33 1");
  EXPECT_EQ(instruction_problem(set[umma], in, cta, nullptr), "");
  expect_error(text, 6, 5, "unknown opcode 'UMMA'");  // Hopper's table does not have it

  const auto error_of = [&](std::string_view body) -> std::string {
    try {
      expand(parse_trace(in_warpgroup(body), "t.trace", {}, set), 0);
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_NE(error_of("    UMMA 7, 0, 0").find("UMMA N is 7; it must be in 8..256"),
            std::string::npos);
  EXPECT_NE(error_of("    UMMA 10 + 1, 0, 0").find("UMMA N is 11; it must be even"),
            std::string::npos);
  EXPECT_NE(error_of("    UMMA 16, 0").find("missing operand 'stage' (UMMA N, column, stage)"),
            std::string::npos);
  EXPECT_NE(error_of("    UMMA 16, 0, 2").find("stage 2 is out of range"), std::string::npos);
}

}  // namespace
}  // namespace simfa::trace
