// `simfa analyze` through run_analyze_command: the text report, JSON, sweep CSV, and exit code 1
// with the message on stderr for every kind of bad input.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <boost/json/parse.hpp>
#include <gtest/gtest.h>

#include "analytical/model.h"
#include "analytical/workload.h"
#include "apps/analyze_command.h"
#include "test_gpus.h"

namespace simfa::apps {
namespace {

struct Output {
  int code;
  std::string out;
  std::string err;
};

Output run(const AnalyzeRequest& request) {
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  const int code = run_analyze_command(request);
  std::string out = ::testing::internal::GetCapturedStdout();
  std::string err = ::testing::internal::GetCapturedStderr();
  return {code, out, err};
}

AnalyzeRequest request(const std::string& spec) {
  AnalyzeRequest r;
  r.gpu = analytical::testing::h800();
  r.gpu_name = "H800";
  r.workload_spec = spec;
  return r;
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::path(SIMFA_BINARY_DIR) / ("analytical_test_" + name)).string();
}

TEST(AnalyzeCommand, TextReport) {
  const Output o = run(request("fa3:model=llama3-70b,seqlen=65536"));
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.err, "");
  EXPECT_NE(o.out.find("workload             fa3:batch=1,heads=64,kv_heads=8,seqlen_q=65536,seqlen_k=65536,"
                       "head_dim=128,block_m=128,block_n=176,stages=2,causal=false\n"),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("launch               32768 CTAs, 132 per wave (one per SM), 249 waves\n"), std::string::npos)
      << o.out;
  // One KV head's K/V, 2 * 65536 * 128 * 2 = 33.55 MB, and 132 Q + 132 O tiles of 32 KiB lie
  // between two reads of a re-used line, the Q tiles (one reader each) at 0.75 of their bytes
  // (llc_survival.h, near_copy_share): 33.55 + 4.33 * 1.75 = 41.12 MB (1.57 LLCs); a wave
  // straddling two heads puts up to 33.55 MB more in between. 42.07 MB on average over the 248
  // re-uses: nothing survives.
  EXPECT_NE(o.out.find("regime               realistic: a re-used line's LRU stack distance from one wave to the "
                       "next is 42.07 MB on average, 1.6x the effective LLC of 26.21 MB (L2 52.43 MB / 2 "
                       "partitions), so 0.0% of what the waves re-use survives there (1 up to 0.95x, 0 from 1.35x): "
                       "DRAM reads 7.2x the compulsory (one wave's working set: 33.55 MB of K/V for 1 KV head + "
                       "8.651 MB of Q and O tiles for 132 CTAs = 42.21 MB)"),
            std::string::npos)
      << o.out;
  // 140.7 TFLOP at 989.4 TFLOP/s outlasts 10.74 GB at 3.35 TB/s.
  EXPECT_NE(o.out.find("-> 142.5 ms, compute bound\n"), std::string::npos) << o.out;
}

TEST(AnalyzeCommand, JsonMatchesTheModel) {
  AnalyzeRequest r = request("gemm:m=4096,n=4096,k=4096,raster=grouped");
  r.json = true;
  const Output o = run(r);
  ASSERT_EQ(o.code, 0) << o.err;
  const boost::json::object doc = boost::json::parse(o.out).as_object();
  const analytical::AnalyticalResult expected = analytical::analyze(
      r.gpu, analytical::resolve_workload(analytical::parse_workload_spec(r.workload_spec)));
  const boost::json::object& result = doc.at("result").as_object();
  // A fractional byte count (a partial survival) parses back within an ulp or so: Boost.JSON's
  // default number parsing is not correctly rounded.
  EXPECT_DOUBLE_EQ(result.at("dram_bytes").as_double(), expected.dram_bytes());
  EXPECT_EQ(result.at("llc_read_bytes").as_double(), expected.llc_read_bytes);
  EXPECT_EQ(result.at("regime").as_string(), analytical::regime_name(expected.regime));
  EXPECT_EQ(result.at("bound").as_string(), analytical::bound_name(expected.bound));
  EXPECT_FALSE(result.contains("kv_fetches"));  // an FA3 field
  EXPECT_EQ(doc.at("gpu").as_object().at("sm_count").as_double(), 132);
  EXPECT_EQ(doc.at("workload").as_string(),
            "gemm:m=4096,n=4096,k=4096,block_m=128,block_n=128,block_k=64,stages=3,warp_specialized=false,"
            "raster=grouped,dtype=fp16");
}

