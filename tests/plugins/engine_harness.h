// A small harness for testing one plugin component alone (STYLE.md, Tests): a manual event queue
// on std::priority_queue with the kernel's total order (cycle, priority, insertion sequence),
// a stats registry, parameters resolved from the component's own schema, and recording fakes for
// the ports and clients a component talks to.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <queue>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "simfa/burst_wheel.h"
#include "simfa/component.h"
#include "simfa/core.h"
#include "simfa/event_queue.h"
#include "simfa/memory.h"
#include "simfa/params.h"
#include "simfa/stats.h"
#include "simfa/step_batch.h"
// Relative: benches/memory_bench.cpp has only tests/plugins on its include path.
#include "../support/manual_event_queue.h"
#include "../support/test_stats.h"

namespace simfa::test {

// The names tests/memory and benches/memory_bench.cpp build on.
using TestEventQueue = ManualEventQueue;

using ParamOverrides = std::vector<std::pair<std::string, ParamValue>>;

/// `T`'s parameters: the schema's defaults, with `overrides` applied. An override of an
/// undeclared name, of the wrong type or outside the declared range throws.
template <typename T>
Params resolve_params(const ParamOverrides& overrides) {
  Schema schema;
  T::describe(schema);
  std::vector<Params::Entry> entries;
  for (const ParamSpec& spec : schema.params()) {
    if (!spec.default_value) throw std::logic_error("no default for " + spec.name);
    entries.push_back({spec.name, *spec.default_value, {}});
  }
  for (const auto& [name, value] : overrides) {
    const ParamSpec* spec = schema.find(name);
    if (!spec) throw std::logic_error("undeclared parameter " + name);
    if (value.index() != spec->default_value->index())
      throw std::logic_error("wrong type for " + name);
    double v = 0;
    if (const auto* i = std::get_if<std::int64_t>(&value)) v = static_cast<double>(*i);
    if (const auto* d = std::get_if<double>(&value)) v = *d;
    if ((spec->min && v < *spec->min) || (spec->max && v > *spec->max))
      throw std::logic_error("out of range: " + name);
    for (auto& e : entries)
      if (e.name == name) e.value = value;
  }
  return Params("test", SourceLocation{"test.toml", 1, 1}, std::move(entries));
}

/// Builds components against one queue and one stats registry, as the kernel would.
class Bench {
 public:
  TestEventQueue events;
  TestStats stats;
  GpuConfig gpu;

  /// A `T` at stats prefix `prefix`, for SM `sm` (-1: GPU-wide).
  template <typename T>
  std::unique_ptr<T> make(const ParamOverrides& overrides = {}, int sm = 0,
                          const std::string& prefix = "c") {
    params_.push_back(resolve_params<T>(overrides));
    T::describe(schemas_.emplace_back());
    const BuildContext context{
        params_.back(), events, StatsScope(stats, prefix, &schemas_.back()), gpu, 1, sm};
    return std::make_unique<T>(context);
  }

 private:
  std::deque<Params> params_;  // BuildContext::params must outlive the component
  std::deque<Schema> schemas_;  // so must its statistics' declarations
};

/// The statistics `T` declares, prefixed as Bench::make registers them.
template <typename T>
std::set<std::string> declared_stats(const std::string& prefix = "c") {
  Schema schema;
  T::describe(schema);
  std::set<std::string> out;
  for (const StatSpec& s : schema.stats()) out.insert(prefix + "." + s.name);
  return out;
}

/// Every parameter documented, defaulted, and ranged when numeric (STYLE.md: one declaration).
template <typename T>
std::string schema_problems() {
  Schema schema;
  T::describe(schema);
  std::string problems;
  std::set<std::string> seen;
  for (const ParamSpec& p : schema.params()) {
    if (!seen.insert(p.name).second) problems += p.name + ": declared twice; ";
    if (p.doc.empty()) problems += p.name + ": no doc; ";
    if (!p.default_value) problems += p.name + ": no default; ";
    const bool numeric = p.type == ParamType::kInt || p.type == ParamType::kFloat ||
                         p.type == ParamType::kSize;
    if (numeric && (!p.min || !p.max)) problems += p.name + ": no range; ";
    if (numeric && p.unit.empty()) problems += p.name + ": no unit; ";
  }
  for (const StatSpec& s : schema.stats())
    if (s.doc.empty() || s.unit.empty()) problems += s.name + ": stat without unit or doc; ";
  return problems;
}

// ---- recording fakes ---------------------------------------------------------------------------

/// A memory port answering every request `latency` cycles after it was sent, recording each one.
class RecordingMemory final : public MemoryPort, private EventTarget {
 public:
  struct Sent {
    Cycle at;
    MemRequest request;
  };

