// Design-space sweeps through the simulator (docs/sweeps.md): the cross product of manifest keys,
// workload parameters and workloads, each point an independent simulation, run on a pool of
// threads, one row per point. `simfa sweep` and the `simfa` Python module share it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernel/plugin_host.h"

namespace simfa::apps {

/// One --vary KEY=V1,V2,...: a manifest key as --set takes it, `workload.KEY` for a parameter
/// of the workload spec, or `workload` for the workloads themselves (several --workload).
struct SweepAxis {
  static constexpr std::string_view kWorkloadPrefix = "workload.";
  std::string key;
  std::vector<std::string> values;
  bool workload_param() const { return key.starts_with(kWorkloadPrefix); }
};

/// Parses "KEY=V1,V2,...". Throws simfa::InputError ("--vary TEXT: error: ...") on a missing
/// '=', an empty key or an empty value.
SweepAxis parse_vary(std::string_view text);

/// What varies between the points: the axes in the order given, the first outermost (the last
/// varies fastest, as in `simfa analyze --sweep`).
class SweepGrid {
 public:
  /// `workloads`: one spec, or several (then the first axis is `workload`). Throws
  /// simfa::InputError naming the problem: no workload, an axis given twice or also with --set,
  /// `workload.KEY` with a workload that is a file rather than NAME:KEY=VALUE,...,
  /// `simfa.plugin_path` (one plugin host serves every point), a grid over kMaxPoints.
  SweepGrid(std::string manifest, std::vector<std::string> workloads, std::vector<std::string> sets,
            std::vector<SweepAxis> axes);

  static constexpr std::uint64_t kMaxPoints = 10'000'000;

  std::size_t size() const { return size_; }
  const std::string& manifest() const { return manifest_; }
  const std::vector<std::string>& base_sets() const { return sets_; }
  const std::vector<SweepAxis>& axes() const { return axes_; }

  struct Point {
    std::size_t index = 0;
    std::vector<std::string> values;  ///< one per axis
    std::string workload;             ///< the spec, workload.KEY applied
    std::vector<std::string> sets;    ///< --set KEY=VALUE: the base ones, then the axes'
  };
  /// Point `index` (row-major, the last axis fastest).
  Point point(std::size_t index) const;

 private:
  std::string manifest_;
  std::string workload_;  ///< the single workload, when there is no workload axis
  std::vector<std::string> sets_;
  std::vector<SweepAxis> axes_;
  std::size_t size_ = 1;
};

/// Point `i` of a sweep's `shard`/`count` (--shard I/N, 1-based): i % count == shard - 1.
struct Shard {
  std::size_t shard = 1, count = 1;
  bool holds(std::size_t index) const { return index % count == shard - 1; }
};
/// Parses "I/N" (1 <= I <= N). Throws simfa::InputError.
Shard parse_shard(std::string_view text);

/// One point's result, the columns of the CSV (sweep_columns()). Only the error and the wall
/// time are set when the point failed; `error` is empty when it completed.
struct SweepRow {
  std::size_t point = 0;
  std::vector<std::string> values;
  std::string outcome;  ///< kernel.outcome, or "error" when the point could not be built
  std::uint64_t cycles = 0;
  double time_us = 0;
  std::uint64_t llc_read_bytes = 0, llc_write_bytes = 0;
  std::uint64_t dram_read_bytes = 0, dram_write_bytes = 0;
  std::optional<double> l2_hit_rate;  ///< the memory's cache hit rate, when it has a cache
  double wall_seconds = 0;            ///< the point's: loading, building and running
  std::string manifest_sha256;
  std::string error;
  bool failed() const { return !error.empty(); }
};

/// The fixed columns after the axes' values.
const std::vector<std::string_view>& sweep_result_columns();
/// "point", each axis key, then sweep_result_columns().
std::vector<std::string> sweep_columns(const SweepGrid& grid);

struct SweepOptions {
  double timeout_seconds = 0;  ///< per point, as `simfa run --timeout`; 0: none
};

/// Runs one point with the plugins of `host` (loaded for the grid's manifest). Never throws for
/// the point's own failures (a bad value, a deadlock): they become the row's error.
SweepRow run_sweep_point(const SweepGrid& grid, const SweepGrid::Point& point,
                         const kernel::PluginHost& host, const SweepOptions& options);

/// Loads the plugins of the grid's manifest's search path (`plugin_dir` last, or the
/// executable's) and checks that one of `points` resolves: when none does, there is nothing to
/// sweep (a misspelt key) and this throws kernel::ManifestError with the first point's errors.
void load_sweep_plugins(kernel::PluginHost& host, const SweepGrid& grid,
                        const std::vector<std::size_t>& points,
                        const std::filesystem::path& plugin_dir = {});

/// The CPUs this process may run on (its affinity mask: a Slurm allocation, taskset), at least 1:
/// the default number of threads.
unsigned usable_cores();

/// Runs `points` (indices into the grid, ascending) on `jobs` threads. `on_row` is called on the
/// calling thread for every row in the order of `points`, as soon as it and every row before it
/// are done; `on_progress(done)` after every point, in completion order.
void run_sweep(const SweepGrid& grid, const std::vector<std::size_t>& points,
               const kernel::PluginHost& host, const SweepOptions& options, unsigned jobs,
               const std::function<void(SweepRow&&)>& on_row,
               const std::function<void(std::size_t done)>& on_progress = {});

/// The row as CSV fields in sweep_columns() order (unquoted text).
std::vector<std::string> sweep_row_fields(const SweepRow& row);
/// One CSV line (RFC 4180 quoting where a field needs it), with its newline.
std::string csv_line(const std::vector<std::string>& fields);
/// Splits CSV text into records of fields. A final record without its newline is dropped and
/// its offset returned in `complete_bytes` (the text before it), so that a sweep killed
/// mid-write resumes from its last whole row.
std::vector<std::vector<std::string>> parse_csv(std::string_view text, std::size_t* complete_bytes);

}  // namespace simfa::apps
