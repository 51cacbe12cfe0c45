// The DRAM-backend harness: the memory harness (memory_harness.h: the plugin harness's manual
// event queue and parameters from the component's own schema, a client recording responses,
// request helpers) plus a stats registry that evaluates formulas, an observer recording DRAM
// commands, a closed-loop streaming client, and the address of a chosen bank and row under the
// default HBM3 mapping.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "memory_harness.h"
#include "simfa/component.h"
#include "simfa/memory.h"

#include "hbm3_channel.h"
#include "hbm3_config.h"

namespace simfa::test {

/// A stats registry that keeps formulas and evaluates them as the kernel does.
class DramStats final : public StatsRegistry {
 public:
  Counter& counter(const std::string& path, std::string_view, std::string_view) override {
    return counters_[path];
  }
  Histogram& histogram(const std::string& path, std::string_view, std::string_view,
                       std::uint64_t bucket_width, std::size_t bucket_count) override {
    auto it = histograms_.find(path);
    if (it == histograms_.end())
      it = histograms_.emplace(path, std::make_unique<Histogram>(bucket_width, bucket_count)).first;
    return *it->second;
  }
  void formula(const std::string& path, std::string_view, std::string_view, Formula f) override {
    formulas_[path] = std::move(f);
  }

  std::uint64_t value(const std::string& path) const {
    auto it = counters_.find(path);
    if (it == counters_.end()) throw std::out_of_range("no counter " + path);
    return it->second.value();
  }
  const Histogram& hist(const std::string& path) const {
    auto it = histograms_.find(path);
    if (it == histograms_.end()) throw std::out_of_range("no histogram " + path);
    return *it->second;
  }
  /// scale * sum(numerator) / sum(denominator), 0 for a zero denominator.
  double evaluate(const std::string& path) const {
    auto it = formulas_.find(path);
    if (it == formulas_.end()) throw std::out_of_range("no formula " + path);
    auto sum = [&](const std::vector<std::string>& names) {
      double s = 0;
      for (const auto& n : names) s += static_cast<double>(value(n));
      return s;
    };
    const Formula& f = it->second;
    const double den = f.denominator.empty() ? 1.0 : sum(f.denominator);
    return den == 0 ? 0.0 : f.scale * sum(f.numerator) / den;
  }
  std::set<std::string> names() const {
    std::set<std::string> out;
    for (const auto& [path, c] : counters_) out.insert(path);
    for (const auto& [path, h] : histograms_) out.insert(path);
    for (const auto& [path, f] : formulas_) out.insert(path);
    return out;
  }

 private:
  std::map<std::string, Counter> counters_;
  std::map<std::string, std::unique_ptr<Histogram>> histograms_;
  std::map<std::string, Formula> formulas_;
};

/// Builds GPU-wide DRAM components against one queue and one stats registry.
class DramBench {
 public:
  TestEventQueue events;
  DramStats stats;
  GpuConfig gpu;

  explicit DramBench(double clock_mhz = 1000.0) { gpu.clock_mhz = clock_mhz; }

  template <typename T>
  std::unique_ptr<T> make(const ParamOverrides& overrides = {}) {
    params_.push_back(resolve_params<T>(overrides));
    T::describe(schemas_.emplace_back());
    const BuildContext context{
        params_.back(), events, StatsScope(stats, "dram", &schemas_.back()), gpu, 1, -1};
    return std::make_unique<T>(context);
  }

 private:
  std::deque<Params> params_;  // BuildContext::params must outlive the component
  std::deque<Schema> schemas_;  // so must its statistics' declarations
};

/// The tokens of `client`'s responses, in the order they came.
inline std::vector<std::uint64_t> order(const RecordingClient& client) {
  std::vector<std::uint64_t> out;
  for (const RecordingClient::Response& r : client.responses) out.push_back(r.request.token);
  return out;
}

/// Records every DRAM command.
class CommandLog final : public memory_models::DramCommandObserver {
 public:
  void on_command(const memory_models::DramCommandRecord& c) override { commands.push_back(c); }

