// The `simfa` command-line program: parses arguments and calls the kernel. Exit codes
// (docs/cli.md): 0 success, 1 bad input, 2 internal error, 3 deadlock, 4 watchdog, 5 stalled
// (no progress: a livelock), 6 wall-clock timeout.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <boost/json/serialize.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "apps/analyze_command.h"
#include "apps/loaded_manifest.h"
#include "apps/rank_command.h"
#include "apps/sweep_command.h"
#include "kernel/ablation.h"
#include "kernel/describe.h"
#include "kernel/gantt_chart.h"
#include "kernel/manifest.h"
#include "kernel/plugin_host.h"
#include "kernel/simulation.h"
#include "kernel/version.h"
#include "kernel/workload_spec.h"
#include "simfa/error.h"
#include "simfa/generator.h"
#include "simfa/plugin.h"
#include "ttgir_instrument.h"

namespace {

using namespace simfa::kernel;

constexpr int kExitOk = 0;
constexpr int kExitBadInput = 1;
constexpr int kExitInternal = 2;
constexpr int kExitDeadlock = 3;
constexpr int kExitWatchdog = 4;
constexpr int kExitStalled = 5;
constexpr int kExitTimeout = 6;

using simfa::apps::load;
using simfa::apps::LoadedManifest;

std::vector<int> parse_sm_list(const std::string& text, const char* option) {
  std::vector<int> sms;
  std::size_t start = 0;
  while (start <= text.size()) {
    auto comma = text.find(',', start);
    std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    try {
      std::size_t used = 0;
      int v = std::stoi(item, &used);
      if (used != item.size() || v < 0) throw std::invalid_argument(item);
      sms.push_back(v);
    } catch (const std::exception&) {
      throw simfa::InputError(simfa::SourceLocation{option, 0, 0},
                              "expected a comma-separated list of SM indices, got '" + text + "'");
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return sms;
}

void check_sms_exist(const std::vector<int>& sms, int sm_count, const char* option) {
  for (int sm : sms)
    if (sm >= sm_count)
      throw simfa::InputError(
          fmt::format("{}: SM {} is not in the run (the GPU has {} SMs, 0 to {})", option, sm,
                      sm_count, sm_count - 1));
}

// "A..B": the cycles [A, B) of --gantt-cycles.
std::pair<simfa::Cycle, simfa::Cycle> parse_cycle_range(const std::string& text) {
  const auto dots = text.find("..");
  auto number = [&](const std::string& item, simfa::Cycle& out) {
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos) return false;
    try {
      out = std::stoull(item);
    } catch (const std::exception&) {
      return false;
    }
    return true;
  };
  simfa::Cycle a = 0, b = 0;
  if (dots == std::string::npos || !number(text.substr(0, dots), a) ||
      !number(text.substr(dots + 2), b))
    throw simfa::InputError(simfa::SourceLocation{"--gantt-cycles", 0, 0},
                            "expected A..B, two cycle numbers, got '" + text + "'");
  if (b <= a)
    throw simfa::InputError(
        simfa::SourceLocation{"--gantt-cycles", 0, 0},
        fmt::format("'{}' is empty: the end {} must be after the start {}", text, b, a));
  return {a, b};
}

int cmd_plugins(const std::string& describe, bool markdown) {
  PluginHost host;
  simfa::apps::load_plugins(host, PluginHost::search_path({}));
  if (markdown) {
    std::cout << format_reference_markdown(host);
    return kExitOk;
  }
  if (describe.empty()) {
    std::cout << format_plugin_list(host);
    return kExitOk;
  }
  const CatalogEntry* entry = host.find(describe);
  if (!entry)
    throw simfa::InputError("unknown plugin '" + describe + "' (run `simfa plugins` for the list)");
  std::cout << format_describe(*entry);
  return kExitOk;
}

int cmd_validate(const std::string& path, const std::vector<std::string>& sets) {
  LoadedManifest loaded;
  load(loaded, path, sets);
  std::cout << fmt::format("{}: valid (sha256 {})\n", path, loaded.manifest.sha256);
  return kExitOk;
}

struct RunArgs {
  std::string manifest, workload, stats, timeline, timeline_sms = "0", stepping = "event";
  std::string gantt, gantt_sms = "0", gantt_cycles;
  simfa::Cycle timeline_window = 1000;
  std::vector<std::string> sets;
  bool quiet = false;
  double timeout = 0;
  simfa::Cycle stall_cycles = RunOptions{}.stall_cycles;
};

int cmd_run(const RunArgs& a) {
  LoadedManifest loaded;
  load(loaded, a.manifest, a.sets);
  ComponentConfig workload = parse_workload_spec(a.workload, loaded.host);
  RunOptions options;
  options.stepping =
      a.stepping == "reference" ? simfa::Stepping::kReference : simfa::Stepping::kEvent;
  options.progress = isatty(STDERR_FILENO) != 0;
  const int sm_count = loaded.manifest.gpu.sm_count;
  const std::vector<int> timeline_sms = parse_sm_list(a.timeline_sms, "--timeline-sms");
  check_sms_exist(timeline_sms, sm_count, "--timeline-sms");
  const std::vector<int> gantt_sms = parse_sm_list(a.gantt_sms, "--gantt-sms");
  check_sms_exist(gantt_sms, sm_count, "--gantt-sms");
  std::pair<simfa::Cycle, simfa::Cycle> gantt_cycles{0, simfa::kNever};
  if (!a.gantt_cycles.empty()) gantt_cycles = parse_cycle_range(a.gantt_cycles);
  if (a.timeline_window == 0)
    throw simfa::InputError(simfa::SourceLocation{"--timeline-window", 0, 0},
                            "the window must be at least 1 cycle");
  // The timeline records the spans of every SM either output draws.
  options.timeline = !a.timeline.empty() || !a.gantt.empty();
  options.timeline_sms.clear();
  if (!a.timeline.empty()) options.timeline_sms = timeline_sms;
  if (!a.gantt.empty())
    for (int sm : gantt_sms)
      if (std::find(options.timeline_sms.begin(), options.timeline_sms.end(), sm) ==
          options.timeline_sms.end())
        options.timeline_sms.push_back(sm);
  if (!a.timeline.empty()) options.counter_window = a.timeline_window;
  options.timeout_seconds = a.timeout;
  options.stall_cycles = a.stall_cycles;

  Simulation sim(loaded.manifest, workload, loaded.host, options);
  RunResult result = sim.run();
  if (!a.quiet) std::cout << sim.summary(result);
  if (!a.stats.empty()) {
    std::ofstream out(a.stats);
    out << boost::json::serialize(sim.stats_json(result)) << "\n";
    if (!out) throw simfa::InputError("cannot write stats file '" + a.stats + "'");
  }
  if (!a.timeline.empty())
    sim.timeline().write(a.timeline, loaded.manifest.gpu.clock_mhz, timeline_sms,
                         sim.counter_tracks(), loaded.host.instructions());
  if (!a.gantt.empty()) {
    if (gantt_cycles.first >= result.cycles)
      throw simfa::InputError(simfa::SourceLocation{"--gantt-cycles", 0, 0},
                              fmt::format("'{}' starts at or after the end of the run (cycle {})",
                                          a.gantt_cycles, result.cycles));
    simfa::kernel::GanttOptions g;
    g.sms = gantt_sms;
    g.begin = gantt_cycles.first;
    g.end = std::min(gantt_cycles.second, result.cycles);
    g.clock_mhz = loaded.manifest.gpu.clock_mhz;
    g.title = fmt::format("{} · {}", loaded.manifest.gpu.name, a.workload);
    g.instructions = &loaded.host.instructions();
    const GanttChart chart(sim.timeline().spans(), g);
    for (int sm : gantt_sms)
      if (std::none_of(chart.lanes().begin(), chart.lanes().end(),
                       [&](const GanttChart::Lane& l) { return l.sm == sm; }))
        std::cerr << fmt::format("warning: --gantt-sms: SM {} ran nothing in cycles {}..{}\n", sm,
                                 g.begin, g.end);
    chart.write(a.gantt);
  }
  switch (result.outcome) {
    case RunOutcome::kCompleted:
      return kExitOk;
    case RunOutcome::kDeadlock:
      std::cerr << Simulation::blocked_report(result);
      return kExitDeadlock;
    case RunOutcome::kWatchdog:
      std::cerr << Simulation::blocked_report(result);
      return kExitWatchdog;
    case RunOutcome::kStalled:
      std::cerr << Simulation::blocked_report(result);
      return kExitStalled;
    case RunOutcome::kTimeout:
      std::cerr << Simulation::blocked_report(result);
      return kExitTimeout;
  }
  return kExitInternal;
}

struct AnalyzeArgs {
  std::string manifest, workload, csv;
  std::vector<std::string> sets, sweeps;
  bool json = false;
};

int cmd_analyze(const AnalyzeArgs& a) {
  LoadedManifest loaded;
  load(loaded, a.manifest, a.sets);
  const Manifest& m = loaded.manifest;
  simfa::apps::AnalyzeRequest request;
  request.gpu = simfa::apps::analytical_gpu(m);
  request.gpu_name = m.gpu.name;
  request.workload_spec = a.workload;
  request.sweeps = a.sweeps;
  request.json = a.json;
  request.csv_path = a.csv;
  return simfa::apps::run_analyze_command(request);
}

struct RankArgs {
  // features by default: on the measured H200 spaces the simulator orders the short list worse
  // than the features do (docs/ranking.md §4: hybrid 9.0% mean regret, features 2.0%).
  std::string manifest, workload, csv, ranker = "features";
  std::vector<std::string> sets;
  int top = 10;
  int shortlist = 8;
};

int cmd_rank(const RankArgs& a) {
  LoadedManifest loaded;
  load(loaded, a.manifest, a.sets);
  const Manifest& m = loaded.manifest;
  simfa::apps::RankRequest request;
  request.gpu = simfa::apps::rank_gpu(m);
  request.gpu_name = m.gpu.name;
  request.workload_spec = a.workload;
  request.options.ranker = a.ranker == "features"   ? simfa::ranking::Ranker::kFeatures
                           : a.ranker == "simulate" ? simfa::ranking::Ranker::kSimulate
                                                    : simfa::ranking::Ranker::kHybrid;
  request.options.shortlist = a.shortlist;
  request.top = a.top;
  request.csv_path = a.csv;
  auto simulate = [&](const simfa::ranking::GemmProblem& p,
                      const simfa::ranking::TritonGemmConfig& c) {
    return simfa::apps::simulate_gemm_config(loaded, p, c);
  };
  return simfa::apps::run_rank_command(request, simulate);
}

int cmd_ablate(const std::string& base, const std::string& workload,
               const std::vector<std::string>& only) {
  std::vector<std::string> manifests{base};
  for (auto& a : find_ablations(base, only)) manifests.push_back(std::move(a));
  std::vector<AblationRow> rows;
  for (const auto& m : manifests) {
    std::cerr << "running " << m << "\n";
    rows.push_back(run_for_ablation(m, workload));
  }
  std::cout << format_ablation_table(rows);
  return kExitOk;
}

int cmd_gen(const std::string& spec, const std::string& output) {
  PluginHost host;
  simfa::apps::load_plugins(host, PluginHost::search_path({}));
  ComponentConfig config = parse_generator_spec(spec, host);
  simfa::GpuConfig gpu;  // generators describe workloads, not GPUs
  StatsRegistryImpl stats;
  CalendarQueue events;
  const simfa::BuildContext context{
      config.params, events, simfa::StatsScope(stats, "gen", &config.entry->schema), gpu, 1, -1};
  auto generator = host.create(*config.entry, context);
  std::ofstream out(output);
  if (!out) throw simfa::InputError("cannot write '" + output + "'");
  static_cast<simfa::WorkloadGenerator&>(*generator).write(out);
  if (!out) throw simfa::InputError("cannot write '" + output + "'");
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"simfa: a cycle-level simulator of Hopper asynchronous ML kernels"};
  app.require_subcommand(0, 1);
  app.set_version_flag("--version", fmt::format("simfa {} (git {}, sdk ABI {})", kVersion, kGitHash,
                                                simfa::kSdkAbiVersion));

  auto* plugins = app.add_subcommand("plugins", "list the plugins found, or describe one");
  std::string describe;
  bool markdown = false;
  plugins->add_option("--describe", describe,
                      "print one plugin's parameters, slots and statistics");
  plugins->add_flag("--markdown", markdown,
                    "print the manifest reference (docs/manifest-reference.md)");

  auto* validate = app.add_subcommand("validate", "check a manifest without running it");
  std::string validate_manifest;
  std::vector<std::string> validate_sets;
  validate->add_option("manifest", validate_manifest, "manifest TOML file")->required();
  validate->add_option("--set", validate_sets, "override a key: KEY=VALUE (repeatable)");

  auto* run = app.add_subcommand("run", "simulate a workload on a manifest");
  RunArgs ra;
  run->add_option("manifest", ra.manifest, "manifest TOML file")->required();
  run->add_option(
         "--workload,-w", ra.workload,
         "workload: a .trace or .toml file, or NAME:KEY=VALUE,... (e.g. gemm:m=4096,n=4096,k=4096)")
      ->required();
  run->add_option("--set", ra.sets, "override a manifest key: KEY=VALUE (repeatable)");
  run->add_option("--stats", ra.stats, "write every statistic as JSON to FILE");
  auto* timeline =
      run->add_option("--timeline", ra.timeline,
                      "write Chrome trace events with counter tracks (Perfetto) to FILE");
  auto* timeline_sms = run->add_option("--timeline-sms", ra.timeline_sms,
                                       "SMs the timeline records, e.g. 0,1 (default 0)");
  auto* timeline_window =
      run->add_option("--timeline-window", ra.timeline_window,
                      "cycles per sample of the timeline's counter tracks (default 1000)");
  timeline_sms->needs(timeline);
  timeline_window->needs(timeline);
  auto* gantt =
      run->add_option("--gantt", ra.gantt, "draw the WarpGroups' Gantt chart as SVG to FILE");
  run->add_option("--gantt-sms", ra.gantt_sms, "SMs the Gantt chart draws, e.g. 0,1 (default 0)")
      ->needs(gantt);
  run->add_option("--gantt-cycles", ra.gantt_cycles,
                  "cycles the Gantt chart draws, A..B (default: the whole run)")
      ->needs(gantt);
  run->add_option("--stepping", ra.stepping, "event (default) or reference (per-cycle loop)")
      ->check(CLI::IsMember({"event", "reference"}));
  run->add_flag("--quiet,-q", ra.quiet, "print no summary");
  run->add_option("--timeout", ra.timeout,
                  "stop after SECONDS of wall time (exit code 6, with a report); 0: no limit")
      ->check(CLI::NonNegativeNumber);
  run->add_option("--stall-cycles", ra.stall_cycles,
                  "stop as stalled (exit code 5) after N cycles in which no SM issued and no CTA "
                  "retired; 0: never (default 100000000)");

  auto* analyze =
      app.add_subcommand("analyze", "the analytical fast path: traffic, regime, roofline");
  AnalyzeArgs aa;
  analyze->add_option("manifest", aa.manifest, "manifest TOML file ([gpu] parameters)")->required();
  analyze->add_option("--workload,-w", aa.workload, "fa3:KEY=VALUE,... or gemm:KEY=VALUE,...")
      ->required();
  analyze->add_option("--set", aa.sets, "override a manifest key: KEY=VALUE (repeatable)");
  analyze->add_option("--sweep", aa.sweeps,
                      "sweep a workload or GPU parameter: NAME=A..B:xF, NAME=A..B:+S or NAME=V1,V2 "
                      "(repeatable: a grid)");
  analyze->add_flag("--json", aa.json, "machine-readable output");
  analyze->add_option("--csv", aa.csv, "write the sweep's points to FILE");

  auto* rank = app.add_subcommand(
      "rank", "order Triton TMA GEMM configs for a problem without running them");
  RankArgs rka;
  rank->add_option("manifest", rka.manifest, "manifest TOML file ([gpu] parameters)")->required();
  rank->add_option("--workload,-w", rka.workload, "gemm:m=M,n=N,k=K")->required();
  rank->add_option("--set", rka.sets, "override a manifest key: KEY=VALUE (repeatable)");
  rank->add_option(
          "--ranker", rka.ranker,
          "features (default: the analytical time model), simulate (every valid config through the "
          "simulator) or hybrid (the features' short list ordered by the simulator)")
      ->check(CLI::IsMember({"features", "simulate", "hybrid"}));
  rank->add_option("--top", rka.top, "configs printed (default 10)");
  rank->add_option("--shortlist", rka.shortlist,
                   "hybrid: configs the simulator orders (default 8)");
  rank->add_option("--csv", rka.csv,
                   "write every valid config, best first, with its features, to FILE");

  auto* sweep = app.add_subcommand(
      "sweep", "simulate the cross product of manifest and workload keys, one CSV row per point");
  simfa::apps::SweepRequest sw;
  sweep->add_option("manifest", sw.manifest, "manifest TOML file")->required();
  sweep
      ->add_option("--workload,-w", sw.workloads,
                   "workload, as for run (repeatable: the workloads are the first axis)")
      ->required();
  sweep->add_option("--vary", sw.varies,
                    "an axis: KEY=V1,V2,... with KEY a manifest key (as --set takes it) or "
                    "workload.KEY (repeatable: the cross product, the last fastest)");
  sweep->add_option("--set", sw.sets, "override a manifest key for every point (repeatable)");
  sweep->add_option("--jobs,-j", sw.jobs, "points simulated at once (default: one per core)")
      ->check(CLI::PositiveNumber);
  sweep->add_option("--shard", sw.shard,
                    "run the I-th of N interleaved slices of the grid, I/N (a Slurm job array)");
  sweep->add_flag("--resume", sw.resume, "keep the rows the CSV file holds, run the other points");
  sweep
      ->add_option("--timeout", sw.timeout_seconds,
                   "stop a point after SECONDS of wall time (its row says timeout); 0: no limit")
      ->check(CLI::NonNegativeNumber);
  sweep->add_option("--csv", sw.csv_path, "write the rows to FILE")->required();

  auto* ablate = app.add_subcommand(
      "ablate", "run a manifest and its ablations (DIR/ablations/*.toml) on one workload");
  std::string ablate_base, ablate_workload;
  std::vector<std::string> ablate_only;
  ablate->add_option("manifest", ablate_base, "the base manifest")->required();
  ablate->add_option("--workload,-w", ablate_workload, "the workload (as for run)")->required();
  ablate->add_option("--only", ablate_only, "ablations to run, by file stem (default: all)")
      ->delimiter(',');

  auto* gen = app.add_subcommand(
      "gen", "write a workload's event log, e.g. gen fa3:model=llama3-8b,seqlen=512 -o events.csv");
  std::string gen_spec, gen_output;
  gen->add_option("spec", gen_spec, "NAME[:KEY=VALUE,...] (generators: simfa plugins, kind gen)")
      ->required();
  gen->add_option("-o,--output", gen_output, "output file")->required();

  auto* ttgir = app.add_subcommand("ttgir", "TTGIR tools");
  ttgir->require_subcommand(1);
  auto* instrument = ttgir->add_subcommand(
      "instrument",
      "insert proton.record markers around TMA, WGMMA and barrier ops (docs/ttgir.md)");
  std::string instrument_in, instrument_out;
  instrument->add_option("input", instrument_in, "a TTGIR file Triton dumped")->required();
  instrument->add_option("-o,--output", instrument_out, "the instrumented TTGIR")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitBadInput;
  }

  try {
    if (*plugins) return cmd_plugins(describe, markdown);
    if (*validate) return cmd_validate(validate_manifest, validate_sets);
    if (*run) return cmd_run(ra);
    if (*analyze) return cmd_analyze(aa);
    if (*rank) return cmd_rank(rka);
    if (*sweep) return simfa::apps::run_sweep_command(sw);
    if (*ablate) return cmd_ablate(ablate_base, ablate_workload, ablate_only);
    if (*gen) return cmd_gen(gen_spec, gen_output);
    if (*instrument) return simfa::ttgir::run_ttgir_instrument(instrument_in, instrument_out);
    std::cout << app.help();
    return kExitOk;
  } catch (const ManifestError& e) {
    for (const auto& m : e.messages) std::cerr << m << "\n";
    return kExitBadInput;
  } catch (const simfa::InputError& e) {
    std::cerr << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "simfa: internal error: " << e.what() << "\n";
    return kExitInternal;
  }
}
