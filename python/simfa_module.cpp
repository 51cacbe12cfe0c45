// `simfa._simfa`, the C++ half of the `simfa` Python module (python/simfa/__init__.py wraps it;
// docs/sweeps.md). It takes and returns plain strings and lists; the stats travel as the JSON
// text of `simfa run --stats`, so that the dict Python builds is the CLI's file. The GIL is
// released while anything simulates.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/json/serialize.hpp>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "apps/analyze_command.h"
#include "apps/loaded_manifest.h"
#include "apps/rank_command.h"
#include "apps/sweep.h"
#include "kernel/describe.h"
#include "kernel/manifest.h"
#include "kernel/simulation.h"
#include "kernel/version.h"
#include "simfa/error.h"

namespace py = pybind11;

namespace {

using namespace simfa::apps;
using simfa::kernel::PluginHost;

/// The plugin directory beside this module: the build tree's python/simfa/ or the install
/// tree's (SIMFA_PLUGIN_DIR_FROM_BUILD_PYDIR, SIMFA_PLUGIN_DIR_FROM_PYDIR: python/CMakeLists.txt).
std::filesystem::path plugin_dir() {
  const std::filesystem::path here =
      std::filesystem::path(boost::dll::this_line_location().native()).parent_path();
  for (const char* relative : {SIMFA_PLUGIN_DIR_FROM_BUILD_PYDIR, SIMFA_PLUGIN_DIR_FROM_PYDIR}) {
    const auto dir = (here / relative).lexically_normal();
    std::error_code ec;
    if (std::filesystem::is_directory(dir, ec)) return dir;
  }
  return (here / SIMFA_PLUGIN_DIR_FROM_PYDIR).lexically_normal();
}

simfa::kernel::RunOptions run_options(const std::string& stepping, double timeout_seconds) {
  simfa::kernel::RunOptions options;
  if (stepping == "reference")
    options.stepping = simfa::Stepping::kReference;
  else if (stepping != "event")
    throw simfa::InputError(simfa::SourceLocation{"stepping", 0, 0},
                            "'" + stepping + "' is neither 'event' nor 'reference'");
  if (timeout_seconds < 0)
    throw simfa::InputError(simfa::SourceLocation{"timeout", 0, 0}, "must be 0 or more seconds");
  options.timeout_seconds = timeout_seconds;
  return options;
}

/// (outcome, the stats JSON text, the blocked report of a run that did not complete).
std::tuple<std::string, std::string, std::string> run(const std::string& manifest,
                                                      const std::string& workload,
                                                      const std::vector<std::string>& sets,
                                                      const std::string& stepping,
                                                      double timeout_seconds) {
  const py::gil_scoped_release unlocked;
  LoadedManifest loaded;
  load(loaded, manifest, sets, plugin_dir());
  const StatsRun run = run_for_stats(loaded, workload, run_options(stepping, timeout_seconds));
  const bool completed = run.result.outcome == simfa::kernel::RunOutcome::kCompleted;
  return {simfa::kernel::outcome_name(run.result.outcome), boost::json::serialize(run.stats),
          completed ? std::string() : simfa::kernel::Simulation::blocked_report(run.result)};
}

/// `simfa analyze --json`'s output. The command prints; its streams are captured, with the GIL
/// held (the analysis takes microseconds) so that no other thread of ours writes meanwhile.
std::string analyze(const std::string& manifest, const std::string& workload,
                    const std::vector<std::string>& sets, const std::vector<std::string>& sweeps) {
  LoadedManifest loaded;
  load(loaded, manifest, sets, plugin_dir());
  AnalyzeRequest request;
  request.gpu = analytical_gpu(loaded.manifest);
  request.gpu_name = loaded.manifest.gpu.name;
  request.workload_spec = workload;
  request.sweeps = sweeps;
  request.json = true;
  std::ostringstream out, err;
  std::streambuf* const cout = std::cout.rdbuf(out.rdbuf());
  std::streambuf* const cerr = std::cerr.rdbuf(err.rdbuf());
  int code = 0;
  try {
    code = run_analyze_command(request);
  } catch (...) {
    std::cout.rdbuf(cout);
    std::cerr.rdbuf(cerr);
    throw;
  }
  std::cout.rdbuf(cout);
  std::cerr.rdbuf(cerr);
  if (code != 0) {
    std::string message = err.str();
    while (!message.empty() && message.back() == '\n') message.pop_back();
    throw simfa::kernel::ManifestError({message});
  }
  return out.str();
}

py::list plugins() {
  PluginHost host;
  load_plugins(host, PluginHost::search_path({}, plugin_dir()));
  py::list out;
  for (const simfa::kernel::CatalogEntry* e : host.entries()) {
    py::dict d;
    d["name"] = e->name;
    d["version"] = e->version;
    d["kind"] = e->kind;
    d["doc"] = e->doc;
    d["library"] = e->library_path;
    out.append(std::move(d));
  }
  return out;
}

/// `simfa rank --csv`'s text: every valid config, best first.
std::string rank(const std::string& manifest, const std::string& workload,
                 const std::vector<std::string>& sets, const std::string& ranker, int shortlist) {
  const py::gil_scoped_release unlocked;
  LoadedManifest loaded;
  load(loaded, manifest, sets, plugin_dir());
  simfa::ranking::RankOptions options;
  if (ranker == "features")
    options.ranker = simfa::ranking::Ranker::kFeatures;
  else if (ranker == "simulate")
    options.ranker = simfa::ranking::Ranker::kSimulate;
  else if (ranker == "hybrid")
    options.ranker = simfa::ranking::Ranker::kHybrid;
  else
    throw simfa::InputError(simfa::SourceLocation{"ranker", 0, 0},
                            "'" + ranker + "' is not one of features, simulate, hybrid");
  options.shortlist = shortlist;
  const auto problem = parse_rank_workload(workload);
  const auto ranked = simfa::ranking::rank_gemm(
      problem, rank_gpu(loaded.manifest), options,
      [&](const simfa::ranking::GemmProblem& p, const simfa::ranking::TritonGemmConfig& c) {
        return simulate_gemm_config(loaded, p, c);
      });
  return format_rank_csv(ranked);
}

SweepGrid grid(const std::string& manifest, const std::vector<std::string>& workloads,
               const std::vector<std::string>& sets, const std::vector<std::string>& varies) {
  std::vector<SweepAxis> axes;
  for (const std::string& v : varies) axes.push_back(parse_vary(v));
  return SweepGrid(manifest, workloads, sets, std::move(axes));
}

std::vector<std::size_t> all_points(const SweepGrid& g) {
  std::vector<std::size_t> points(g.size());
  for (std::size_t i = 0; i < points.size(); ++i) points[i] = i;
  return points;
}

/// The columns and the number of points; throws when no point resolves (a bad key).
std::tuple<std::vector<std::string>, std::size_t> sweep_plan(
    const std::string& manifest, const std::vector<std::string>& workloads,
    const std::vector<std::string>& sets, const std::vector<std::string>& varies) {
  const py::gil_scoped_release unlocked;
  const SweepGrid g = grid(manifest, workloads, sets, varies);
  PluginHost host;
  load_sweep_plugins(host, g, all_points(g), plugin_dir());
  return {sweep_columns(g), g.size()};
}

/// One point's CSV fields (a Dask task: the grid is rebuilt from the same arguments).
std::vector<std::string> sweep_point(const std::string& manifest,
                                     const std::vector<std::string>& workloads,
                                     const std::vector<std::string>& sets,
                                     const std::vector<std::string>& varies, std::size_t index,
                                     double timeout_seconds) {
  const py::gil_scoped_release unlocked;
  const SweepGrid g = grid(manifest, workloads, sets, varies);
  if (index >= g.size())
    throw simfa::InputError(simfa::SourceLocation{"point", 0, 0},
                            "point " + std::to_string(index) + " is not in the grid");
  PluginHost host;
  const SweepGrid::Point point = g.point(index);
  load_sweep_plugins(host, g, {}, plugin_dir());
  SweepOptions options;
  options.timeout_seconds = timeout_seconds;
  return sweep_row_fields(run_sweep_point(g, point, host, options));
}

/// Every point on `jobs` local threads: the columns and each row's fields, in grid order.
std::tuple<std::vector<std::string>, std::vector<std::vector<std::string>>> sweep(
    const std::string& manifest, const std::vector<std::string>& workloads,
    const std::vector<std::string>& sets, const std::vector<std::string>& varies, unsigned jobs,
    double timeout_seconds) {
  const py::gil_scoped_release unlocked;
  const SweepGrid g = grid(manifest, workloads, sets, varies);
  const std::vector<std::size_t> points = all_points(g);
  PluginHost host;
  load_sweep_plugins(host, g, points, plugin_dir());
  SweepOptions options;
  options.timeout_seconds = timeout_seconds;
  std::vector<std::vector<std::string>> rows;
  if (jobs == 0) jobs = usable_cores();
  // Between points, Ctrl-C: the exception stops the pool (the points in flight finish) and
  // reaches Python as KeyboardInterrupt.
  auto check_signals = [](std::size_t) {
    const py::gil_scoped_acquire locked;
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
  };
  run_sweep(
      g, points, host, options, jobs,
      [&](SweepRow&& row) { rows.push_back(sweep_row_fields(row)); }, check_signals);
  return {sweep_columns(g), std::move(rows)};
}

}  // namespace

