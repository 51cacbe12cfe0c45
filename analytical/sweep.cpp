#include "analytical/sweep.h"

#include <charconv>
#include <cmath>

#include "analytical/errors.h"
#include "simfa/error.h"
#include "simfa/spelling.h"

namespace simfa::analytical {

namespace {

constexpr std::size_t kMaxAxisValues = 10'000'000;
constexpr double kMaxInteger = 2147483647.0;  // workload integers stay below 2^31

bool parse_number(std::string_view text, double& value) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  return ec == std::errc() && ptr == end && std::isfinite(value);
}

/// Parses one bound or step of a range: GPU parameters take their units, workload keys plain
/// numbers.
bool parse_range_number(const SweepAxis& axis, std::string_view text, double& value) {
  if (axis.gpu) return parse_gpu_value(static_cast<GpuKey>(axis.key), text, value);
  return parse_number(text, value);
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  while (true) {
    const auto at = text.find(separator);
    parts.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return parts;
    text.remove_prefix(at + 1);
  }
}

/// "lo..hi:xF" or "lo..hi:+S" into values; empty problem on success.
std::string expand_range(SweepAxis& axis, std::string_view text) {
  const auto dots = text.find("..");
  const std::string_view lo_text = text.substr(0, dots);
  std::string_view rest = text.substr(dots + 2);
  const auto colon = rest.find(':');
  if (colon == std::string_view::npos || colon + 1 >= rest.size())
    return "a range needs a step: LO..HI:xFACTOR (geometric) or LO..HI:+STEP (linear)";
  const std::string_view hi_text = rest.substr(0, colon);
  const char kind = rest[colon + 1];
  const std::string_view step_text = rest.substr(colon + 2);
  double lo = 0, hi = 0, step = 0;
  if (!parse_range_number(axis, lo_text, lo)) return "cannot read the range start '" + std::string(lo_text) + "'";
  if (!parse_range_number(axis, hi_text, hi)) return "cannot read the range end '" + std::string(hi_text) + "'";
  if (hi < lo) return "the range end " + std::string(hi_text) + " lies below its start " + std::string(lo_text);
  if (kind == 'x') {
    if (!parse_number(step_text, step) || !(step > 1))
      return "a geometric step needs a factor above 1, got 'x" + std::string(step_text) + "'";
    if (!(lo > 0)) return "a geometric range needs a positive start, got " + std::string(lo_text);
    // Each value from lo directly, so rounding does not accumulate; hi counts when hit.
    for (int i = 0;; ++i) {
      const double v = lo * std::pow(step, i);
      if (v > hi * (1 + 1e-12)) break;
      axis.values.push_back(v);
      if (axis.values.size() > kMaxAxisValues) return "more than 10^7 values";
    }
  } else if (kind == '+') {
    if (!parse_range_number(axis, step_text, step) || !(step > 0))
      return "a linear step needs a positive increment, got '+" + std::string(step_text) + "'";
    for (int i = 0;; ++i) {
      const double v = lo + step * i;
      if (v > hi + step * 1e-9) break;
      axis.values.push_back(v);
      if (axis.values.size() > kMaxAxisValues) return "more than 10^7 values";
    }
  } else {
    return "a range step starts with x (geometric) or + (linear), got '" + std::string(rest.substr(colon + 1)) + "'";
  }
  return {};
}

}  // namespace

