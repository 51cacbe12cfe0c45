// The kernel's statistics registry: owns every counter, histogram and formula components
// declare, and turns them into the nested JSON of the stats file.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>

#include "simfa/stats.h"

namespace simfa::kernel {

class StatsRegistryImpl final : public StatsRegistry {
 public:
  Counter& counter(const std::string& path, std::string_view unit, std::string_view doc) override;
  Histogram& histogram(const std::string& path, std::string_view unit, std::string_view doc,
                       std::uint64_t bucket_width, std::size_t bucket_count) override;
  void formula(const std::string& path, std::string_view unit, std::string_view doc,
               Formula formula) override;

  /// The counter at `path`, or null.
  const Counter* find_counter(std::string_view path) const;
  /// Value of a formula or counter at `path` (formulas evaluated now); 0 when absent.
  double value(std::string_view path) const;

  /// Every statistic as nested objects: "l2.slice[3].hits" -> {"l2":{"slice[3]":{"hits":N}}}.
  /// Histograms become {"bucket_width","buckets","overflow","count","sum","mean","max"}.
  boost::json::object to_json() const;

 private:
  enum class Kind { kCounter, kHistogram, kFormula };
  struct Entry {
    Kind kind;
    std::string unit, doc;
    Counter* counter = nullptr;
    Histogram* histogram = nullptr;
    Formula formula;
  };
  double evaluate(const Formula& f) const;
  Entry& declare(const std::string& path, Kind kind, std::string_view unit, std::string_view doc);

  std::map<std::string, Entry, std::less<>> entries_;
  std::deque<Counter> counters_;      // deque: references stay valid as it grows
  std::deque<Histogram> histograms_;
};

}  // namespace simfa::kernel