PYBIND11_MODULE(_simfa, m) {
  m.doc() = "simfa's simulator; use the simfa package, which wraps this module";
  m.attr("__version__") = std::string(simfa::kernel::kVersion);
  m.attr("git_hash") = std::string(simfa::kernel::kGitHash);

  // simfa.Error: every simfa failure; InputError: a bad manifest, workload or argument, with
  // every message "file:line:col: error: ..." (the CLI's exit code 1).
  static py::exception<simfa::Error> error(m, "Error");
  static py::exception<simfa::InputError> input_error(m, "InputError", error.ptr());
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const simfa::kernel::ManifestError& e) {
      input_error(e.what());
    } catch (const simfa::InputError& e) {
      input_error(e.what());
    } catch (const simfa::Error& e) {
      error(e.what());
    }
  });

  std::vector<std::string> result_columns(sweep_result_columns().begin(),
                                          sweep_result_columns().end());
  m.attr("result_columns") = result_columns;

  m.def("run", &run, py::arg("manifest"), py::arg("workload"), py::arg("sets"), py::arg("stepping"),
        py::arg("timeout"));
  m.def("analyze", &analyze, py::arg("manifest"), py::arg("workload"), py::arg("sets"),
        py::arg("sweeps"));
  m.def("plugins", &plugins);
  m.def("rank", &rank, py::arg("manifest"), py::arg("workload"), py::arg("sets"), py::arg("ranker"),
        py::arg("shortlist"));
  m.def("sweep_plan", &sweep_plan, py::arg("manifest"), py::arg("workloads"), py::arg("sets"),
        py::arg("varies"));
  m.def("sweep_point", &sweep_point, py::arg("manifest"), py::arg("workloads"), py::arg("sets"),
        py::arg("varies"), py::arg("index"), py::arg("timeout"));
  m.def("sweep", &sweep, py::arg("manifest"), py::arg("workloads"), py::arg("sets"),
        py::arg("varies"), py::arg("jobs"), py::arg("timeout"));
}
