// Simulated against measured on the H200 (issue 4): the microbenchmarks of examples/microbench/
// run on configs/h200.toml and compared with validation/h200/tma_chase.csv (latency against
// working set through the bulk-copy engine) and validation/h200/bandwidth.csv (TMA bulk and 2D
// copy bandwidth with every SM busy). Each comparison simulates at the clock its row measured
// (`sm_clock_mhz`). docs/calibration.md explains the method and holds the tables printed here.
//
// What is asserted is what issue 4 requires: the chase shows the same three regimes as the
// device (an L2-hit floor, a transition window between, a DRAM plateau), with the floor and the
// plateau each within 10% of the measurement; the bandwidths within 10% of theirs. The per-point
// errors and the MAPE are printed, not asserted.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <gtest/gtest.h>

namespace {

namespace fs = std::filesystem;
namespace json = boost::json;

std::string source(const std::string& rel) { return std::string(SIMFA_SOURCE_DIR) + "/" + rel; }

// ---- the measurements -------------------------------------------------------------------------

std::vector<std::map<std::string, std::string>> read_csv(const std::string& rel) {
  std::ifstream in(source(rel));
  std::vector<std::map<std::string, std::string>> rows;
  std::string line;
  std::vector<std::string> header;
  auto split = [](const std::string& s) {
    std::vector<std::string> f;
    std::stringstream ss(s);
    std::string x;
    while (std::getline(ss, x, ',')) f.push_back(x);
    if (!s.empty() && s.back() == ',') f.emplace_back();
    return f;
  };
  if (std::getline(in, line)) header = split(line);
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto f = split(line);
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < header.size() && i < f.size(); ++i) row[header[i]] = f[i];
    rows.push_back(std::move(row));
  }
  return rows;
}

struct ChasePoint {
  std::int64_t working_set = 0;  // bytes
  double cycles = 0;             // measured cycles per step (median of 3)
  double clock_mhz = 0;          // in-kernel clock of that measurement
};

// tma_chase.csv, warm mode, 128 B copies: the curve the simulator's TMA_BULK + MB_WAIT chain
// reproduces (validation/h200/README.md §1b).
std::map<std::int64_t, ChasePoint> measured_chase() {
  std::map<std::int64_t, ChasePoint> points;
  for (const auto& r : read_csv("validation/h200/tma_chase.csv")) {
    if (r.at("mode") != "warm" || r.at("bytes_per_copy") != "128") continue;
    ChasePoint p{std::stoll(r.at("working_set_bytes")), std::stod(r.at("cycles_per_load")),
                 std::stod(r.at("sm_clock_mhz"))};
    points[p.working_set] = p;
  }
  return points;
}

// ---- running simfa --------------------------------------------------------------------------

struct SimRun {
  int exit_code = -1;
  std::string output;
  json::object stats;
};

fs::path temp_dir() {
  fs::path dir = fs::temp_directory_path() / ("simfa_validation_test_" + std::to_string(getpid()));
  fs::create_directories(dir);
  return dir;
}

// The manifest under test: configs/h200.toml, or SIMFA_VALIDATION_MANIFEST (to print the same
// tables for another manifest, e.g. the uncalibrated values of docs/calibration.md).
std::string manifest() {
  const char* env = std::getenv("SIMFA_VALIDATION_MANIFEST");
  return env && *env ? std::string(env) : source("configs/h200.toml");
}

// One `simfa run MANIFEST` of a microbenchmark trace with `defines`, at `clock_mhz`, from an
// empty L2: both tables here were measured after a flush that reads 256 MiB (membench.cu's
// flush_read), which leaves no dirty line (docs/calibration.md §42).
SimRun simulate(const std::string& trace, const std::string& defines, double clock_mhz,
             const std::string& tag) {
  const fs::path dir = temp_dir();
  const fs::path workload = dir / (tag + ".toml");
  const fs::path stats = dir / (tag + ".json");
  std::ofstream(workload) << "[workload]\nfrontend = \"trace\"\npath = \""
                          << source("examples/microbench/" + trace) << "\"\ndefines = \"" << defines
                          << "\"\n";
  const std::string cmd = fmt::format(
      "{} run {} --workload {} --set gpu.clock_mhz={} --set memory.l2.start_dirty=0 --stats {} "
      "--quiet 2>&1",
      SIMFA_BINARY,
      manifest(), workload.string(), clock_mhz, stats.string());
  SimRun run;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return run;
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) run.output.append(buf.data(), n);
  const int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (run.exit_code == 0) {
    std::ifstream in(stats);
    std::stringstream ss;
    ss << in.rdbuf();
    run.stats = json::parse(ss.str()).as_object();
  }
  fs::remove(workload);
  fs::remove(stats);
  return run;
}

