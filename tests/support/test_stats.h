// A stats registry for testing components alone: every counter, histogram and formula kept
// under its full name, for reading values back and comparing names with the declared ones.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "simfa/stats.h"

namespace simfa::test {

class TestStats final : public StatsRegistry {
 public:
  Counter& counter(const std::string& path, std::string_view, std::string_view) override {
    return counters_[path];
  }
  Histogram& histogram(const std::string& path, std::string_view, std::string_view,
                       std::uint64_t bucket_width, std::size_t bucket_count) override {
    return histograms_.try_emplace(path, bucket_width, bucket_count).first->second;
  }
  void formula(const std::string& path, std::string_view, std::string_view, Formula f) override {
    formulas_[path] = std::move(f);
  }

  std::uint64_t value(const std::string& path) const {
    auto it = counters_.find(path);
    if (it == counters_.end()) throw std::out_of_range("no counter " + path);
    return it->second.value();
  }
  std::map<std::string, std::uint64_t> counters() const {
    std::map<std::string, std::uint64_t> out;
    for (const auto& [path, c] : counters_) out[path] = c.value();
    return out;
  }
  /// Every registered name, for comparing with the schema's declared statistics.
  std::set<std::string> names() const {
    std::set<std::string> out;
    for (const auto& [path, c] : counters_) out.insert(path);
    for (const auto& [path, h] : histograms_) out.insert(path);
    for (const auto& [path, f] : formulas_) out.insert(path);
    return out;
  }

 private:
  std::map<std::string, Counter> counters_;  // std::map: references stay valid
  std::map<std::string, Histogram> histograms_;
  std::map<std::string, Formula> formulas_;
};

}  // namespace simfa::test
