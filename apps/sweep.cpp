#include "apps/sweep.h"

#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <boost/json/object.hpp>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <filesystem>
#include <mutex>
#include <new>
#include <thread>

#include "apps/loaded_manifest.h"
#include "kernel/manifest.h"
#include "kernel/simulation.h"
#include "kernel/workload_spec.h"
#include "simfa/error.h"

namespace simfa::apps {

using namespace simfa::kernel;

namespace {

InputError vary_error(std::string_view text, const std::string& what) {
  return InputError(SourceLocation{"--vary " + std::string(text), 0, 0}, what);
}

/// A spec of the NAME[:KEY=VALUE,...] form, as opposed to a workload or trace file
/// (parse_workload_spec's rule: a .toml path or any existing file).
bool is_generator_spec(const std::string& spec) {
  if (spec.ends_with(".toml")) return false;
  std::error_code ec;
  return !std::filesystem::is_regular_file(spec, ec);
}

/// `spec` with KEY set to VALUE: replaced where the spec has it, appended where not.
std::string with_workload_param(const std::string& spec, std::string_view key,
                                std::string_view value) {
  const auto colon = spec.find(':');
  std::string out = spec.substr(0, colon) + ":";
  bool replaced = false;
  if (colon != std::string::npos) {
    std::string_view rest = std::string_view(spec).substr(colon + 1);
    bool first = true;
    while (!rest.empty()) {
      const auto comma = rest.find(',');
      std::string_view item = rest.substr(0, comma);
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
      if (item.empty()) continue;
      if (!first) out += ',';
      first = false;
      if (item.substr(0, item.find('=')) == key) {
        out += fmt::format("{}={}", key, value);
        replaced = true;
      } else {
        out += item;
      }
    }
    if (!replaced && !first) out += ',';
  }
  if (!replaced) out += fmt::format("{}={}", key, value);
  return out;
}

std::string set_key(std::string_view set) {
  return std::string(set.substr(0, set.find('=')));
}

/// A number as the stats file has it: the shortest text that reads back as the same double.
std::string number(double v) {
  return fmt::format("{}", v);
}

std::uint64_t json_uint(const boost::json::object& o, std::string_view key) {
  const boost::json::value* v = o.if_contains(key);
  if (!v) return 0;
  if (v->is_uint64()) return v->as_uint64();
  if (v->is_int64()) return static_cast<std::uint64_t>(v->as_int64());
  return v->is_double() ? static_cast<std::uint64_t>(v->as_double()) : 0;
}

double json_double(const boost::json::value& v) {
  if (v.is_double()) return v.as_double();
  if (v.is_uint64()) return static_cast<double>(v.as_uint64());
  if (v.is_int64()) return static_cast<double>(v.as_int64());
  return 0;
}

const boost::json::object& json_object(const boost::json::object& o, std::string_view key) {
  static const boost::json::object kEmpty;
  const boost::json::value* v = o.if_contains(key);
  return v && v->is_object() ? v->as_object() : kEmpty;
}

/// The first line of a multi-line message (a blocked report, a list of manifest errors).
std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

/// Resolves a point's manifest with `host`'s plugins; throws what loading throws.
void resolve_point(const SweepGrid& grid, const SweepGrid::Point& p, const PluginHost& host,
                   Manifest& manifest, ComponentConfig& workload) {
  const ManifestDocument doc = read_manifest(grid.manifest(), parse_overrides(p.sets));
  manifest = resolve_manifest(doc, host);
  try {
    workload = parse_workload_spec(p.workload, host);
  } catch (const ManifestError& e) {
    // The columns of a --workload error count in the point's spec, workload.KEY applied.
    std::vector<std::string> messages = e.messages;
    messages.push_back("note: the point's workload is '" + p.workload + "'");
    throw ManifestError(std::move(messages));
  }
}

}  // namespace

SweepAxis parse_vary(std::string_view text) {
  const auto eq = text.find('=');
  if (eq == std::string_view::npos)
    throw vary_error(text, "expected KEY=V1,V2,... (KEY a manifest key or workload.KEY)");
  SweepAxis axis;
  axis.key = std::string(text.substr(0, eq));
  if (axis.key.empty() || axis.key.find_first_of(" \t") != std::string::npos)
    throw vary_error(text, fmt::format("'{}' is not a key", axis.key));
  std::string_view rest = text.substr(eq + 1);
  while (true) {
    const auto comma = rest.find(',');
    const std::string_view value = rest.substr(0, comma);
    if (value.empty())
      throw vary_error(text, "an empty value: values are separated by single commas");
    axis.values.emplace_back(value);
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return axis;
}

SweepGrid::SweepGrid(std::string manifest, std::vector<std::string> workloads,
                     std::vector<std::string> sets, std::vector<SweepAxis> axes)
    : manifest_(std::move(manifest)), sets_(std::move(sets)) {
  if (workloads.empty()) throw InputError(SourceLocation{"--workload", 0, 0}, "no workload given");
  for (const SweepAxis& axis : axes)
    if (axis.key == "workload")
      throw vary_error(axis.key, "give each workload as its own --workload");
  if (workloads.size() > 1)
    axes_.push_back(SweepAxis{"workload", workloads});
  else
    workload_ = workloads.front();
  for (SweepAxis& axis : axes) axes_.push_back(std::move(axis));
  for (std::size_t i = 0; i < axes_.size(); ++i) {
    const SweepAxis& axis = axes_[i];
    for (std::size_t j = 0; j < i; ++j)
      if (axes_[j].key == axis.key) throw vary_error(axis.key, "varied twice");
    for (const std::string& set : sets_)
      if (set_key(set) == axis.key)
        throw vary_error(axis.key, fmt::format("also given as --set {}: vary it or set it", set));
    if (axis.key == "simfa.plugin_path")
      throw vary_error(axis.key, "the plugins are loaded once for the whole sweep: set it instead");
    if (axis.workload_param()) {
      const auto file = std::find_if_not(workloads.begin(), workloads.end(), is_generator_spec);
      if (file != workloads.end())
        throw vary_error(axis.key,
                         fmt::format("the workload '{}' is a file: workload.KEY varies a parameter "
                                     "of a NAME:KEY=VALUE,... workload",
                                     *file));
      if (axis.key.size() == SweepAxis::kWorkloadPrefix.size())
        throw vary_error(axis.key, "expected workload.KEY");
    }
    if (size_ > kMaxPoints / axis.values.size())
      throw vary_error(axis.key, fmt::format("the grid has more than {} points", kMaxPoints));
    size_ *= axis.values.size();
  }
}

SweepGrid::Point SweepGrid::point(std::size_t index) const {
  Point p;
  p.index = index;
  p.values.resize(axes_.size());
  std::size_t rest = index;
  for (std::size_t i = axes_.size(); i-- > 0;) {
    p.values[i] = axes_[i].values[rest % axes_[i].values.size()];
    rest /= axes_[i].values.size();
  }
  p.workload = workload_;
  p.sets = sets_;
  for (std::size_t i = 0; i < axes_.size(); ++i) {
    const std::string& key = axes_[i].key;
    if (key == "workload") p.workload = p.values[i];
  }
  for (std::size_t i = 0; i < axes_.size(); ++i) {
    const std::string& key = axes_[i].key;
    if (key == "workload") continue;
    if (axes_[i].workload_param())
      p.workload = with_workload_param(
          p.workload, std::string_view(key).substr(SweepAxis::kWorkloadPrefix.size()), p.values[i]);
    else
      p.sets.push_back(key + "=" + p.values[i]);
  }
  return p;
}

Shard parse_shard(std::string_view text) {
  auto bad = [&](const std::string& what) {
    return InputError(SourceLocation{"--shard " + std::string(text), 0, 0}, what);
  };
  const auto slash = text.find('/');
  Shard s;
  auto read = [](std::string_view t, std::size_t& out) {
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), out);
    return ec == std::errc() && end == t.data() + t.size() && !t.empty();
  };
  if (slash == std::string_view::npos || !read(text.substr(0, slash), s.shard) ||
      !read(text.substr(slash + 1), s.count))
    throw bad("expected I/N, two whole numbers (1 <= I <= N)");
  if (s.count == 0 || s.shard == 0 || s.shard > s.count)
    throw bad(fmt::format("shard {} of {} does not exist: 1 <= I <= N", s.shard, s.count));
  return s;
}

