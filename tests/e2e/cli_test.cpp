// End-to-end tests of the `simfa` binary: real manifests, real example workloads, exit codes,
// error messages, the stats contract, determinism and event/reference stepping equivalence.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <boost/json.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace {

namespace fs = std::filesystem;
namespace json = boost::json;

struct Outcome {
  int exit_code = -1;
  std::string out;  // stdout and stderr together
};

Outcome simfa(const std::string& args) {
  std::string cmd = std::string(SIMFA_BINARY) + " " + args + " 2>&1";
  Outcome o;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return o;
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) o.out.append(buf.data(), n);
  int status = pclose(pipe);
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return o;
}

std::string source(const std::string& rel) {
  return std::string(SIMFA_SOURCE_DIR) + "/" + rel;
}

fs::path temp_file(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / "simfa_cli_test";
  fs::create_directories(dir);
  return dir / name;
}

json::object read_json(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return json::parse(ss.str()).as_object();
}

// Stats without the fields that measure the simulator itself (wall time, memory).
json::object without_sim(json::object o) {
  o.erase("sim");
  return o;
}

std::vector<fs::path> example_traces() {
  std::vector<fs::path> traces;
  for (const auto& e : fs::directory_iterator(source("examples/traces")))
    if (e.path().extension() == ".trace") traces.push_back(e.path());
  std::sort(traces.begin(), traces.end());
  return traces;
}

// Runs `run` (a `simfa run` command line without --stats) with event stepping and with the
// per-cycle reference stepping and expects the same stats but the simulator's own (DESIGN §2);
// `what` names the case in a failure, `files` the stats files (tests run in parallel).
void expect_steppings_alike(const std::string& run, const std::string& what,
                            const std::string& files) {
  fs::path a = temp_file(files + "_event.json"), b = temp_file(files + "_reference.json");
  Outcome e = simfa(run + " --stats " + a.string());
  Outcome r = simfa(run + " --stats " + b.string() + " --stepping reference");
  ASSERT_EQ(e.exit_code, 0) << what << "\n" << e.out;
  ASSERT_EQ(r.exit_code, 0) << what << "\n" << r.out;
  EXPECT_EQ(json::serialize(without_sim(read_json(a))), json::serialize(without_sim(read_json(b))))
      << what;
}

TEST(Cli, VersionNamesVersionHashAndAbi) {
  Outcome o = simfa("--version");
  EXPECT_EQ(o.exit_code, 0);
  EXPECT_NE(o.out.find("simfa 0."), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("sdk ABI 24"), std::string::npos) << o.out;
}

TEST(Cli, SummaryShowsTheEnginesBusyShareAsTheSmsReportIt) {
  // The summary's busy lines come from the SMs' meters (SmCore::meters), which sm.warpgroup
  // fills from its engines' busy cycles: over the run's cycles on every SM, they are the stats
  // file's busy cycles summed over the SMs.
  const fs::path stats = temp_file("summary_busy.json");
  Outcome o = simfa("run " + source("configs/h800.toml") + " --workload " +
                    source("examples/traces/gemm_grid.trace") + " --stats " + stats.string());
  ASSERT_EQ(o.exit_code, 0) << o.out;
  const json::object s = read_json(stats);
  const double cycles = s.at("kernel").at("cycles").to_number<double>();
  const int sms = s.at("manifest").at("gpu").at("sm_count").to_number<int>();
  for (const auto& [line, engine] :
       {std::pair{"tensor core busy  ", "tensor_core"}, std::pair{"TMA busy          ", "tma"}}) {
    std::uint64_t busy = 0;
    for (int i = 0; i < sms; ++i)
      busy += s.at("sm[" + std::to_string(i) + "]")
                  .at(engine)
                  .at("busy_cycles")
                  .to_number<std::uint64_t>();
    std::array<char, 32> share{};
    std::snprintf(share.data(), share.size(), "%.1f%%\n",
                  100.0 * static_cast<double>(busy) / (cycles * sms));
    const std::string want = line + std::string(share.data());
    EXPECT_NE(o.out.find(want), std::string::npos) << want << o.out;
  }
}

