// Issue 6's cross-check: the analytical model's LLC bytes (analytical/, section III-C) equal the
// cycle-level simulator's memory.llc_read_bytes, on GEMM and FA3 shapes with edge clipping,
// GQA, causal masks and both models' default tiles. docs/crosscheck.md.
//
// Both models read configs/h800.toml (the analytical one its [gpu] table); the simulator runs
// without the coalescer, so every TMA line request arrives at the L2, on 16 SMs.
#include <string>

#include <gtest/gtest.h>

#include "crosscheck.h"

namespace simfa::crosscheck {
namespace {

const std::vector<kernel::Override> kNoCoalescer = no_coalescer({{"gpu.sm_count", "16"}});

struct Case {
  const char* spec;       ///< keys both models know
  const char* sim_extra;  ///< simulator-only keys
};

// Every shape's box rows cover whole 128-byte lines (docs/crosscheck.md: the one condition
// for bytes and line requests to agree).
constexpr Case kCases[] = {
    {"gemm:m=512,n=512,k=512", ""},
    {"gemm:m=1000,n=704,k=576,block_k=128,raster=grouped", ""},
    {"gemm:m=384,n=640,k=192,warp_specialized=true", ",b_layout=kn"},
    {"gemm:m=512,n=384,k=1024,block_k=128,dtype=fp8", ""},
    {"gemm:m=640,n=384,k=320,block_m=64,block_n=192,stages=4", ""},
    {"fa3:heads=4,kv_heads=2,seqlen=256", ""},
    {"fa3:batch=2,heads=4,kv_heads=1,seqlen=600", ""},
    {"fa3:model=llama3-8b,seqlen=384", ""},
    {"fa3:heads=2,seqlen=1024,causal=true", ""},
    {"fa3:heads=2,kv_heads=1,seqlen_q=640,seqlen_k=256,causal=true", ""},
    {"fa3:heads=3,seqlen_q=300,seqlen_k=700,causal=true,block_n=176", ""},
    {"fa3:heads=2,seqlen=520,block_m=64,head_dim=64", ""},
};

class AnalyticalLlc : public ::testing::TestWithParam<Case> {};

TEST_P(AnalyticalLlc, EqualsTheSimulatorsLlcBytes) {
  const Case& c = GetParam();
  const SimTotals sim = simulate(kNoCoalescer, std::string(c.spec) + c.sim_extra);
  ASSERT_TRUE(sim.completed) << c.spec;
  const analytical::AnalyticalResult model = analyze(kNoCoalescer, c.spec);
  EXPECT_EQ(static_cast<double>(sim.llc_read_bytes), model.llc_read_bytes) << c.spec;
  EXPECT_EQ(static_cast<double>(sim.llc_write_bytes), model.llc_write_bytes) << c.spec;
}

INSTANTIATE_TEST_SUITE_P(Shapes, AnalyticalLlc, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& param) {
                           return std::string(std::string_view(param.param.spec).substr(0, 3)) + "_" +
                                  std::to_string(param.index);
                         });

// The ideal model's DRAM reads are the compulsory footprint: with every operand far inside the
// L2, the simulator's DRAM reads come within a few percent of it (docs/crosscheck.md's table
// compares the two models across seqlen).
TEST(AnalyticalDram, IdealReadsMatchTheSimulatorWhenEverythingFits) {
  const std::vector<kernel::Override> h800 = {{"gpu.sm_count", "16"}};
  for (const Case& c : kCases) {
    const SimTotals sim = simulate(h800, std::string(c.spec) + c.sim_extra);
    const analytical::AnalyticalResult model = analyze(h800, c.spec);
    ASSERT_EQ(model.regime, analytical::Regime::ideal) << c.spec;
    EXPECT_GE(static_cast<double>(sim.dram_read_bytes), model.dram_ideal_read_bytes) << c.spec;
    EXPECT_LE(static_cast<double>(sim.dram_read_bytes), 1.05 * model.dram_ideal_read_bytes) << c.spec;
  }
}

}  // namespace
}  // namespace simfa::crosscheck