double kernel_cycles(const SimRun& r) {
  return static_cast<double>(r.stats.at("kernel").as_object().at("cycles").to_number<std::int64_t>());
}

// Runs `jobs` two at a time (the simulator is single-threaded; two cores halve the wall time).
std::vector<SimRun> run_all(const std::vector<std::function<SimRun()>>& jobs) {
  std::vector<SimRun> results(jobs.size());
  for (std::size_t i = 0; i < jobs.size(); i += 2) {
    auto first = std::async(std::launch::async, jobs[i]);
    if (i + 1 < jobs.size()) results[i + 1] = jobs[i + 1]();
    results[i] = first.get();
  }
  return results;
}

double percent(double simulated, double measured) { return (simulated - measured) / measured * 100; }

// ---- the latency chase ----------------------------------------------------------------------

enum class Regime { kFloor, kWindow, kPlateau };

// validation/h200/README.md §1 and §1b: the floor up to 24 MiB, the window from there to 80 MiB,
// the DRAM plateau from 80 MiB on.
Regime regime_of(std::int64_t working_set) {
  constexpr std::int64_t MiB = 1 << 20;
  if (working_set <= 24 * MiB) return Regime::kFloor;
  if (working_set < 80 * MiB) return Regime::kWindow;
  return Regime::kPlateau;
}

const char* regime_name(Regime r) {
  switch (r) {
    case Regime::kFloor: return "floor";
    case Regime::kWindow: return "window";
    case Regime::kPlateau: return "plateau";
  }
  return "";
}