TEST(Cli, SummaryShowsTheStallsAsTheSmsReportThem) {
  // The stall line comes from the SMs' stall meters (SmMeter::kStall): each is the stats file's
  // stall.<name> summed over the SMs, listed in the order of the names.
  const fs::path stats = temp_file("summary_stalls.json");
  Outcome o = simfa("run " + source("configs/h800.toml") + " --workload " +
                    source("examples/traces/fa3_pingpong.trace") + " --stats " + stats.string());
  ASSERT_EQ(o.exit_code, 0) << o.out;
  const json::object s = read_json(stats);
  const int sms = s.at("manifest").at("gpu").at("sm_count").to_number<int>();
  std::map<std::string, std::uint64_t> stalls;
  for (int i = 0; i < sms; ++i)
    for (const auto& [name, cycles] : s.at("sm[" + std::to_string(i) + "]").at("stall").as_object())
      stalls[std::string(name)] += cycles.to_number<std::uint64_t>();
  ASSERT_EQ(stalls.size(), 5u);
  std::string want = "stall cycles      ";
  for (const auto& [name, cycles] : stalls)
    want += (&name == &stalls.begin()->first ? "" : ", ") + name + " " + std::to_string(cycles);
  EXPECT_NE(o.out.find(want + "\n"), std::string::npos) << want << "\n" << o.out;
}

TEST(Cli, PluginsListsTheBuiltInComponents) {
  Outcome o = simfa("plugins");
  EXPECT_EQ(o.exit_code, 0) << o.out;
  for (const char* name : {"sm.warpgroup", "scheduler.gto", "scheduler.lrr", "scheduler.oldest",
                           "dispatch.round_robin", "dispatch.fill", "tma.fixed", "tma.traffic",
                           "wgmma.half_n", "memory.ideal", "workload.trace"})
    EXPECT_NE(o.out.find(name), std::string::npos) << name << "\n" << o.out;
}

TEST(Cli, DescribeUnknownPluginIsBadInput) {
  Outcome o = simfa("plugins --describe tma.trafic");
  EXPECT_EQ(o.exit_code, 1);
}

TEST(Cli, ValidateAcceptsTheShippedManifests) {
  for (const char* m : {"configs/h800.toml"}) {
    Outcome o = simfa("validate " + source(m));
    EXPECT_EQ(o.exit_code, 0) << m << "\n" << o.out;
  }
}