  /// The cycles of `command` in (channel, pseudo-channel), in issue order.
  std::vector<memory_models::MemCycle> times(memory_models::DramCommand command, std::uint32_t channel,
                                             std::uint32_t pc) const {
    std::vector<memory_models::MemCycle> out;
    for (const auto& c : commands)
      if (c.command == command && c.channel == channel && c.pseudo_channel == pc) out.push_back(c.at);
    return out;
  }
  /// Every command of `command`'s kind, in issue order.
  std::vector<memory_models::DramCommandRecord> all(memory_models::DramCommand command) const {
    std::vector<memory_models::DramCommandRecord> out;
    for (const auto& c : commands)
      if (c.command == command) out.push_back(c);
    return out;
  }
  std::vector<memory_models::DramCommandRecord> commands;
};

/// The first byte of column group `co` of `row` in the given bank under the default mapping
/// "RoCoBaBgStChPc" with 128 B granules: the mixed-radix number, most significant first.
inline Addr hbm3_address(const memory_models::Hbm3Organization& o, std::uint32_t stack,
                         std::uint32_t channel, std::uint32_t pc, std::uint32_t bg,
                         std::uint32_t bank, std::uint64_t row, std::uint64_t co = 0) {
  const std::uint64_t column_groups = static_cast<std::uint64_t>(o.columns) * o.burst_bytes() / 128;
  std::uint64_t g = row;
  g = g * column_groups + co;
  g = g * static_cast<std::uint64_t>(o.banks_per_group) + bank;
  g = g * static_cast<std::uint64_t>(o.bank_groups) + bg;
  g = g * static_cast<std::uint64_t>(o.stacks) + stack;
  g = g * static_cast<std::uint64_t>(o.channels_per_stack) + channel;
  g = g * static_cast<std::uint64_t>(o.pseudo_channels) + pc;
  return g * 128;
}

/// Keeps `depth` requests of `bytes` in flight, reading from 0 at addresses `stride` apart
/// (consecutive ones when `stride` is 0), until `total` have been sent. With `box_rows`, the
/// addresses are boxes of `box_rows` rows `stride` apart and one column of `bytes`, as the K loops
/// of `bands` CTAs read their own operand panels (`box_rows` rows each, one under the other):
/// box n is band n mod `bands` at its column n / `bands`.
class StreamClient final : public MemClient {
 public:
  StreamClient(MemoryPort& port, std::uint32_t depth, std::uint64_t total, std::uint32_t bytes,
               std::uint64_t stride = 0, std::uint64_t box_rows = 0, std::uint64_t bands = 1)
      : port_(port),
        depth_(depth),
        total_(total),
        bytes_(bytes),
        stride_(stride ? stride : bytes),
        box_rows_(box_rows),
        bands_(bands) {}

  void start(Cycle now) {
    first_send = now;
    while (sent_ < total_ && sent_ < depth_) send(now);
  }
  void on_response(Cycle now, const MemRequest&) override {
    ++received;
    last_response = now;
    if (sent_ < total_) send(now);
  }

  std::uint64_t received = 0;
  Cycle first_send = 0;
  Cycle last_response = 0;

 private:
  void send(Cycle now) {
    std::uint64_t address = sent_ * stride_;
    if (box_rows_) {
      const std::uint64_t box = sent_ / box_rows_, band = box % bands_, column = box / bands_;
      address = (band * box_rows_ + sent_ % box_rows_) * stride_ + column * bytes_;
    }
    port_.send(now, MemRequest{address, bytes_, 0, false, false, sent_, this});
    ++sent_;
  }
  MemoryPort& port_;
  std::uint64_t depth_, total_, sent_ = 0;
  std::uint32_t bytes_;
  std::uint64_t stride_, box_rows_, bands_;
};

}  // namespace simfa::test