  RecordingMemory(EventQueue& events, Cycle latency) : events_(events), latency_(latency) {}
  void send(Cycle now, const MemRequest& request) override {
    sent.push_back({now, request});
    max_in_flight = std::max(max_in_flight, ++in_flight_);
    events_.schedule(now + latency_, *this, sent.size() - 1, Priority::kMemory);
  }
  /// From now on the port runs its clients' steps (MemoryPort::defer_step) through a StepBatch;
  /// before the clients connect, which is when they ask.
  void run_steps() { steps_.emplace(events_); }
  bool runs_steps() const override { return steps_.has_value(); }
  void defer_step(Cycle when, MemClient& client) override { steps_->defer(when, client); }

  // The census of SMs with loads in flight (MemoryPort::count_loading_sm): the engine's own
  // count, and `other_sms` loading beside it.
  void count_loading_sm(int delta) override { census += delta; }
  std::uint32_t sms_loading() const override {
    return static_cast<std::uint32_t>(census) + other_sms;
  }

  std::vector<Sent> sent;
  std::uint32_t max_in_flight = 0;
  bool answers_from_dram = false;  ///< what every response's from_dram says
  int census = 0;
  std::uint32_t other_sms = 0;

 private:
  void on_event(Cycle now, std::uint64_t payload) override {
    --in_flight_;
    MemRequest request = sent[payload].request;
    request.from_dram = answers_from_dram;
    request.client->on_response(now, request);
  }

  EventQueue& events_;
  Cycle latency_;
  std::uint32_t in_flight_ = 0;
  std::optional<StepBatch> steps_;
};

/// A RecordingMemory behind a BurstWheel: it takes bursts (MemoryPort::send_burst), whose lines
/// reach `lines` at their cycles.
class BurstRecordingMemory final : public MemoryPort {
 public:
  BurstRecordingMemory(EventQueue& events, Cycle latency)
      : lines(events, latency), wheel_(events, lines) {}
  void send(Cycle now, const MemRequest& request) override { lines.send(now, request); }
  bool accepts_bursts() const override { return true; }
  void send_burst(Cycle now, const Burst& burst) override {
    ++bursts;
    wheel_.book(now, burst);
  }

  RecordingMemory lines;
  std::uint32_t bursts = 0;

 private:
  BurstWheel wheel_;
};

/// A port of fixed latency (MemoryPort::fixed_latency) whose clients time their lines
/// themselves: it records each counted line's cycle from the runs it is sent, and answers none.
class CountingMemory final : public MemoryPort {
 public:
  struct Counted {
    Cycle at;
    MemRequest request;  ///< without its address, which a counted run does not carry
  };
  explicit CountingMemory(Cycle latency) : latency_(latency) {}
  void send(Cycle /*now*/, const MemRequest& /*request*/) override { ++sent; }
  std::optional<Cycle> fixed_latency() const override { return latency_; }
  void send_counted(Cycle now, const Burst& burst) override {
    ++runs;
    if (burst.first < now) ++runs_in_the_past;
    for (std::uint32_t i = 0; i < burst.count; ++i)
      lines.push_back({burst.cycle_of(i), burst.request});
  }

  std::vector<Counted> lines;
  std::uint32_t runs = 0;
  std::uint32_t runs_in_the_past = 0;  ///< runs whose first line's cycle was before their send
  std::uint32_t sent = 0;              ///< lines sent to be answered: none expected

 private:
  Cycle latency_;
};

class RecordingTmaClient final : public TmaClient {
 public:
  struct Done {
    Cycle at;
    std::uint64_t token;
    std::uint32_t bytes;
    friend bool operator==(const Done&, const Done&) = default;
    friend std::ostream& operator<<(std::ostream& os, const Done& d) {
      return os << "{at " << d.at << ", token " << d.token << ", bytes " << d.bytes << "}";
    }
  };
  void on_tma_complete(Cycle now, std::uint64_t token, std::uint32_t bytes) override {
    done.push_back({now, token, bytes});
  }
  std::vector<Done> done;
};

class RecordingTensorClient final : public TensorCoreClient {
 public:
  void on_wgmma_complete(Cycle now, std::uint64_t token) override {
    completed.emplace_back(now, token);
  }
  void on_wgmma_slot_free(Cycle now) override { slot_free.push_back(now); }
  std::vector<std::pair<Cycle, std::uint64_t>> completed;
  std::vector<Cycle> slot_free;
};

}  // namespace simfa::test
