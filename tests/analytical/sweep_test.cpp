// Sweep axes (geometric, linear, lists, units), grids, and the invariant the paper's figure 11
// rests on: the ideal and realistic models agree exactly while the working set fits.
#include "analytical/sweep.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "simfa/error.h"
#include "test_gpus.h"

namespace simfa::analytical {
namespace {

using testing::h800;

std::string error_of(const std::string& text, WorkloadKind kind = WorkloadKind::fa3) {
  try {
    parse_sweep(text, kind);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Sweep, GeometricRangeIncludesBothEnds) {
  const SweepAxis axis = parse_sweep("seqlen=512..65536:x2", WorkloadKind::fa3);
  EXPECT_FALSE(axis.gpu);
  EXPECT_EQ(axis.key, static_cast<int>(Fa3Key::seqlen));
  EXPECT_EQ(axis.values, (std::vector<double>{512, 1024, 2048, 4096, 8192, 16384, 32768, 65536}));
  // An end the factor does not hit is not passed.
  EXPECT_EQ(parse_sweep("batch=1..10:x3", WorkloadKind::fa3).values, (std::vector<double>{1, 3, 9}));
  // Integer keys round, and repeats from rounding go: 1, 1.5, 2.25, 3.375, 5.06, 7.59 -> 1 2 3 5 8.
  EXPECT_EQ(parse_sweep("batch=1..8:x1.5", WorkloadKind::fa3).values, (std::vector<double>{1, 2, 3, 5, 8}));
}

TEST(Sweep, LinearRangesAndLists) {
  EXPECT_EQ(parse_sweep("m=1024..4096:+1024", WorkloadKind::gemm).values,
            (std::vector<double>{1024, 2048, 3072, 4096}));
  EXPECT_EQ(parse_sweep("block_n=64,128,176", WorkloadKind::fa3).values, (std::vector<double>{64, 128, 176}));
  const SweepAxis models = parse_sweep("model=llama3-8b,llama3-405b", WorkloadKind::fa3);
  EXPECT_EQ(models.values, (std::vector<double>{0, 2}));
  EXPECT_EQ(sweep_value_text(models, WorkloadKind::fa3, 1), "llama3-405b");
  EXPECT_EQ(parse_sweep("causal=false,true", WorkloadKind::fa3).values, (std::vector<double>{0, 1}));
}

TEST(Sweep, GpuParametersTakeUnits) {
  const SweepAxis l2 = parse_sweep("l2_size=20MiB..60MiB:+20MiB", WorkloadKind::fa3);
  EXPECT_TRUE(l2.gpu);
  EXPECT_EQ(l2.key, static_cast<int>(GpuKey::l2_size));
  EXPECT_EQ(l2.values, (std::vector<double>{20971520, 41943040, 62914560}));
  EXPECT_EQ(parse_sweep("dram_bandwidth=3.35TB/s,4.8TB/s", WorkloadKind::gemm).values,
            (std::vector<double>{3.35e12, 4.8e12}));
  EXPECT_EQ(parse_sweep("clock_mhz=1.5GHz,1830", WorkloadKind::fa3).values, (std::vector<double>{1500, 1830}));
  EXPECT_EQ(parse_sweep("sm_count=66..132:x2", WorkloadKind::fa3).values, (std::vector<double>{66, 132}));
}

TEST(Sweep, Errors) {
  EXPECT_EQ(error_of("seqlem=1,2"),
            "--sweep seqlem=1,2: error: unknown sweep parameter 'seqlem' for fa3 (did you mean 'seqlen'?)");
  EXPECT_EQ(error_of("l2_sise=1MiB,2MiB", WorkloadKind::gemm),
            "--sweep l2_sise=1MiB,2MiB: error: unknown sweep parameter 'l2_sise' for gemm (did you mean 'l2_size'?)");
  EXPECT_EQ(error_of("seqlen"),
            "--sweep seqlen: error: expected NAME=VALUES (LO..HI:xFACTOR, LO..HI:+STEP or V1,V2,...)");
  EXPECT_EQ(error_of("seqlen=512..4096"),
            "--sweep seqlen=512..4096: error: a range needs a step: LO..HI:xFACTOR (geometric) or LO..HI:+STEP "
            "(linear)");
  EXPECT_EQ(error_of("seqlen=512..4096:x1"),
            "--sweep seqlen=512..4096:x1: error: a geometric step needs a factor above 1, got 'x1'");
  EXPECT_EQ(error_of("seqlen=512..4096:+0"),
            "--sweep seqlen=512..4096:+0: error: a linear step needs a positive increment, got '+0'");
  EXPECT_EQ(error_of("seqlen=512..4096:*2"),
            "--sweep seqlen=512..4096:*2: error: a range step starts with x (geometric) or + (linear), got '*2'");
  EXPECT_EQ(error_of("seqlen=4096..512:x2"),
            "--sweep seqlen=4096..512:x2: error: the range end 512 lies below its start 4096");
  EXPECT_EQ(error_of("seqlen=a..512:x2"), "--sweep seqlen=a..512:x2: error: cannot read the range start 'a'");
  EXPECT_EQ(error_of("model=llama3-8b..llama3-70b:+1"),
            "--sweep model=llama3-8b..llama3-70b:+1: error: model takes a list of values (V1,V2,...), not a range");
  EXPECT_EQ(error_of("seqlen=512,x,0"),
            "--sweep seqlen=512,x,0: error: seqlen expects a positive integer below 2^31, got 'x'\n"
            "--sweep seqlen=512,x,0: error: seqlen expects a positive integer below 2^31, got '0'");
  EXPECT_EQ(error_of("l2_size=50MB,lots"), "--sweep l2_size=50MB,lots: error: cannot read l2_size value 'lots'");
}

TEST(Sweep, GridIsTheProductOfItsAxesLastAxisFastest) {
  const WorkloadSpec base = parse_workload_spec("fa3:model=llama3-8b,seqlen=1024");
  std::vector<SweepAxis> axes;
  axes.push_back(parse_sweep("model=llama3-8b,llama3-70b,llama3-405b", WorkloadKind::fa3));
  axes.push_back(parse_sweep("seqlen=512..4096:x2", WorkloadKind::fa3));
  axes.push_back(parse_sweep("l2_partitions=1,2", WorkloadKind::fa3));
  const SweepGrid grid(base, h800(), std::move(axes));
  ASSERT_EQ(grid.size(), 3u * 4u * 2u);
  grid.validate();
  std::vector<std::string> visited;
  grid.for_each([&](const SweepPoint& p) {
    visited.push_back(std::to_string(p.workload.fa3.heads) + "/" + std::to_string(p.workload.fa3.seqlen_q) + "/" +
                      std::to_string(p.gpu.l2_partitions));
    EXPECT_EQ(p.result.effective_llc_bytes, 50.0 * 1024 * 1024 / p.gpu.l2_partitions);
  });
  ASSERT_EQ(visited.size(), 24u);
  EXPECT_EQ(visited[0], "32/512/1");
  EXPECT_EQ(visited[1], "32/512/2");
  EXPECT_EQ(visited[2], "32/1024/1");
  EXPECT_EQ(visited[23], "128/4096/2");
}

TEST(Sweep, GridErrors) {
  const WorkloadSpec base = parse_workload_spec("fa3:model=llama3-8b,seqlen_q=1024,seqlen_k=1024");
  std::vector<SweepAxis> twice;
  twice.push_back(parse_sweep("batch=1,2", WorkloadKind::fa3));
  twice.push_back(parse_sweep("batch=4", WorkloadKind::fa3));
  EXPECT_THROW(SweepGrid(base, h800(), std::move(twice)), InputError);

  // A point whose heads are no multiple of kv_heads is found before anything runs.
  std::vector<SweepAxis> conflict;
  conflict.push_back(parse_sweep("heads=8,12", WorkloadKind::fa3));
  const SweepGrid grid(base, h800(), std::move(conflict));
  try {
    grid.validate();
    FAIL() << "expected an error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--sweep: error: design point heads=12 is invalid:\n"
              "--workload: error: fa3: heads (12) must be a multiple of kv_heads (8)");
  }
  std::vector<SweepAxis> no_sms;
  no_sms.push_back(parse_sweep("sm_count=0,132", WorkloadKind::fa3));
  EXPECT_THROW(SweepGrid(base, h800(), std::move(no_sms)).validate(), InputError);
}

// Over the Llama-3 family and the paper's sequence lengths on H800: SimFA's reads lie between the
// ideal and the wave model, equal the ideal while every re-used head lies within the effective LLC
// (a re-use spans at most twice the first wave's K/V and one wave's tiles), equal the wave model
// when nothing survives, and never grow with the L2.
TEST(Sweep, TrafficLiesBetweenTheIdealAndTheWaveModel) {
  const WorkloadSpec base = parse_workload_spec("fa3:model=llama3-8b,seqlen=1024");
  std::vector<SweepAxis> axes;
  axes.push_back(parse_sweep("model=llama3-8b,llama3-70b,llama3-405b", WorkloadKind::fa3));
  axes.push_back(parse_sweep("batch=1,2,4", WorkloadKind::fa3));
  axes.push_back(parse_sweep("causal=false,true", WorkloadKind::fa3));
  axes.push_back(parse_sweep("seqlen=512..131072:x2", WorkloadKind::fa3));
  axes.push_back(parse_sweep("l2_size=20MiB..100MiB:+20MiB", WorkloadKind::fa3));
  const SweepGrid grid(base, h800(), std::move(axes));
  int fits = 0, partial = 0, spills = 0;
  double previous = 0;
  grid.for_each([&](const SweepPoint& p) {
    const AnalyticalResult& r = p.result;
    EXPECT_GE(r.dram_read_bytes, r.dram_ideal_read_bytes * (1 - 1e-12));
    EXPECT_LE(r.dram_read_bytes, r.dram_wave_read_bytes * (1 + 1e-12));
    EXPECT_GE(r.reuse_survival, 0);
    EXPECT_LE(r.reuse_survival, 1 + 1e-12);
    if (2 * r.working_set_operand_bytes + r.working_set_tile_bytes <= r.effective_llc_bytes) {
      ++fits;
      EXPECT_EQ(r.regime, Regime::ideal);
      EXPECT_EQ(r.dram_bytes(), r.dram_ideal_bytes());
    }
    if (r.regime == Regime::realistic) {
      ++spills;
      EXPECT_EQ(r.dram_read_bytes, r.dram_wave_read_bytes);
    }
    if (r.regime == Regime::partial) ++partial;
    // l2_size varies fastest: a larger L2 never reads more.
    if (p.index.back() > 0) {
      EXPECT_LE(r.dram_read_bytes, previous * (1 + 1e-12));
    }
    previous = r.dram_read_bytes;
  });
  EXPECT_GT(fits, 0);
  EXPECT_GT(partial, 0);
  EXPECT_GT(spills, 0);
}

}  // namespace
}  // namespace simfa::analytical
