// The sweep's grid, shards and CSV rows alone (apps/sweep.h); tests/e2e/sweep_test.py runs it
// through the simulator.
#include "apps/sweep.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "simfa/error.h"

namespace simfa::apps {
namespace {

using Strings = std::vector<std::string>;

std::string error_of(const auto& call) {
  try {
    call();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(SweepVary, SplitsKeyAndValues) {
  const SweepAxis axis = parse_vary("memory.l2.size=25MiB,50MiB");
  EXPECT_EQ(axis.key, "memory.l2.size");
  EXPECT_EQ(axis.values, (Strings{"25MiB", "50MiB"}));
  EXPECT_FALSE(axis.workload_param());
  EXPECT_TRUE(parse_vary("workload.seqlen=1024").workload_param());
  // Only the first '=' splits: a value may hold one.
  EXPECT_EQ(parse_vary("a.b=x=1").values, Strings{"x=1"});
}

TEST(SweepVary, RejectsMalformedAxes) {
  EXPECT_EQ(error_of([] { parse_vary("memory.l2.size"); }),
            "--vary memory.l2.size: error: expected KEY=V1,V2,... (KEY a manifest key or "
            "workload.KEY)");
  EXPECT_EQ(error_of([] { parse_vary("=1,2"); }), "--vary =1,2: error: '' is not a key");
  for (const char* text : {"a=", "a=1,,2", "a=1,", "a=,1"})
    EXPECT_NE(error_of([&] { parse_vary(text); }).find("an empty value"), std::string::npos)
        << text;
}

TEST(SweepGrid, PointsAreRowMajorTheLastAxisFastest) {
  const SweepGrid grid("m.toml", {"gemm:m=64,n=64,k=64"}, {"gpu.clock_mhz=1000"},
                       {parse_vary("memory.l2.size=1,2"), parse_vary("workload.k=16,32,48")});
  ASSERT_EQ(grid.size(), 6u);
  const SweepGrid::Point p = grid.point(4);  // (1, 1): the second size, the second k
  EXPECT_EQ(p.index, 4u);
  EXPECT_EQ(p.values, (Strings{"2", "32"}));
  EXPECT_EQ(p.sets, (Strings{"gpu.clock_mhz=1000", "memory.l2.size=2"}));
  EXPECT_EQ(p.workload, "gemm:m=64,n=64,k=32");  // replaced in place
  EXPECT_EQ(grid.point(2).values, (Strings{"1", "48"}));
  EXPECT_EQ(grid.point(3).values, (Strings{"2", "16"}));
}

TEST(SweepGrid, WorkloadParametersAreAppendedWhenTheSpecLacksThem) {
  const SweepGrid grid("m.toml", {"gemm:m=64,k=64"}, {}, {parse_vary("workload.n=8")});
  EXPECT_EQ(grid.point(0).workload, "gemm:m=64,k=64,n=8");
  const SweepGrid bare("m.toml", {"fa3"}, {}, {parse_vary("workload.seqlen=512")});
  EXPECT_EQ(bare.point(0).workload, "fa3:seqlen=512");
}

TEST(SweepGrid, SeveralWorkloadsAreTheFirstAxis) {
  const SweepGrid grid("m.toml", {"gemm:m=64,n=64,k=64", "fa3:seqlen=512"}, {},
                       {parse_vary("workload.k=16,32")});
  ASSERT_EQ(grid.size(), 4u);
  EXPECT_EQ(grid.axes().front().key, "workload");
  EXPECT_EQ(grid.point(1).workload, "gemm:m=64,n=64,k=32");
  EXPECT_EQ(grid.point(2).workload, "fa3:seqlen=512,k=16");
  EXPECT_EQ(grid.point(2).values, (Strings{"fa3:seqlen=512", "16"}));
  EXPECT_EQ(sweep_columns(grid).at(1), "workload");
}

TEST(SweepGrid, RejectsAxesThatCannotWork) {
  const Strings w{"gemm:m=64,n=64,k=64"};
  auto grid = [&](Strings workloads, Strings sets, Strings varies) {
    std::vector<SweepAxis> axes;
    for (const auto& v : varies) axes.push_back(parse_vary(v));
    return error_of([&] { SweepGrid("m.toml", workloads, sets, axes); });
  };
  EXPECT_EQ(grid(w, {}, {"a.b=1", "a.b=2"}), "--vary a.b: error: varied twice");
  EXPECT_EQ(grid(w, {"a.b=3"}, {"a.b=1"}),
            "--vary a.b: error: also given as --set a.b=3: vary it or set it");
  EXPECT_NE(grid(w, {}, {"simfa.plugin_path=x"}).find("loaded once"), std::string::npos);
  EXPECT_NE(grid(w, {}, {"workload=a,b"}).find("give each workload as its own --workload"),
            std::string::npos);
  EXPECT_EQ(grid(w, {}, {"workload.=1"}), "--vary workload.: error: expected workload.KEY");
  const std::string trace = std::string(SIMFA_SOURCE_DIR) + "/examples/traces/gemm_grid.trace";
  EXPECT_NE(grid({trace}, {}, {"workload.k=1"}).find("is a file: workload.KEY varies"),
            std::string::npos);
  EXPECT_NE(grid({"gemm:m=1", "w.toml"}, {}, {"workload.k=1"}).find("'w.toml' is a file"),
            std::string::npos);
  EXPECT_EQ(grid({}, {}, {}), "--workload: error: no workload given");
  // 5^11 = 48828125 points.
  Strings many;
  for (int i = 0; i < 11; ++i) many.push_back("k" + std::to_string(i) + ".x=1,2,3,4,5");
  EXPECT_NE(grid(w, {}, many).find("more than 10000000 points"), std::string::npos);
}

TEST(SweepShard, InterleavesThePoints) {
  const Shard s = parse_shard("2/3");
  EXPECT_EQ(s.shard, 2u);
  EXPECT_EQ(s.count, 3u);
  EXPECT_FALSE(s.holds(0));
  EXPECT_TRUE(s.holds(1));
  EXPECT_TRUE(s.holds(4));
  EXPECT_FALSE(s.holds(5));
  EXPECT_TRUE(Shard{}.holds(7));
  EXPECT_EQ(error_of([] { parse_shard("3/2"); }),
            "--shard 3/2: error: shard 3 of 2 does not exist: 1 <= I <= N");
  for (const char* text : {"0/2", "1/0", "a/b", "1/2/3", "", "/2", "1/"})
    EXPECT_NE(error_of([&] { parse_shard(text); }), "no error") << text;
}

TEST(SweepCsv, QuotesWhatNeedsItAndReadsItBack) {
  const Strings fields{"plain", "a,b", "say \"hi\"", "two\nlines", ""};
  const std::string line = csv_line(fields);
  EXPECT_EQ(line, "plain,\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\",\n");
  std::size_t complete = 0;
  const auto records = parse_csv(line + "x,y\r\n", &complete);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0], fields);
  EXPECT_EQ(records[1], (Strings{"x", "y"}));
  EXPECT_EQ(complete, line.size() + 5);
}

TEST(SweepCsv, ATornLastLineIsLeftOut) {
  std::size_t complete = 0;
  const auto records = parse_csv("h1,h2\n1,2\n3,\"4", &complete);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1], (Strings{"1", "2"}));
  EXPECT_EQ(complete, 10u);  // "h1,h2\n1,2\n"
}

TEST(SweepRow, APointThatWasNotBuiltHasNoMetrics) {
  SweepRow row;
  row.point = 3;
  row.values = {"3MiB"};
  row.outcome = "error";
  row.wall_seconds = 0.0123;
  row.error = "bad size";
  const Strings fields = sweep_row_fields(row);
  ASSERT_EQ(fields.size(), 2 + sweep_result_columns().size());
  EXPECT_EQ(fields,
            (Strings{"3", "3MiB", "error", "", "", "", "", "", "", "", "0.012", "", "bad size"}));
  row.outcome = "completed";
  row.error.clear();
  row.cycles = 5247;
  row.time_us = 5247 / 1830.0;
  row.l2_hit_rate = 0.25;
  const Strings ran = sweep_row_fields(row);
  EXPECT_EQ(ran[3], "5247");
  EXPECT_EQ(std::stod(ran[4]), 5247 / 1830.0);  // shortest text, the same double
  EXPECT_EQ(ran[9], "0.25");
}

}  // namespace
}  // namespace simfa::apps
