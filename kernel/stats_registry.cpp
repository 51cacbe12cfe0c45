#include "kernel/stats_registry.h"

#include <boost/json/array.hpp>

#include "simfa/error.h"

namespace simfa::kernel {

StatsRegistryImpl::Entry& StatsRegistryImpl::declare(const std::string& path, Kind kind,
                                                      std::string_view unit, std::string_view doc) {
  auto [it, inserted] = entries_.try_emplace(path);
  if (!inserted) {
    if (it->second.kind != kind)
      throw Error("internal: statistic '" + path + "' declared twice with different kinds");
    return it->second;
  }
  it->second.kind = kind;
  it->second.unit = std::string(unit);
  it->second.doc = std::string(doc);
  return it->second;
}

Counter& StatsRegistryImpl::counter(const std::string& path, std::string_view unit,
                                    std::string_view doc) {
  Entry& e = declare(path, Kind::kCounter, unit, doc);
  if (!e.counter) e.counter = &counters_.emplace_back();
  return *e.counter;
}

Histogram& StatsRegistryImpl::histogram(const std::string& path, std::string_view unit,
                                        std::string_view doc, std::uint64_t bucket_width,
                                        std::size_t bucket_count) {
  Entry& e = declare(path, Kind::kHistogram, unit, doc);
  if (!e.histogram) e.histogram = &histograms_.emplace_back(bucket_width, bucket_count);
  return *e.histogram;
}

void StatsRegistryImpl::formula(const std::string& path, std::string_view unit,
                                std::string_view doc, Formula f) {
  declare(path, Kind::kFormula, unit, doc).formula = std::move(f);
}

const Counter* StatsRegistryImpl::find_counter(std::string_view path) const {
  auto it = entries_.find(path);
  return it != entries_.end() && it->second.kind == Kind::kCounter ? it->second.counter : nullptr;
}

double StatsRegistryImpl::evaluate(const Formula& f) const {
  auto sum = [&](const std::vector<std::string>& names) {
    double s = 0;
    for (const auto& n : names) s += value(n);
    return s;
  };
  double num = sum(f.numerator);
  double den = f.denominator.empty() ? 1.0 : sum(f.denominator);
  return den == 0 ? 0.0 : f.scale * num / den;
}

double StatsRegistryImpl::value(std::string_view path) const {
  auto it = entries_.find(path);
  if (it == entries_.end()) return 0;
  switch (it->second.kind) {
    case Kind::kCounter: return static_cast<double>(it->second.counter->value());
    case Kind::kFormula: return evaluate(it->second.formula);
    case Kind::kHistogram: return it->second.histogram->mean();
  }
  return 0;
}

namespace {
// The object at the dotted path's parent, creating intermediate objects.
boost::json::object& parent_of(boost::json::object& root, std::string_view path,
                               std::string_view& leaf) {
  boost::json::object* node = &root;
  std::size_t start = 0;
  for (;;) {
    auto dot = path.find('.', start);
    if (dot == std::string_view::npos) {
      leaf = path.substr(start);
      return *node;
    }
    auto key = path.substr(start, dot - start);
    auto& child = (*node)[key];
    if (!child.is_object()) child = boost::json::object();
    node = &child.as_object();
    start = dot + 1;
  }
}
}  // namespace

boost::json::object StatsRegistryImpl::to_json() const {
  boost::json::object root;
  for (const auto& [path, e] : entries_) {
    std::string_view leaf;
    auto& parent = parent_of(root, path, leaf);
    switch (e.kind) {
      case Kind::kCounter: parent[leaf] = e.counter->value(); break;
      case Kind::kFormula: parent[leaf] = evaluate(e.formula); break;
      case Kind::kHistogram: {
        const Histogram& h = *e.histogram;
        boost::json::array buckets;
        for (auto b : h.buckets()) buckets.emplace_back(b);
        parent[leaf] = boost::json::object{{"bucket_width", h.bucket_width()},
                                           {"buckets", std::move(buckets)},
                                           {"overflow", h.overflow()},
                                           {"count", h.count()},
                                           {"sum", h.sum()},
                                           {"mean", h.mean()},
                                           {"max", h.max()}};
        break;
      }
    }
  }
  return root;
}

}  // namespace simfa::kernel