TEST(H200Validation, TmaChaseReproducesFloorWindowAndPlateau) {
  constexpr std::int64_t MiB = 1 << 20;
  // Three floor points, every window point the device measured but 36 MiB (the shelf 36-48 is
  // flat: 40 and 48 stand for it), two plateau points. The largest costs most: 2^19 warm-up
  // steps, twice.
  const std::vector<std::int64_t> sets{1,  16, 24, 28, 32, 40, 48, 56, 64, 80, 256};
  const auto measured = measured_chase();

  // The timed steps of the device kernel follow min(lines, 2^19) untimed ones on the same cycle
  // (examples/microbench/tma_chase.trace). The simulation is deterministic, so the warm-up costs
  // the same cycles with and without the timed steps: timed cycles = run(warm + timed) -
  // run(warm only).
  constexpr int kSteps = 65536;
  std::vector<std::function<SimRun()>> jobs;
  for (std::int64_t mib : sets) {
    const ChasePoint& p = measured.at(mib * MiB);
    for (int steps : {kSteps, 0})
      jobs.push_back([=] {
        return simulate("tma_chase.trace", fmt::format("WS={}MiB STEPS={}", mib, steps),
                        p.clock_mhz, fmt::format("chase_{}_{}", mib, steps));
      });
  }
  const std::vector<SimRun> runs = run_all(jobs);
  for (const SimRun& r : runs) ASSERT_EQ(r.exit_code, 0) << r.output;

  struct Row {
    std::int64_t mib;
    Regime regime;
    double measured, simulated, error;
  };
  std::vector<Row> rows;
  for (std::size_t i = 0; i < sets.size(); ++i) {
    const ChasePoint& p = measured.at(sets[i] * MiB);
    const double sim = (kernel_cycles(runs[2 * i]) - kernel_cycles(runs[2 * i + 1])) / kSteps;
    rows.push_back({sets[i], regime_of(p.working_set), p.cycles, sim, percent(sim, p.cycles)});
  }

  std::string table =
      "| working set | regime | measured (cycles/step) | simulated | error |\n"
      "| --- | --- | --- | --- | --- |\n";
  double abs_sum = 0;
  std::map<Regime, std::vector<double>> abs_by_regime;
  for (const Row& r : rows) {
    table += fmt::format("| {} MiB | {} | {:.1f} | {:.1f} | {:+.1f}% |\n", r.mib,
                         regime_name(r.regime), r.measured, r.simulated, r.error);
    abs_sum += std::abs(r.error);
    abs_by_regime[r.regime].push_back(std::abs(r.error));
  }
  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? 0.0 : s / static_cast<double>(v.size());
  };
  table += fmt::format("\nMAPE {:.1f}% over {} points (floor {:.1f}%, window {:.1f}%, plateau {:.1f}%)\n",
                       abs_sum / static_cast<double>(rows.size()), rows.size(),
                       mean(abs_by_regime[Regime::kFloor]), mean(abs_by_regime[Regime::kWindow]),
                       mean(abs_by_regime[Regime::kPlateau]));
  std::printf("\nTMA_BULK + MB_WAIT chase, %s against validation/h200/tma_chase.csv (warm, 128 B)"
              "\n\n%s\n", manifest().c_str(), table.c_str());

  // Floor and plateau: each point within 10% of the measurement.
  double floor_max = 0, plateau_min = 1e18;
  for (const Row& r : rows) {
    if (r.regime == Regime::kWindow) continue;
    EXPECT_LE(std::abs(r.error), 10.0) << r.mib << " MiB (" << regime_name(r.regime) << ")";
    if (r.regime == Regime::kFloor) floor_max = std::max(floor_max, r.simulated);
    if (r.regime == Regime::kPlateau) plateau_min = std::min(plateau_min, r.simulated);
  }
  // Three regimes: the window rises from the floor to the plateau without passing either, and
  // its middle (the device's 36-48 MiB shelf, 634 cycles: 65% of the way up) is a level of its
  // own, clear of both, which a unified L2 (a step from floor to plateau at its capacity) would
  // not give.
  double previous = floor_max;
  for (const Row& r : rows) {
    if (r.regime != Regime::kWindow) continue;
    EXPECT_GE(r.simulated, previous * 0.98) << r.mib << " MiB: the window falls back";
    EXPECT_LE(r.simulated, plateau_min * 1.02) << r.mib << " MiB: above the plateau";
    previous = std::max(previous, r.simulated);
    if (r.mib == 40 || r.mib == 48) {
      const double height = (r.simulated - floor_max) / (plateau_min - floor_max);
      EXPECT_GT(height, 0.3) << r.mib << " MiB sits on the floor";
      EXPECT_LT(height, 0.9) << r.mib << " MiB sits on the plateau";
    }
  }
}

// ---- the bandwidth streams ------------------------------------------------------------------

