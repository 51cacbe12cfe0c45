// The memory-hierarchy harness: the plugin harness (tests/plugins/engine_harness.h: manual event
// queue, stats registry, parameters from the component's schema, RecordingMemory as a fixed-
// latency fake for the next level down) plus what the hierarchy's levels need: a chosen seed and
// SM count, a client recording every response, and the declared per-slice statistics expanded.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine_harness.h"
#include "simfa/component.h"
#include "simfa/error.h"
#include "simfa/memory.h"

namespace simfa::test {

/// Sub-slot components by path, as the kernel hands them to a component (BuildContext::slots).
class TestSlots final : public SlotResolver {
 public:
  void add(std::string path, Component& component) {
    entries_.emplace_back(std::move(path), &component);
  }
  bool empty() const { return entries_.empty(); }
  Component& slot(std::string_view path) const override {
    for (const auto& [p, c] : entries_)
      if (p == path) return *c;
    throw Error("test: no component for sub-slot '" + std::string(path) + "'");
  }
  Component* find(std::string_view path) const override {
    for (const auto& [p, c] : entries_)
      if (p == path) return c;
    return nullptr;
  }

 private:
  std::vector<std::pair<std::string, Component*>> entries_;
};

/// Builds GPU-wide memory components against one queue and one stats registry.
class MemoryBench {
 public:
  TestEventQueue events;
  TestStats stats;
  GpuConfig gpu;
  TestSlots slots;  ///< given to every component made after they were added

  explicit MemoryBench(int sm_count = 132) { gpu.sm_count = sm_count; }

  /// A `T` at stats prefix `prefix`, seeded with `seed`.
  template <typename T>
  std::unique_ptr<T> make(const ParamOverrides& overrides = {}, std::uint64_t seed = 1,
                          const std::string& prefix = "c") {
    params_.push_back(resolve_params<T>(overrides));
    T::describe(schemas_.emplace_back());
    const SlotResolver* sub_slots = slots.empty() ? nullptr : &slots;
    const BuildContext context{
        params_.back(), events, StatsScope(stats, prefix, &schemas_.back()), gpu, seed, -1,
        sub_slots};
    return std::make_unique<T>(context);
  }

 private:
  std::deque<Params> params_;  // BuildContext::params must outlive the component
  std::deque<Schema> schemas_;  // so must its statistics' declarations
};

/// Records every response it is given, and every prefetch_response hint.
class RecordingClient final : public MemClient {
 public:
  struct Response {
    Cycle at;
    MemRequest request;
  };
  struct Hint {
    std::uint64_t token;
    std::size_t answered;  ///< responses received before the hint
  };
  void on_response(Cycle now, const MemRequest& request) override {
    responses.push_back({now, request});
  }
  void prefetch_response(const MemRequest& request) override {
    hints.push_back({request.token, responses.size()});
  }
  /// The cycle of the response with `token`; kNever when there is none.
  Cycle at(std::uint64_t token) const {
    for (const Response& r : responses)
      if (r.request.token == token) return r.at;
    return kNever;
  }
  std::vector<Response> responses;
  std::vector<Hint> hints;
};

inline MemRequest read_request(Addr addr, std::uint64_t token, MemClient& client,
                               std::uint16_t sm = 0, std::uint32_t bytes = 128) {
  return MemRequest{addr, bytes, sm, false, false, token, &client};
}
inline MemRequest write_request(Addr addr, std::uint64_t token, MemClient& client,
                                std::uint16_t sm = 0, std::uint32_t bytes = 128) {
  return MemRequest{addr, bytes, sm, true, false, token, &client};
}

/// The statistics `T` declares, prefixed, with each "[i]" expanded to [0] .. [count - 1].
template <typename T>
std::set<std::string> declared_stats_expanded(std::uint32_t count, const std::string& prefix = "c") {
  std::set<std::string> out;
  for (const std::string& name : declared_stats<T>(prefix)) {
    const auto at = name.find("[i]");
    if (at == std::string::npos) {
      out.insert(name);
      continue;
    }
    for (std::uint32_t i = 0; i < count; ++i)
      out.insert(name.substr(0, at) + "[" + std::to_string(i) + "]" + name.substr(at + 3));
  }
  return out;
}

}  // namespace simfa::test
