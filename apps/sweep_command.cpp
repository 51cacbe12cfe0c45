#include "apps/sweep_command.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <set>
#include <utility>

#include "apps/sweep.h"
#include "kernel/plugin_host.h"
#include "simfa/error.h"

namespace simfa::apps {

namespace {

constexpr int kExitOk = 0;
constexpr int kExitBadInput = 1;

std::string clock_text(double seconds) {
  if (seconds < 59.95) return fmt::format("{:.1f}s", seconds);
  const auto s = static_cast<long long>(seconds + 0.5);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, s / 60 % 60);
}

/// The progress bar on a terminal's stderr: points done, failures, elapsed and left.
class ProgressBar {
 public:
  ProgressBar(std::size_t total, bool shown)
      : total_(total), shown_(shown), start_(std::chrono::steady_clock::now()) {}
  void update(std::size_t done, std::size_t failed) {
    if (!shown_ || total_ == 0) return;
    constexpr std::size_t kWidth = 30;
    const std::size_t filled = kWidth * done / total_;
    const double elapsed = seconds();
    const std::string left =
        done > 0 && done < total_
            ? fmt::format(", ~{} left", clock_text(elapsed * static_cast<double>(total_ - done) /
                                                   static_cast<double>(done)))
            : std::string();
    std::cerr << fmt::format("\r\x1b[K{}/{} points [{}{}]{} {} elapsed{}", done, total_,
                             std::string(filled, '#'), std::string(kWidth - filled, '.'),
                             failed ? fmt::format(" {} failed,", failed) : std::string(),
                             clock_text(elapsed), left)
              << std::flush;
  }
  void finish() {
    if (shown_ && total_ > 0) std::cerr << "\n";
  }
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::size_t total_;
  bool shown_;
  std::chrono::steady_clock::time_point start_;
};

std::string values_text(const SweepGrid& grid, const std::vector<std::string>& values) {
  std::string out;
  for (std::size_t i = 0; i < values.size(); ++i)
    fmt::format_to(std::back_inserter(out), "{}{}={}", i ? " " : "", grid.axes()[i].key, values[i]);
  return out;
}

/// The rows a --resume finds in the CSV file, checked against the sweep.
struct ExistingRows {
  std::vector<std::vector<std::string>> rows;  ///< in file order
  std::size_t failed = 0;
  bool present = false;  ///< the file exists (and has its header)
};

ExistingRows read_existing(const std::string& path, const SweepGrid& grid, const Shard& shard) {
  ExistingRows out;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return out;
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw InputError(SourceLocation{"--csv " + path, 0, 0},
                     std::string("cannot read: ") + std::strerror(errno));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::size_t complete = 0;
  auto records = parse_csv(text, &complete);
  if (records.empty()) return out;  // empty, or only a partial header: start afresh
  const std::vector<std::string> columns = sweep_columns(grid);
  if (records.front() != columns)
    throw InputError(SourceLocation{path, 1, 1},
                     fmt::format("this file's columns are not this sweep's: --resume continues "
                                 "the sweep that wrote it (expected {})",
                                 csv_line(columns).substr(0, csv_line(columns).size() - 1)));
  out.present = true;
  const std::size_t error_column = columns.size() - 1;
  std::set<std::size_t> seen;
  for (std::size_t r = 1; r < records.size(); ++r) {
    auto& record = records[r];
    const SourceLocation where{path, static_cast<std::uint32_t>(r + 1), 1};
    if (record.size() != columns.size())
      throw InputError(where, fmt::format("{} fields, expected {}", record.size(), columns.size()));
    std::size_t index = 0;
    const std::string& first = record.front();
    const auto [end, errc] = std::from_chars(first.data(), first.data() + first.size(), index);
    if (errc != std::errc() || end != first.data() + first.size() || index >= grid.size())
      throw InputError(where, fmt::format("point '{}' is not a point of this sweep (0 to {})",
                                          first, grid.size() - 1));
    const auto point = grid.point(index);
    const std::vector<std::string> values(record.begin() + 1,
                                          record.begin() + 1 + grid.axes().size());
    if (values != point.values)
      throw InputError(where,
                       fmt::format("point {} is {} in this file but {} in this sweep", index,
                                   values_text(grid, values), values_text(grid, point.values)));
    if (!shard.holds(index))
      throw InputError(
          where, fmt::format("point {} is not in shard {}/{}", index, shard.shard, shard.count));
    if (!seen.insert(index).second)
      throw InputError(where, fmt::format("point {} appears twice", index));
    if (!record[error_column].empty()) ++out.failed;
    out.rows.push_back(std::move(record));
  }
  // A sweep killed mid-write leaves a partial last line: drop it, its point runs again.
  if (complete < text.size()) std::filesystem::resize_file(path, complete);
  return out;
}

std::size_t row_point(const std::string& line) {
  std::size_t index = 0;
  std::from_chars(line.data(), line.data() + line.size(), index);
  return index;
}

/// Rewrites `path` with its rows sorted by point: after a --resume that filled holes.
void rewrite_sorted(const std::string& path, const std::string& header,
                    std::vector<std::string>& lines) {
  std::stable_sort(lines.begin(), lines.end(), [](const std::string& a, const std::string& b) {
    return row_point(a) < row_point(b);
  });
  const std::string tmp = path + ".sorting";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << header;
    for (const auto& line : lines) out << line;
    out.flush();
    if (!out) throw InputError(SourceLocation{"--csv " + tmp, 0, 0}, "cannot write");
  }
  std::filesystem::rename(tmp, path);
}