const std::vector<std::string_view>& sweep_result_columns() {
  static const std::vector<std::string_view> kColumns{"outcome",
                                                      "cycles",
                                                      "time_us",
                                                      "llc_read_bytes",
                                                      "llc_write_bytes",
                                                      "dram_read_bytes",
                                                      "dram_write_bytes",
                                                      "l2_hit_rate",
                                                      "wall_seconds",
                                                      "manifest_sha256",
                                                      "error"};
  return kColumns;
}

std::vector<std::string> sweep_columns(const SweepGrid& grid) {
  std::vector<std::string> out{"point"};
  for (const SweepAxis& axis : grid.axes()) out.push_back(axis.key);
  out.insert(out.end(), sweep_result_columns().begin(), sweep_result_columns().end());
  return out;
}

SweepRow run_sweep_point(const SweepGrid& grid, const SweepGrid::Point& point,
                         const PluginHost& host, const SweepOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  SweepRow row;
  row.point = point.index;
  row.values = point.values;
  row.outcome = "error";
  try {
    Manifest manifest;
    ComponentConfig workload;
    resolve_point(grid, point, host, manifest, workload);
    RunOptions run_options;
    run_options.timeout_seconds = options.timeout_seconds;
    Simulation sim(manifest, workload, host, run_options);
    const RunResult result = sim.run();
    const boost::json::object stats = sim.stats_json(result);
    const boost::json::object& kernel = json_object(stats, "kernel");
    const boost::json::object& memory = json_object(stats, "memory");
    row.outcome = outcome_name(result.outcome);
    row.cycles = json_uint(kernel, "cycles");
    row.time_us = kernel.contains("time_us") ? json_double(kernel.at("time_us")) : 0;
    row.llc_read_bytes = json_uint(memory, "llc_read_bytes");
    row.llc_write_bytes = json_uint(memory, "llc_write_bytes");
    row.dram_read_bytes = json_uint(memory, "dram_read_bytes");
    row.dram_write_bytes = json_uint(memory, "dram_write_bytes");
    row.l2_hit_rate = sim.l2_hit_rate();
    row.manifest_sha256 = manifest.sha256;
    if (result.outcome != RunOutcome::kCompleted)
      row.error =
          fmt::format("{}: {}", row.outcome,
                      result.stop_reason.empty() ? first_line(Simulation::blocked_report(result))
                                                 : result.stop_reason);
  } catch (const ManifestError& e) {
    row.error = fmt::format("{}", fmt::join(e.messages, "; "));
  } catch (const std::bad_alloc&) {
    row.error = "out of memory";
  } catch (const std::exception& e) {
    row.error = e.what();
  }
  row.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return row;
}

