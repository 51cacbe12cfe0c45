// A manifest loaded with the plugins it names, and one simulation on it: what `simfa run`,
// `simfa sweep` and the `simfa` Python module share.
#pragma once

#include <boost/json/object.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "analytical/gpu.h"
#include "kernel/manifest.h"
#include "kernel/plugin_host.h"
#include "kernel/simulation.h"
#include "ranking/gemm_ranking.h"

namespace simfa::apps {

struct LoadedManifest {
  kernel::PluginHost host;  // declared first: outlives everything built from its libraries
  kernel::Manifest manifest;
};

/// Parses each "KEY=VALUE" of --set. Throws simfa::InputError on one without '='.
std::vector<kernel::Override> parse_overrides(const std::vector<std::string>& sets);

/// Loads the plugins of `dirs` into `host`; a library that fails to load is a warning on stderr.
void load_plugins(kernel::PluginHost& host, const std::vector<std::filesystem::path>& dirs);

/// Reads the manifest at `path` with the overrides `sets`, loads the plugins of its search path
/// (the executable's plugin directory last, or `plugin_dir` when one is given) and resolves it.
/// Throws kernel::ManifestError with every error of the manifest.
void load(LoadedManifest& out, const std::string& path, const std::vector<std::string>& sets,
          const std::filesystem::path& plugin_dir = {});

/// The analytical model's view of a manifest's [gpu] table (analyze and rank read it).
analytical::AnalyticalGpu analytical_gpu(const kernel::Manifest& m);
/// The same with the occupancy limits the ranking needs.
ranking::RankGpu rank_gpu(const kernel::Manifest& m);

/// One Triton GEMM config through the simulator (the ranking's simulate ranker): the gemm:
/// generator with the config's tile, stages and warps. Microseconds, or -1 when the generator
/// rejects the config (said on stderr) or the run does not complete.
double simulate_gemm_config(const LoadedManifest& loaded, const ranking::GemmProblem& problem,
                            const ranking::TritonGemmConfig& config);

/// A run and its stats file (docs/stats.md).
struct StatsRun {
  kernel::RunResult result;
  boost::json::object stats;
};

/// Simulates `workload` (a --workload spec) on the loaded manifest without progress output.
/// Throws kernel::ManifestError or simfa::InputError on a bad workload.
StatsRun run_for_stats(const LoadedManifest& loaded, const std::string& workload,
                       kernel::RunOptions options);

}  // namespace simfa::apps