using FilePtr = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;

}  // namespace

int run_sweep_command(const SweepRequest& request) {
  std::vector<SweepAxis> axes;
  std::vector<std::string> errors;
  for (const std::string& text : request.varies) {
    try {
      axes.push_back(parse_vary(text));
    } catch (const InputError& e) {
      errors.push_back(e.what());
    }
  }
  if (!errors.empty()) {
    for (const std::string& e : errors) std::cerr << e << "\n";
    return kExitBadInput;
  }
  const SweepGrid grid(request.manifest, request.workloads, request.sets, std::move(axes));
  const Shard shard = request.shard.empty() ? Shard{} : parse_shard(request.shard);
  const std::string& path = request.csv_path;

  ExistingRows existing;
  if (request.resume) existing = read_existing(path, grid, shard);
  std::set<std::size_t> done;
  for (const auto& row : existing.rows) done.insert(row_point(row.front()));
  std::vector<std::size_t> points;
  std::size_t in_shard = 0;
  for (std::size_t i = 0; i < grid.size(); ++i) {
    if (!shard.holds(i)) continue;
    ++in_shard;
    if (!done.contains(i)) points.push_back(i);
  }

  kernel::PluginHost host;
  if (!points.empty()) load_sweep_plugins(host, grid, points);

  const std::string header = csv_line(sweep_columns(grid));
  FilePtr csv(std::fopen(path.c_str(), existing.present ? "ab" : "wb"), std::fclose);
  if (!csv)
    throw InputError(SourceLocation{"--csv " + path, 0, 0},
                     std::string("cannot open for writing: ") + std::strerror(errno));
  bool written = existing.present || std::fputs(header.c_str(), csv.get()) >= 0;

  const unsigned cores = usable_cores();
  const unsigned jobs = static_cast<unsigned>(std::min<std::size_t>(
      request.jobs ? request.jobs : cores, std::max<std::size_t>(points.size(), 1)));
  ProgressBar bar(points.size(), isatty(STDERR_FILENO) != 0);
  std::size_t failed = 0;
  std::vector<std::string> failures;  // "point N (KEY=V ...): error", the first few
  constexpr std::size_t kFailuresShown = 10;
  // Lines are kept only when resuming: the file is re-sorted when new rows landed before old.
  std::vector<std::string> lines;
  for (const auto& row : existing.rows) lines.push_back(csv_line(row));
  SweepOptions options;
  options.timeout_seconds = request.timeout_seconds;
  run_sweep(
      grid, points, host, options, jobs,
      [&](SweepRow&& row) {
        const std::string line = csv_line(sweep_row_fields(row));
        written =
            written && std::fputs(line.c_str(), csv.get()) >= 0 && std::fflush(csv.get()) == 0;
        if (!written)
          throw InputError(SourceLocation{"--csv " + path, 0, 0},
                           std::string("write failed: ") + std::strerror(errno));
        if (existing.present) lines.push_back(line);
        if (row.failed()) {
          ++failed;
          if (failures.size() < kFailuresShown)
            failures.push_back(fmt::format("point {} ({}): {}", row.point,
                                           values_text(grid, row.values), row.error));
        }
      },
      [&](std::size_t finished) { bar.update(finished, failed); });
  bar.finish();
  if (std::fclose(csv.release()) != 0 || !written)
    throw InputError(SourceLocation{"--csv " + path, 0, 0}, "write failed");
  if (existing.present && !points.empty() &&
      !std::is_sorted(lines.begin(), lines.end(), [](const std::string& a, const std::string& b) {
        return row_point(a) < row_point(b);
      }))
    rewrite_sorted(path, header, lines);

  for (const auto& f : failures) std::cerr << f << "\n";
  if (failed > failures.size())
    std::cerr << fmt::format("... and {} more failed points\n", failed - failures.size());
  const std::string of_shard =
      shard.count > 1 ? fmt::format(" (shard {}/{} of {})", shard.shard, shard.count, grid.size())
                      : std::string();
  const std::string kept = existing.present
                               ? fmt::format(", {} already in the file", in_shard - points.size())
                               : std::string();
  std::cout << fmt::format("swept {} points{}{}: ran {} in {} on {} thread{}, {} failed; {}\n",
                           in_shard, of_shard, kept, points.size(), clock_text(bar.seconds()), jobs,
                           jobs == 1 ? "" : "s", failed + existing.failed, path);
  return failed + existing.failed == 0 ? kExitOk : kExitBadInput;
}

}  // namespace simfa::apps