SweepAxis parse_sweep(std::string_view text, WorkloadKind kind) {
  const std::string where = "--sweep " + std::string(text);
  const auto eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == text.size())
    throw_errors(where, {"expected NAME=VALUES (LO..HI:xFACTOR, LO..HI:+STEP or V1,V2,...)"});
  SweepAxis axis;
  axis.name = std::string(text.substr(0, eq));
  const std::string_view values = text.substr(eq + 1);

  const auto keys = workload_keys(kind);
  axis.key = find_workload_key(kind, axis.name);
  if (axis.key < 0) {
    std::vector<std::string_view> names;
    for (const WorkloadKey& k : keys) names.push_back(k.name);
    for (std::size_t i = 0; i < gpu_params().size(); ++i) {
      names.push_back(gpu_params()[i].name);
      if (gpu_params()[i].name == axis.name) {
        axis.gpu = true;
        axis.key = static_cast<int>(i);
      }
    }
    if (!axis.gpu) {
      std::string message = "unknown sweep parameter '" + axis.name + "' for " +
                            std::string(workload_kind_name(kind));
      throw_errors(where, {message + did_you_mean(axis.name, names)});
    }
  }

  const bool numeric = axis.gpu || keys[axis.key].type == KeyType::integer;
  if (values.find("..") != std::string_view::npos) {
    if (!numeric)
      throw_errors(where, {axis.name + " takes a list of values (V1,V2,...), not a range"});
    if (std::string problem = expand_range(axis, values); !problem.empty()) throw_errors(where, {problem});
    if (!axis.gpu) {
      // Workload keys are integers: round, drop the repeats rounding makes, check the range.
      std::vector<double> rounded;
      for (double v : axis.values) {
        const double r = std::round(v);
        if (r < 1 || r > kMaxInteger)
          throw_errors(where, {axis.name + " takes integers from 1 to 2^31-1; the range reaches " + format_number(r)});
        if (rounded.empty() || rounded.back() != r) rounded.push_back(r);
      }
      axis.values = std::move(rounded);
    }
  } else {
    std::vector<std::string> errors;
    for (std::string_view item : split(values, ',')) {
      double v = 0;
      if (axis.gpu) {
        if (!parse_gpu_value(static_cast<GpuKey>(axis.key), item, v))
          errors.push_back("cannot read " + axis.name + " value '" + std::string(item) + "'");
      } else if (std::string problem; !parse_key_value(keys[axis.key], item, v, problem)) {
        errors.push_back(problem);
      }
      axis.values.push_back(v);
    }
    throw_if_errors(where, errors);
  }
  return axis;
}

std::string sweep_value_text(const SweepAxis& axis, WorkloadKind kind, std::size_t i) {
  if (axis.gpu) return format_number(axis.values[i]);
  return key_value_text(workload_keys(kind)[axis.key], axis.values[i]);
}

SweepGrid::SweepGrid(const WorkloadSpec& base, const AnalyticalGpu& gpu, std::vector<SweepAxis> axes)
    : base_(base), gpu_(gpu), axes_(std::move(axes)) {
  std::vector<std::string> errors;
  for (std::size_t i = 0; i < axes_.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j)
      if (axes_[j].gpu == axes_[i].gpu && axes_[j].key == axes_[i].key)
        errors.push_back(axes_[i].name + " is swept twice");
    if (size_ <= kMaxPoints) size_ *= axes_[i].values.size();
  }
  if (size_ > kMaxPoints)
    errors.push_back("the grid holds more than 10^9 points; split the sweep");
  throw_if_errors("--sweep", errors);
}

void SweepGrid::apply(std::span<const std::size_t> index, WorkloadSpec& spec, AnalyticalGpu& gpu) const {
  for (std::size_t i = 0; i < axes_.size(); ++i) {
    const SweepAxis& axis = axes_[i];
    if (axis.gpu) set_gpu_value(gpu, static_cast<GpuKey>(axis.key), axis.values[index[i]]);
    else spec.set(axis.key, axis.values[index[i]]);
  }
}

void SweepGrid::advance(std::vector<std::size_t>& index) const {
  for (std::size_t i = axes_.size(); i-- > 0;) {
    if (++index[i] < axes_[i].values.size()) return;
    index[i] = 0;
  }
}

void SweepGrid::validate() const {
  std::vector<std::size_t> index(axes_.size(), 0);
  for (std::uint64_t n = 0; n < size_; ++n) {
    WorkloadSpec spec = base_;
    AnalyticalGpu gpu = gpu_;
    apply(index, spec, gpu);
    try {
      resolve_workload(spec);
      analytical::validate(gpu, "gpu");
    } catch (const InputError& e) {
      std::string point;
      for (std::size_t i = 0; i < axes_.size(); ++i)
        point += (i ? ", " : "") + axes_[i].name + "=" + sweep_value_text(axes_[i], kind(), index[i]);
      throw InputError(SourceLocation{"--sweep", 0, 0}, "design point " + point + " is invalid:\n" + e.what());
    }
    advance(index);
  }
}

}  // namespace simfa::analytical