struct Shape {
  std::string kind, shape;  // bandwidth.csv's columns
  int stages;
  std::string trace, defines;
  double x;  // bytes of the first run; the second moves 2x
  // defines making the run move `bytes` (through TOTAL, or TILES of box bytes)
  std::string length(double bytes) const {
    if (trace == "tma_bulk_stream.trace") return fmt::format("{} TOTAL={}", defines, bytes);
    const auto box = static_cast<double>(std::stoi(shape.substr(0, shape.find('x'))) *
                                         std::stoi(shape.substr(shape.find('x') + 1)) * 2);
    return fmt::format("{} TILES={}", defines, bytes / box);
  }
};
TEST(H200Validation, TmaBandwidthMatchesTheMeasuredStreams) {
  // Steady state by difference, as for the chase: the fill and drain of the pipeline cost the
  // same in a run moving X bytes and one moving 2X, so bandwidth = X / (t(2X) - t(X)). The
  // device moved 4 GiB, where fill and drain are 0.1% of the time. X here is 16 MiB for the
  // bulk streams, four times what the grid holds in flight (132 SMs x tma.max_outstanding 256
  // lines), and every byte of a DRAM stream still comes from DRAM once (no reuse within a
  // stream); 32 MiB for tma_bulk_l2, whose 16 MiB source the first half fills so that the
  // difference is all L2 hits, and for the 2D boxes, whose channel spread depends on how many
  // columns the SMs have moved through (8 to 31 boxes per SM; 16 MiB leaves 256x64 at 4 per SM
  // and 8% lower).
  constexpr double MiB = 1 << 20;
  const std::vector<Shape> shapes{
      {"tma_bulk_dram", "16384B", 8, "tma_bulk_stream.trace", "OP=16KiB STAGES=8", 16 * MiB},
      {"tma_bulk_dram", "65536B", 2, "tma_bulk_stream.trace", "OP=64KiB STAGES=2", 16 * MiB},
      {"tma_bulk_l2", "16384B", 8, "tma_bulk_stream.trace", "OP=16KiB STAGES=8 SRC=16MiB",
       32 * MiB},
      {"tma_2d", "64x64", 16, "tma_2d_stream.trace", "BOX_R=64 BOX_C=64 STAGES=16", 32 * MiB},
      {"tma_2d", "128x64", 8, "tma_2d_stream.trace", "BOX_R=128 BOX_C=64 STAGES=8", 32 * MiB},
      {"tma_2d", "64x128", 8, "tma_2d_stream.trace", "BOX_R=64 BOX_C=128 STAGES=8", 32 * MiB},
      {"tma_2d", "256x64", 4, "tma_2d_stream.trace", "BOX_R=256 BOX_C=64 STAGES=4", 32 * MiB},
  };
  std::map<std::string, std::pair<double, double>> measured;  // GB/s, clock
  // The first row of a shape: 64x64 x16 has a second, SWIZZLE_NONE row (4541 GB/s), which the
  // simulator (no shared-memory layout) cannot tell apart.
  for (const auto& r : read_csv("validation/h200/bandwidth.csv"))
    measured.try_emplace(r.at("kind") + "/" + r.at("shape") + "/" + r.at("stages"),
                         std::stod(r.at("GBps")), std::stod(r.at("sm_clock_mhz")));

  std::vector<std::function<SimRun()>> jobs;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const Shape& s = shapes[i];
    const double clock = measured.at(s.kind + "/" + s.shape + "/" + std::to_string(s.stages)).second;
    jobs.push_back([=] { return simulate(s.trace, s.length(s.x), clock, fmt::format("bw_{}_a", i)); });
    jobs.push_back(
        [=] { return simulate(s.trace, s.length(2 * s.x), clock, fmt::format("bw_{}_b", i)); });
  }
  const std::vector<SimRun> runs = run_all(jobs);
  for (const SimRun& r : runs) ASSERT_EQ(r.exit_code, 0) << r.output;

  std::string table =
      "| kind | shape | stages | measured (GB/s) | simulated (GB/s) | error |\n"
      "| --- | --- | --- | --- | --- | --- |\n";
  double abs_sum = 0;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const Shape& s = shapes[i];
    const auto [gbps, clock] = measured.at(s.kind + "/" + s.shape + "/" + std::to_string(s.stages));
    const double cycles = kernel_cycles(runs[2 * i + 1]) - kernel_cycles(runs[2 * i]);
    const double sim = s.x / (cycles / (clock * 1e6)) / 1e9;
    const double err = percent(sim, gbps);
    abs_sum += std::abs(err);
    table += fmt::format("| {} | {} | {} | {:.0f} | {:.0f} | {:+.1f}% |\n", s.kind, s.shape,
                         s.stages, gbps, sim, err);
    EXPECT_LE(std::abs(err), 10.0) << s.kind << " " << s.shape << " x" << s.stages;
  }
  table += fmt::format("\nMAPE {:.1f}% over {} shapes\n", abs_sum / static_cast<double>(shapes.size()),
                       shapes.size());
  std::printf("\nTMA bandwidth, %s against validation/h200/bandwidth.csv\n\n%s\n",
              manifest().c_str(), table.c_str());
}

}  // namespace