void load_sweep_plugins(PluginHost& host, const SweepGrid& grid,
                        const std::vector<std::size_t>& points,
                        const std::filesystem::path& plugin_dir) {
  const ManifestDocument base = read_manifest(grid.manifest(), parse_overrides(grid.base_sets()));
  load_plugins(host, plugin_dir.empty() ? PluginHost::search_path(base.plugin_path())
                                        : PluginHost::search_path(base.plugin_path(), plugin_dir));
  std::exception_ptr first;
  for (std::size_t index : points) {
    try {
      Manifest manifest;
      ComponentConfig workload;
      resolve_point(grid, grid.point(index), host, manifest, workload);
      return;
    } catch (const Error&) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}

unsigned usable_cores() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  if (sched_getaffinity(0, sizeof(cpus), &cpus) == 0 && CPU_COUNT(&cpus) > 0)
    return static_cast<unsigned>(CPU_COUNT(&cpus));
  return std::max(1u, std::thread::hardware_concurrency());
}

void run_sweep(const SweepGrid& grid, const std::vector<std::size_t>& points,
               const PluginHost& host, const SweepOptions& options, unsigned jobs,
               const std::function<void(SweepRow&&)>& on_row,
               const std::function<void(std::size_t)>& on_progress) {
  const std::size_t n = points.size();
  std::vector<std::optional<SweepRow>> rows(n);
  std::mutex mutex;
  std::condition_variable finished_one;
  std::size_t finished = 0;
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  auto work = [&] {
    while (!stop) {
      const std::size_t i = next.fetch_add(1);
      if (i >= n) return;
      SweepRow row = run_sweep_point(grid, grid.point(points[i]), host, options);
      {
        const std::lock_guard lock(mutex);
        rows[i] = std::move(row);
        ++finished;
      }
      finished_one.notify_one();
    }
  };
  // Declared after what they share, so they are joined before it goes, also on an exception.
  std::vector<std::jthread> threads;
  const std::size_t count = std::clamp<std::size_t>(jobs, 1, std::max<std::size_t>(n, 1));
  for (std::size_t t = 0; t < count && n > 0; ++t) threads.emplace_back(work);
  try {
    std::size_t emitted = 0, reported = 0;
    std::unique_lock lock(mutex);
    while (emitted < n) {
      finished_one.wait(lock, [&] { return finished > reported; });
      const std::size_t done = finished;
      std::vector<SweepRow> ready;
      while (emitted < n && rows[emitted]) {
        ready.push_back(std::move(*rows[emitted]));
        rows[emitted++].reset();
      }
      lock.unlock();
      for (; reported < done; ++reported)
        if (on_progress) on_progress(reported + 1);
      for (SweepRow& row : ready) on_row(std::move(row));
      lock.lock();
    }
  } catch (...) {
    stop = true;
    throw;
  }
}

