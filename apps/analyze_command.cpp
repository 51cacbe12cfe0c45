#include "apps/analyze_command.h"

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>
#include <fmt/format.h>

#include "analytical/llc_survival.h"
#include "analytical/model.h"
#include "analytical/result_fields.h"
#include "analytical/sweep.h"
#include "analytical/workload.h"
#include "simfa/error.h"
#include "simfa/int_math.h"

namespace simfa::apps {

namespace {

using namespace simfa::analytical;

constexpr int kExitOk = 0;
constexpr int kExitBadInput = 1;

/// "26.21 MB", "281.5 TFLOP": four significant digits with a decimal prefix.
std::string si(double value, std::string_view unit) {
  static constexpr std::string_view kPrefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  std::size_t p = 0;
  while (value >= 1000 && p + 1 < std::size(kPrefixes)) {
    value /= 1000;
    ++p;
  }
  return fmt::format("{:.4g} {}{}", value, kPrefixes[p], unit);
}

std::string duration(double seconds) {
  if (seconds >= 1) return fmt::format("{:.4g} s", seconds);
  if (seconds >= 1e-3) return fmt::format("{:.4g} ms", seconds * 1e3);
  if (seconds >= 1e-6) return fmt::format("{:.4g} us", seconds * 1e6);
  return fmt::format("{:.4g} ns", seconds * 1e9);
}

std::string plural(std::int64_t n, std::string_view word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

/// Which regime applies and why: how much of what the waves re-use survives in the effective LLC,
/// from the LRU stack distance of a re-used line (analytical/llc_survival.h).
std::string regime_reason(const AnalyticalResult& r, const AnalyticalGpu& gpu) {
  const std::string working_set =
      r.kind == WorkloadKind::fa3
          ? fmt::format("{} of K/V for {} + {} of Q and O tiles for {}", si(r.working_set_operand_bytes, "B"),
                        plural(r.fa3.kv_heads_per_wave, "KV head"), si(r.working_set_tile_bytes, "B"),
                        plural(r.ctas_per_wave, "CTA"))
          : fmt::format("{} of A and B for {} and {} + {} of C tiles for {}",
                        si(r.working_set_operand_bytes, "B"), plural(r.gemm.wave_a_panels, "A panel"),
                        plural(r.gemm.wave_b_panels, "B panel"), si(r.working_set_tile_bytes, "B"),
                        plural(r.ctas_per_wave, "CTA"));
  const std::string llc = fmt::format("the effective LLC of {} (L2 {} / {})", si(r.effective_llc_bytes, "B"),
                                      si(gpu.l2_bytes, "B"), plural(gpu.l2_partitions, "partition"));
  if (r.dram_wave_read_bytes <= r.dram_ideal_read_bytes)
    return fmt::format("ideal: no operand is re-used across waves, so every tensor crosses DRAM once "
                       "(one wave's working set, {} = {}, against {})",
                       working_set, si(r.working_set_bytes, "B"), llc);
  const std::string distance =
      fmt::format("a re-used line's LRU stack distance from one wave to the next is {} on average, {:.3g}x {}",
                  si(r.reuse_distance_bytes, "B"), r.reuse_distance_bytes / r.effective_llc_bytes, llc);
  const std::string survival = fmt::format("{:.1f}% of what the waves re-use survives there (1 up to {:.2g}x, 0 from {:.3g}x)",
                                           100 * r.reuse_survival, kSurvivalOnset, kSurvivalOnset + kSurvivalWidth);
  const std::string traffic =
      r.regime == Regime::ideal
          ? std::string("every tensor crosses DRAM once")
          : fmt::format("DRAM reads {:.3g}x the compulsory", r.dram_read_bytes / r.dram_ideal_read_bytes);
  return fmt::format("{}: {}, so {}: {} (one wave's working set: {} = {})", regime_name(r.regime), distance,
                     survival, traffic, working_set, si(r.working_set_bytes, "B"));
}

std::string gpu_line(const AnalyticalGpu& gpu, const std::string& name) {
  return fmt::format("{}{} SMs at {} MHz, {} dense FP16, L2 {} in {} (effective LLC {}), DRAM {}, L2 {}",
                     name.empty() ? "" : name + ": ", gpu.sm_count, gpu.clock_mhz, si(gpu.peak_flops(), "FLOP/s"),
                     si(gpu.l2_bytes, "B"), plural(gpu.l2_partitions, "partition"),
                     si(gpu.effective_llc_bytes(), "B"), si(gpu.dram_bandwidth, "B/s"),
                     gpu.l2_bandwidth > 0 ? si(gpu.l2_bandwidth, "B/s") : std::string("bandwidth unknown"));
}

void print_text(const AnalyzeRequest& request, const Workload& w, const AnalyticalResult& r) {
  const std::string tile = w.kind == WorkloadKind::fa3
                               ? fmt::format("{}x{}", w.fa3.block_m, w.fa3.block_n)
                               : fmt::format("{}x{}x{}", w.gemm.block_m, w.gemm.block_n, w.gemm.block_k);
  const std::string reuse =
      w.kind == WorkloadKind::fa3
          ? fmt::format("each KV head's K/V fetched by {:.3g} waves on average", r.wave_factor)
          : fmt::format("A {:.3g}x and B {:.3g}x their compulsory bytes",
                        r.gemm.a_wave_read_bytes / r.gemm.a_bytes, r.gemm.b_wave_read_bytes / r.gemm.b_bytes);
  const std::string llc_time = r.time_llc_s > 0 ? duration(r.time_llc_s) : std::string("n/a (no l2_bandwidth)");
  std::string out;
  auto line = [&out](std::string_view label, const std::string& text) {
    fmt::format_to(std::back_inserter(out), "{:<21}{}\n", label, text);
  };
  out += "simfa analyze: SimFA's analytical model (paper sections III and VIII; docs/analytical.md)\n";
  line("gpu", gpu_line(request.gpu, request.gpu_name));
  line("workload", describe_workload(w));
  const std::string per_sm = w.kind == WorkloadKind::gemm
                                 ? fmt::format("{} per SM by {} of shared memory each", r.gemm.ctas_per_sm,
                                               si(static_cast<double>(r.gemm.smem_bytes), "B"))
                                 : std::string("one per SM");
  line("launch", fmt::format("{}, {} per wave ({}), {}", plural(r.ctas, "CTA"), r.ctas_per_wave, per_sm,
                             plural(r.waves, "wave")));
  out += "\n";
  line("FLOPs", fmt::format("{} useful (III-B); the tensor cores execute {} in whole {} tiles", si(r.flops, "FLOP"),
                            si(r.mma_flops, "FLOP"), tile));
  line("LLC traffic", fmt::format("{}: {} read, {} written (III-C)", si(r.llc_bytes(), "B"),
                                  si(r.llc_read_bytes, "B"), si(r.llc_write_bytes, "B")));
  line("DRAM, ideal cache", fmt::format("{}: {} read, {} written (III-D)", si(r.dram_ideal_bytes(), "B"),
                                        si(r.dram_ideal_read_bytes, "B"), si(r.dram_ideal_write_bytes, "B")));
  line("DRAM, wave model", fmt::format("{}: {} read, {} written (III-E; {})", si(r.dram_wave_bytes(), "B"),
                                       si(r.dram_wave_read_bytes, "B"), si(r.dram_ideal_write_bytes, "B"), reuse));
  line("regime", regime_reason(r, request.gpu) + " (VIII-B2)");
  line("DRAM, SimFA", fmt::format("{}: {} read, {} written (the ideal reads plus the wave model's re-fetches "
                                  "that do not survive)",
                                  si(r.dram_bytes(), "B"), si(r.dram_read_bytes, "B"), si(r.dram_write_bytes, "B")));
  if (w.kind == WorkloadKind::gemm && r.gemm.staggered_read_bytes > r.gemm.lockstep_read_bytes)
    line("DRAM, out of step",
         fmt::format("{} read if the CTAs drift fully out of step and a wave shares nothing (a bound); {} in "
                     "lockstep waves; with {} CTAs per SM over {} waves of {} k-steps, {:.0f}% of each paced by "
                     "the memory, the drift takes {:.1f}% of the way to the bound (docs/analytical.md)",
                     si(r.gemm.staggered_read_bytes, "B"), si(r.gemm.lockstep_read_bytes, "B"),
                     r.gemm.ctas_per_sm, r.waves, ceil_div(w.gemm.k, w.gemm.block_k),
                     100 * r.gemm.memory_paced_share, 100 * r.gemm.out_of_step_share));
  line("GenZ-style estimate", fmt::format("{} DRAM, {}, {} ({} bound): {:.3g}x SimFA's DRAM traffic",
                                          si(r.genz_dram_bytes, "B"), si(r.genz_flops, "FLOP"),
                                          duration(r.genz_time_s), bound_name(r.genz_bound),
                                          r.genz_dram_bytes / r.dram_bytes()));
  line("traffic ratios", fmt::format("LLC/DRAM ideal {:.4g}, LLC/DRAM SimFA {:.4g}, SimFA/ideal {:.4g}; "
                                     "{:.4g} FLOP per DRAM byte, {:.4g} per LLC byte (III-F)",
                                     r.llc_to_dram_ideal(), r.llc_to_dram(), r.dram_to_ideal(),
                                     r.flops_per_dram_byte(), r.flops_per_llc_byte()));
  line("roofline", fmt::format("compute {}, LLC {}, DRAM {} -> {}, {} bound", duration(r.time_compute_s), llc_time,
                               duration(r.time_dram_s), duration(r.time_s), bound_name(r.bound)));
  std::fwrite(out.data(), 1, out.size(), stdout);
}

boost::json::object gpu_json(const AnalyticalGpu& gpu, const std::string& name) {
  boost::json::object o;
  o["name"] = name;
  for (std::size_t i = 0; i < gpu_params().size(); ++i)
    o[gpu_params()[i].name] = gpu_value(gpu, static_cast<GpuKey>(i));
  o["effective_llc_bytes"] = gpu.effective_llc_bytes();
  o["peak_flops"] = gpu.peak_flops();
  return o;
}

void add_result_fields(boost::json::object& o, const AnalyticalResult& r) {
  for (const ResultField& f : result_fields()) {
    if (!f.applies_to(r.kind)) continue;
    if (f.value) o[f.name] = f.value(r);
    else o[f.name] = f.label(r);
  }
}

/// One CSV row per point: the axis values, then every result field of the workload kind.
class CsvWriter {
 public:
  CsvWriter(std::FILE* out, WorkloadKind kind, const std::vector<SweepAxis>& axes)
      : out_(out), kind_(kind), axes_(axes) {
    for (const SweepAxis& axis : axes_) field(axis.name);
    for (const ResultField& f : result_fields())
      if (f.applies_to(kind_)) field(f.name);
    end_row();
  }
  void row(const SweepPoint& p) {
    for (std::size_t i = 0; i < axes_.size(); ++i) {
      const SweepAxis& axis = axes_[i];
      const double v = axis.values[p.index[i]];
      if (axis.gpu) {
        number(v);
        continue;
      }
      const WorkloadKey& key = workload_keys(kind_)[axis.key];
      if (key.type == KeyType::integer) number(v);
      else if (key.type == KeyType::boolean) field(v != 0 ? "true" : "false");
      else field(key.choices[static_cast<std::size_t>(v)]);
    }
    for (const ResultField& f : result_fields()) {
      if (!f.applies_to(kind_)) continue;
      if (f.value) number(f.value(p.result));
      else field(f.label(p.result));
    }
    end_row();
  }

  bool flush() {
    std::fwrite(buffer_.data(), 1, buffer_.size(), out_);
    buffer_.clear();
    return std::fflush(out_) == 0 && !std::ferror(out_);
  }

 private:
  void separator() {
    if (!first_) buffer_.push_back(',');
    first_ = false;
  }
  void field(std::string_view text) {
    separator();
    buffer_.append(text.data(), text.data() + text.size());
  }
  void number(double v) {
    separator();
    // Shortest round-trip text straight into the buffer; whole numbers (bytes, counts) take the
    // faster integer path. Formatting is most of a sweep's cost.
    const std::size_t at = buffer_.size();
    buffer_.resize(at + 32);
    char* begin = buffer_.data() + at;
    const auto [end, ec] = v == std::trunc(v) && std::fabs(v) < 9.0e15
                               ? std::to_chars(begin, begin + 32, static_cast<long long>(v))
                               : std::to_chars(begin, begin + 32, v);
    buffer_.resize(static_cast<std::size_t>(end - buffer_.data()));
  }
  void end_row() {
    buffer_.push_back('\n');
    first_ = true;
    if (buffer_.size() > (1u << 20)) flush();
  }

  std::FILE* out_;
  WorkloadKind kind_;
  const std::vector<SweepAxis>& axes_;
  fmt::memory_buffer buffer_;
  bool first_ = true;
};

int run(const AnalyzeRequest& request) {
  const WorkloadSpec spec = parse_workload_spec(request.workload_spec);
  std::vector<SweepAxis> axes;
  std::vector<std::string> errors;
  for (const std::string& text : request.sweeps) {
    try {
      axes.push_back(parse_sweep(text, spec.kind));
    } catch (const InputError& e) {
      errors.push_back(e.what());
    }
  }
  if (!errors.empty()) {
    for (const std::string& e : errors) std::cerr << e << "\n";
    return kExitBadInput;
  }
  const SweepGrid grid(spec, request.gpu, std::move(axes));
  grid.validate();
  const bool sweeping = !request.sweeps.empty();

  // Points go to the CSV file, or to stdout as CSV when sweeping (as JSON with --json). The
  // file is opened before anything is printed, so a bad path leaves no partial report.
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> csv_file(nullptr, std::fclose);
  std::FILE* csv_out = nullptr;
  if (!request.csv_path.empty()) {
    csv_file.reset(std::fopen(request.csv_path.c_str(), "w"));
    if (!csv_file)
      throw InputError(SourceLocation{"--csv " + request.csv_path, 0, 0},
                       std::string("cannot open for writing: ") + std::strerror(errno));
    csv_out = csv_file.get();
  } else if (sweeping && !request.json) {
    csv_out = stdout;
  }

  if (!sweeping) {
    const Workload w = resolve_workload(spec);
    const AnalyticalResult r = analyze(request.gpu, w);
    if (request.json) {
      boost::json::object o;
      o["gpu"] = gpu_json(request.gpu, request.gpu_name);
      o["workload"] = describe_workload(w);
      boost::json::object result;
      add_result_fields(result, r);
      o["result"] = std::move(result);
      o["regime_reason"] = regime_reason(r, request.gpu);
      std::cout << boost::json::serialize(o) << "\n";
    } else {
      print_text(request, w, r);
    }
    if (!csv_out) return kExitOk;
    std::cout.flush();
  }

  std::optional<CsvWriter> csv;
  if (csv_out) csv.emplace(csv_out, grid.kind(), grid.axes());
  boost::json::array points;
  const bool json_points = sweeping && request.json;

  const auto start = std::chrono::steady_clock::now();
  grid.for_each([&](const SweepPoint& p) {
    if (csv) csv->row(p);
    if (json_points) {
      boost::json::object o;
      for (std::size_t i = 0; i < grid.axes().size(); ++i) {
        const SweepAxis& axis = grid.axes()[i];
        const bool named = !axis.gpu && workload_keys(grid.kind())[axis.key].type != KeyType::integer;
        if (named) o[axis.name] = sweep_value_text(axis, grid.kind(), p.index[i]);
        else o[axis.name] = axis.values[p.index[i]];
      }
      add_result_fields(o, p.result);
      points.push_back(std::move(o));
    }
  });
  const bool written = (!csv || csv->flush()) && (!csv_file || std::fclose(csv_file.release()) == 0);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!written) {
    std::cerr << "--csv " << request.csv_path << ": error: write failed\n";
    return kExitBadInput;
  }
  if (json_points) {
    boost::json::object o;
    o["gpu"] = gpu_json(request.gpu, request.gpu_name);
    o["workload"] = request.workload_spec;
    boost::json::array axes_json;
    for (const SweepAxis& axis : grid.axes()) axes_json.push_back(boost::json::value(axis.name));
    o["axes"] = std::move(axes_json);
    o["points"] = std::move(points);
    std::cout << boost::json::serialize(o) << "\n";
  }
  if (!sweeping) return kExitOk;
  const std::string summary = fmt::format("{} design points in {} ({:.3g} points/s)", grid.size(),
                                          duration(seconds), static_cast<double>(grid.size()) / seconds);
  // The summary stays off stdout when stdout carries the points.
  if (csv_out == stdout || request.json) std::cerr << "evaluated " << summary << "\n";
  else std::cout << "wrote " << summary << " to " << request.csv_path << "\n";
  return kExitOk;
}

}  // namespace

int run_analyze_command(const AnalyzeRequest& request) {
  try {
    analytical::validate(request.gpu, request.gpu_name.empty() ? "[gpu]" : "[gpu] " + request.gpu_name);
    return run(request);
  } catch (const InputError& e) {
    std::cerr << e.what() << "\n";
    return kExitBadInput;
  }
}

}  // namespace simfa::apps