TEST(AnalyzeCommand, SweepWritesCsv) {
  AnalyzeRequest r = request("fa3:model=llama3-8b,seqlen=1024");
  r.sweeps = {"model=llama3-8b,llama3-70b", "seqlen=512..65536:x2"};
  r.csv_path = temp_path("sweep.csv");
  const Output o = run(r);
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.out.rfind("wrote 16 design points in ", 0), 0u) << o.out;
  std::ifstream in(r.csv_path);
  std::string header, line;
  std::getline(in, header);
  EXPECT_EQ(header.rfind("model,seqlen,flops,mma_flops,llc_read_bytes,", 0), 0u) << header;
  EXPECT_NE(header.find(",regime,"), std::string::npos);
  int rows = 0;
  std::string last;
  while (std::getline(in, line)) {
    ++rows;
    last = line;
  }
  EXPECT_EQ(rows, 16);
  EXPECT_EQ(last.rfind("llama3-70b,65536,", 0), 0u) << last;
  EXPECT_NE(last.find(",realistic,"), std::string::npos) << last;
  std::filesystem::remove(r.csv_path);
}

TEST(AnalyzeCommand, SweepWithoutCsvFileWritesCsvToStdout) {
  AnalyzeRequest r = request("gemm:m=1024,n=1024,k=1024");
  r.sweeps = {"sm_count=66,132", "dram_bandwidth=2TB/s,3.35TB/s"};
  const Output o = run(r);
  ASSERT_EQ(o.code, 0) << o.err;
  std::istringstream in(o.out);
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) ++lines;
  EXPECT_EQ(lines, 5);
  EXPECT_EQ(o.out.rfind("sm_count,dram_bandwidth,flops,", 0), 0u);
  EXPECT_EQ(o.err.rfind("evaluated 4 design points in ", 0), 0u) << o.err;
}

TEST(AnalyzeCommand, SweepAsJson) {
  AnalyzeRequest r = request("fa3:model=llama3-8b,seqlen=1024");
  r.sweeps = {"causal=false,true", "batch=1..4:+1"};
  r.json = true;
  const Output o = run(r);
  ASSERT_EQ(o.code, 0) << o.err;
  const boost::json::object doc = boost::json::parse(o.out).as_object();
  const boost::json::array& points = doc.at("points").as_array();
  ASSERT_EQ(points.size(), 8u);
  EXPECT_EQ(points[5].as_object().at("causal").as_string(), "true");
  EXPECT_EQ(points[5].as_object().at("batch").as_double(), 2);
}

TEST(AnalyzeCommand, BadInputExitsWithOneAndSaysWhy) {
  Output o = run(request("fa3:model=llama3-8b,seqlem=4096"));
  EXPECT_EQ(o.code, 1);
  EXPECT_EQ(o.out, "");
  EXPECT_EQ(o.err, "--workload: error: fa3: unknown key 'seqlem' (did you mean 'seqlen'?)\n");

  AnalyzeRequest r = request("fa3:model=llama3-8b,seqlen=4096");
  r.sweeps = {"seqlen=1..4:x0.5", "haeds=1,2"};
  o = run(r);
  EXPECT_EQ(o.code, 1);
  EXPECT_EQ(o.err,
            "--sweep seqlen=1..4:x0.5: error: a geometric step needs a factor above 1, got 'x0.5'\n"
            "--sweep haeds=1,2: error: unknown sweep parameter 'haeds' for fa3 (did you mean 'heads'?)\n");

  r = request("fa3:model=llama3-8b,seqlen=4096");
  r.gpu.sm_count = 0;
  r.gpu.dram_bandwidth = -1;
  o = run(r);
  EXPECT_EQ(o.code, 1);
  EXPECT_EQ(o.err,
            "[gpu] H800: error: gpu sm_count must be positive (got 0)\n"
            "[gpu] H800: error: gpu dram_bandwidth must be positive (got -1)\n");

  r = request("fa3:model=llama3-8b,seqlen=4096");
  r.csv_path = "/nonexistent-dir/out.csv";
  o = run(r);
  EXPECT_EQ(o.code, 1);
  EXPECT_EQ(o.err.rfind("--csv /nonexistent-dir/out.csv: error: cannot open for writing: ", 0), 0u) << o.err;
}

}  // namespace
}  // namespace simfa::apps