std::vector<std::string> sweep_row_fields(const SweepRow& row) {
  std::vector<std::string> f{std::to_string(row.point)};
  f.insert(f.end(), row.values.begin(), row.values.end());
  f.push_back(row.outcome);
  const bool ran = row.outcome != "error";
  auto metric = [&](const std::string& text) { f.push_back(ran ? text : std::string()); };
  metric(std::to_string(row.cycles));
  metric(number(row.time_us));
  metric(std::to_string(row.llc_read_bytes));
  metric(std::to_string(row.llc_write_bytes));
  metric(std::to_string(row.dram_read_bytes));
  metric(std::to_string(row.dram_write_bytes));
  f.push_back(row.l2_hit_rate ? number(*row.l2_hit_rate) : std::string());
  f.push_back(fmt::format("{:.3f}", row.wall_seconds));
  f.push_back(row.manifest_sha256);
  f.push_back(row.error);
  return f;
}

std::string csv_line(const std::vector<std::string>& fields) {
  std::string out;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i) out += ',';
    const std::string& f = fields[i];
    if (f.find_first_of(",\"\n\r") == std::string::npos) {
      out += f;
      continue;
    }
    out += '"';
    for (char c : f) {
      if (c == '"') out += '"';
      out += c;
    }
    out += '"';
  }
  out += '\n';
  return out;
}

std::vector<std::vector<std::string>> parse_csv(std::string_view text,
                                                std::size_t* complete_bytes) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string field;
  bool quoted = false;
  std::size_t complete = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c != '"')
        field += c;
      else if (i + 1 < text.size() && text[i + 1] == '"')
        field += text[++i];
      else
        quoted = false;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      record.push_back(std::move(field));
      field.clear();
    } else if (c == '\n') {
      if (!field.empty() && field.back() == '\r') field.pop_back();
      record.push_back(std::move(field));
      field.clear();
      records.push_back(std::move(record));
      record.clear();
      complete = i + 1;
    } else {
      field += c;
    }
  }
  if (complete_bytes) *complete_bytes = complete;
  return records;
}

}  // namespace simfa::apps