TEST(Cli, ValidateReportsLocatedErrorsWithSuggestions) {
  fs::path bad = temp_file("bad.toml");
  std::ofstream(bad) << "[simfa]\nmanifest_version = 1\nextends = \"" << source("configs/h800.toml")
                     << "\"\n\n[tma]\nplugin = \"tma.trafic\"\n";
  Outcome o = simfa("validate " + bad.string());
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_NE(o.out.find(bad.string() + ":6:"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("tma.traffic"), std::string::npos) << o.out;  // did you mean
}

// The SM's engines are sub-slots of [sm]; the old top-level spelling still loads, and a file
// writing both spellings of one engine is refused at the old one's line.
TEST(Cli, SmEnginesAreSubSlotsOfSm) {
  fs::path fixed = temp_file("sm_tma_fixed.toml");
  std::ofstream(fixed) << "[simfa]\nmanifest_version = 1\nextends = \""
                       << source("configs/h800.toml") << "\"\n\n[sm.tma]\nplugin = \"tma.fixed\"\n";
  Outcome ok = simfa("validate " + fixed.string());
  EXPECT_EQ(ok.exit_code, 0) << ok.out;
  fs::path both = temp_file("sm_tma_both.toml");
  std::ofstream(both)
      << "[simfa]\nmanifest_version = 1\nextends = \"" << source("configs/h800.toml")
      << "\"\n\n[sm.tma]\nplugin = \"tma.fixed\"\n\n[tma]\nplugin = \"tma.fixed\"\n";
  Outcome o = simfa("validate " + both.string());
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_NE(o.out.find(both.string() + ":8:1: error: [tma] is the old spelling of [sm.tma]"),
            std::string::npos)
      << o.out;
}

TEST(Cli, UnknownSetKeyIsBadInput) {
  Outcome o = simfa("validate " + source("configs/h800.toml") + " --set gpu.sm_cont=4");
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_NE(o.out.find("sm_count"), std::string::npos) << o.out;
}

TEST(Cli, MissingWorkloadFileIsBadInput) {
  Outcome o = simfa("run " + source("configs/h800.toml") + " --workload /nonexistent/x.trace");
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_NE(o.out.find("/nonexistent/x.trace"), std::string::npos) << o.out;
}

TEST(Cli, StatsFileHoldsTheContract) {
  fs::path stats = temp_file("contract.json");
  Outcome o = simfa("run " + source("configs/h800.toml") + " -q --workload " +
                    source("examples/traces/gemm_grid.trace") + " --stats " + stats.string());
  ASSERT_EQ(o.exit_code, 0) << o.out;
  json::object s = read_json(stats);
  EXPECT_TRUE(s.at("simfa").as_object().contains("git_hash"));
  EXPECT_TRUE(s.at("manifest").is_object());
  EXPECT_EQ(s.at("manifest_sha256").as_string().size(), 64u);
  EXPECT_TRUE(s.at("seed").is_number());
  EXPECT_TRUE(s.at("workload").is_object());
  EXPECT_GT(s.at("kernel").at("cycles").to_number<std::uint64_t>(), 0u);
  EXPECT_GT(s.at("kernel").at("time_us").to_number<double>(), 0.0);
  for (const char* k : {"llc_read_bytes", "llc_write_bytes", "dram_read_bytes", "dram_write_bytes"})
    EXPECT_TRUE(s.at("memory").as_object().contains(k)) << k;
  EXPECT_GT(s.at("memory").at("llc_read_bytes").to_number<std::uint64_t>(), 0u);
  for (const char* k : {"wall_seconds", "cycles_per_second", "peak_rss_bytes"})
    EXPECT_TRUE(s.at("sim").as_object().contains(k)) << k;
  EXPECT_TRUE(s.at("sm[0]").is_object());
}

TEST(Cli, EventTimeIsTheSpanPlusTheLaunchOverhead) {
  fs::path plain = temp_file("launch_span.json"), timed = temp_file("launch_event.json");
  const std::string run = "run " + source("configs/h800.toml") + " -q --workload " +
                          source("examples/traces/gemm_grid.trace");
  ASSERT_EQ(simfa(run + " --stats " + plain.string()).exit_code, 0);
  Outcome o = simfa(run + " --stats " + timed.string() + " --set gpu.launch_overhead_ns=2500");
  ASSERT_EQ(o.exit_code, 0) << o.out;
  const json::object a = read_json(plain).at("kernel").as_object();
  const json::object b = read_json(timed).at("kernel").as_object();
  // The overhead moves what events measure, never the simulated span.
  EXPECT_EQ(a.at("cycles"), b.at("cycles"));
  EXPECT_DOUBLE_EQ(a.at("event_us").to_number<double>(), a.at("time_us").to_number<double>());
  EXPECT_DOUBLE_EQ(b.at("event_us").to_number<double>(), b.at("time_us").to_number<double>() + 2.5);
}

// DESIGN §2: the event-driven loop must equal the per-cycle reference loop, cycle for cycle and
// statistic for statistic, on every example (later workloads join by adding files): through the
// hierarchy, and through memory.ideal, which runs the TMA engines' line-by-line steps, those
// armed one after another as one event (simfa/step_batch.h, docs/performance.md §16).
TEST(Cli, ReferenceSteppingEqualsEventSteppingOnEveryExample) {
  auto traces = example_traces();
  ASSERT_FALSE(traces.empty());
  for (const char* memory : {"", " --set memory.plugin=memory.ideal"})
    for (const auto& trace : traces)
      expect_steppings_alike(
          "run " + source("configs/h800.toml") + " -q --workload " + trace.string() + memory,
          trace.string() + memory, "examples");
}

// The same with the memory system taking the TMA engines' lines as bursts (memory.bursts,
// docs/performance.md §10), through the hierarchy of configs/h200.toml and through memory.ideal.
TEST(Cli, ReferenceSteppingEqualsEventSteppingWithBursts) {
  auto traces = example_traces();
  ASSERT_FALSE(traces.empty());
  for (const char* memory : {"", " --set memory.plugin=memory.ideal"})
    for (const auto& trace : traces)
      expect_steppings_alike("run " + source("configs/h200.toml") + " -q --workload " +
                                 trace.string() + " --set memory.bursts=true" + memory,
                             trace.string() + memory, "bursts");
}

// The issue arbiter records the phase events of the next 4096 cycles and schedules later ones
// unrecorded (kernel/issue_arbiter.h); a workload asking for both must still step exactly.
TEST(Cli, ReferenceSteppingEqualsEventSteppingBeyondTheArbiterWindow) {
  const std::string trace = source("tests/e2e/data/phases_beyond_arbiter_window.trace");
  for (const char* manifest : {"configs/h800.toml", "configs/h200.toml"})
    expect_steppings_alike("run " + source(manifest) + " -q --workload " + trace, manifest,
                           "window");
}

TEST(Cli, RunsAreDeterministic) {
  fs::path a = temp_file("det_a.json"), b = temp_file("det_b.json");
  for (const fs::path& p : {a, b}) {
    Outcome o = simfa("run " + source("configs/h800.toml") + " -q --workload " +
                      source("examples/traces/fa3_pingpong.trace") + " --stats " + p.string());
    ASSERT_EQ(o.exit_code, 0) << o.out;
  }
  EXPECT_EQ(json::serialize(without_sim(read_json(a))), json::serialize(without_sim(read_json(b))));
}

TEST(Cli, DeadlockExitsWithThreeAndNamesTheWait) {
  Outcome o = simfa("run " + source("configs/h800.toml") + " -q --workload " +
                    source("tests/frontends/data/deadlock.trace"));
  EXPECT_EQ(o.exit_code, 3) << o.out;
  EXPECT_NE(o.out.find("deadlock"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("MB_WAIT"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("stage"), std::string::npos) << o.out;
}

TEST(Cli, WatchdogExitsWithFour) {
  Outcome o = simfa("run " + source("configs/h800.toml") + " -q --workload " +
                    source("examples/traces/gemm_grid.trace") + " --set simfa.max_cycles=100");
  EXPECT_EQ(o.exit_code, 4) << o.out;
  EXPECT_NE(o.out.find("watchdog"), std::string::npos) << o.out;
}

// One WarpGroup in a 5000-cycle BUBBLE: with --stall-cycles 1000 nothing issues or retires for
// longer than the limit while its wake-up event is pending, so the run stops as stalled at the
// cycle of its last issue + 1000, identically in both steppings (docs/reliability.md).
TEST(Cli, StallExitsWithFiveAtTheSameCycleInBothSteppings) {
  const fs::path trace = temp_file("stall.trace");
  std::ofstream(trace) << "grid 1\ncta {\n  warpgroup w regs=32 {\n    BUBBLE 5000\n  }\n}\n";
  std::string cycles[2];
  int i = 0;
  for (const char* stepping : {"event", "reference"}) {
    const fs::path stats = temp_file(std::string("stall_") + stepping + ".json");
    Outcome o = simfa("run " + source("configs/h800.toml") + " -q --workload " + trace.string() +
                      " --stall-cycles 1000 --stepping " + stepping + " --stats " + stats.string());
    EXPECT_EQ(o.exit_code, 5) << o.out;
    EXPECT_NE(o.out.find("stalled at cycle"), std::string::npos) << o.out;
    const json::object kernel = read_json(stats).at("kernel").as_object();
    EXPECT_EQ(kernel.at("outcome").as_string(), "stalled");
    EXPECT_GE(kernel.at("cycles").as_int64(), 1000);
    EXPECT_LT(kernel.at("cycles").as_int64(), 1100);
    cycles[i++] = json::serialize(kernel.at("cycles"));
  }
  EXPECT_EQ(cycles[0], cycles[1]);
  // Without the limit the same trace completes.
  EXPECT_EQ(simfa("run " + source("configs/h800.toml") + " -q --workload " + trace.string()).exit_code, 0);
}

TEST(Cli, TimeoutExitsWithSix) {
  Outcome o = simfa("run " + source("configs/h800.toml") +
                    " -q --workload gemm:m=8192,n=8192,k=8192 --timeout 0.001");
  EXPECT_EQ(o.exit_code, 6) << o.out;
  EXPECT_NE(o.out.find("timeout at cycle"), std::string::npos) << o.out;
}

TEST(Cli, TimelineIsChromeTraceJson) {
  fs::path t = temp_file("timeline.json");
  Outcome o = simfa("run " + source("configs/h800.toml") + " -q --workload " +
                    source("examples/traces/fa3_pingpong.trace") + " --timeline " + t.string());
  ASSERT_EQ(o.exit_code, 0) << o.out;
  json::object tl = read_json(t);
  const json::array& events = tl.at("traceEvents").as_array();
  ASSERT_FALSE(events.empty());
  bool saw_wgmma = false, saw_barrier_wait = false;
  for (const auto& ev : events) {
    const auto& e = ev.as_object();
    if (e.at("ph").as_string() != "X") continue;
    EXPECT_EQ(e.at("pid").as_int64(), 0);  // only SM 0 by default
    saw_wgmma |= e.at("name").as_string() == "wgmma";
    saw_barrier_wait |= e.at("name").as_string() == "wait:barrier";
  }
  EXPECT_TRUE(saw_wgmma);
  EXPECT_TRUE(saw_barrier_wait);
}

}  // namespace
