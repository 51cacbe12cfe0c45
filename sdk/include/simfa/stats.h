// Statistics: counters, histograms and formulas with hierarchical names
// ("sm[0].tensor_core.busy_cycles"). Components increment plain objects owned by the kernel's
// registry; nothing on the hot path is virtual or allocates.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "simfa/error.h"
#include "simfa/params.h"
#include "simfa/types.h"

namespace simfa {

class Counter {
 public:
  void add(std::uint64_t n = 1) { value_ += n; }
  void set(std::uint64_t v) { value_ = v; }
  std::uint64_t value() const { return value_; }

 private:
  std::uint64_t value_ = 0;
};

/// Fixed-width buckets [0, width), [width, 2 width), ...; larger samples count as overflow.
class Histogram {
 public:
  Histogram(std::uint64_t bucket_width, std::size_t bucket_count)
      : width_(bucket_width == 0 ? 1 : bucket_width), buckets_(bucket_count == 0 ? 1 : bucket_count) {}
  void sample(std::uint64_t v, std::uint64_t times = 1) {
    std::uint64_t i = v / width_;
    if (i < buckets_.size()) buckets_[i] += times;
    else overflow_ += times;
    count_ += times;
    sum_ += v * times;
    max_ = std::max(max_, v);
  }
  std::uint64_t bucket_width() const { return width_; }
  const std::vector<std::uint64_t>& buckets() const { return buckets_; }
  std::uint64_t overflow() const { return overflow_; }
  std::uint64_t count() const { return count_; }
  std::uint64_t sum() const { return sum_; }
  std::uint64_t max() const { return max_; }
  double mean() const { return count_ ? static_cast<double>(sum_) / static_cast<double>(count_) : 0.0; }

 private:
  std::uint64_t width_;
  std::vector<std::uint64_t> buckets_;
  std::uint64_t overflow_ = 0, count_ = 0, sum_ = 0, max_ = 0;
};

/// A derived statistic: scale * sum(numerator) / sum(denominator); names are relative to the
/// scope that declares the formula (e.g. hit_rate = hits / (hits + misses)). An empty
/// denominator means 1; a zero denominator gives 0.
struct Formula {
  std::vector<std::string> numerator;
  std::vector<std::string> denominator;
  double scale = 1.0;
};

/// Implemented by the kernel. Returned references stay valid for the whole run.
class SIMFA_API StatsRegistry {
 public:
  virtual Counter& counter(const std::string& path, std::string_view unit, std::string_view doc) = 0;
  virtual Histogram& histogram(const std::string& path, std::string_view unit, std::string_view doc,
                               std::uint64_t bucket_width, std::size_t bucket_count) = 0;
  virtual void formula(const std::string& path, std::string_view unit, std::string_view doc,
                       Formula formula) = 0;

 protected:
  ~StatsRegistry() = default;
};

/// Whether `name` is an instance of the statistic a schema declares as `declared`: "[i]" in a
/// declared name stands for an index ("slice[i].hits" names "slice[3].hits") and "<...>" for
/// one part of a name, up to the next '.' ("issued.<op>" names "issued.tma_load").
inline bool declared_stat_names(std::string_view declared, std::string_view name) {
  std::size_t d = 0, n = 0;
  while (d < declared.size()) {
    if (declared.substr(d, 3) == "[i]") {
      if (n >= name.size() || name[n] != '[') return false;
      const std::size_t digits = name.find_first_not_of("0123456789", n + 1);
      if (digits == n + 1 || digits == std::string_view::npos || name[digits] != ']') return false;
      d += 3, n = digits + 1;
    } else if (declared[d] == '<') {
      const std::size_t close = declared.find('>', d);
      if (close == std::string_view::npos) return false;
      const std::size_t part = std::min(name.find('.', n), name.size());
      if (part == n) return false;
      d = close + 1, n = part;
    } else {
      if (n >= name.size() || name[n] != declared[d]) return false;
      ++d, ++n;
    }
  }
  return n == name.size();
}

/// A registry seen from one component: names are prefixed with the component's path. Each
/// statistic is bound by the name its component's schema declares (Schema::stat in describe()),
/// which gives its kind, unit and doc: they are written once, in the declaration.
class StatsScope {
 public:
  /// `schema`: the component's; null for a component that declares no statistics.
  StatsScope(StatsRegistry& registry, std::string prefix, const Schema* schema = nullptr)
      : registry_(&registry), prefix_(std::move(prefix)), schema_(schema) {}

  /// The counter the schema declares as `name`. Throws simfa::Error when it declares none.
  Counter& counter(std::string_view name) const {
    const StatSpec& s = declared(name, StatKind::kCounter);
    return registry_->counter(full(name), s.unit, s.doc);
  }
  /// The histogram the schema declares as `name`, with its buckets.
  Histogram& histogram(std::string_view name, std::uint64_t bucket_width,
                       std::size_t bucket_count) const {
    const StatSpec& s = declared(name, StatKind::kHistogram);
    return registry_->histogram(full(name), s.unit, s.doc, bucket_width, bucket_count);
  }
  /// The formula the schema declares as `name`, computed as `f` says (its names relative to this
  /// scope).
  void formula(std::string_view name, Formula f) const {
    const StatSpec& s = declared(name, StatKind::kFormula);
    for (auto& n : f.numerator) n = full(n);
    for (auto& d : f.denominator) d = full(d);
    registry_->formula(full(name), s.unit, s.doc, std::move(f));
  }
  /// A nested scope: child("slice[3]") of "l2" binds "l2.slice[3].hits" as the schema declares
  /// "slice[i].hits".
  StatsScope child(std::string_view name) const {
    StatsScope c(*registry_, full(name), schema_);
    c.within_ = within(name);
    return c;
  }
  const std::string& prefix() const { return prefix_; }

 private:
  std::string full(std::string_view name) const {
    return prefix_.empty() ? std::string(name) : prefix_ + "." + std::string(name);
  }
  // The name relative to the component, as its schema declares it.
  std::string within(std::string_view name) const {
    return within_.empty() ? std::string(name) : within_ + "." + std::string(name);
  }
  const StatSpec& declared(std::string_view name, StatKind kind) const {
    const std::string relative = within(name);
    if (schema_)
      for (const StatSpec& s : schema_->stats())
        if (s.kind == kind && declared_stat_names(s.name, relative)) return s;
    throw Error("internal: statistic '" + full(name) + "' is bound but not declared: the " +
                "component's schema has no " + simfa::to_string(kind) + " '" + relative +
                "' (Schema::stat in describe())");
  }

  StatsRegistry* registry_;
  std::string prefix_;
  const Schema* schema_;
  std::string within_;  ///< a child's path inside its component ("slice[3]"); "" at the top
};

}  // namespace simfa
