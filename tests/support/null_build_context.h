// What a frontend component needs to be built and nothing more: an event queue that never fires,
// a stats registry that keeps nothing, and components built from their schema's defaults with
// the keys a test gives, each on its own line of "w.toml" as the manifest loader hands them over.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "simfa/component.h"
#include "simfa/event_queue.h"
#include "simfa/params.h"
#include "simfa/stats.h"

namespace simfa::test {

class NullEvents final : public EventQueue {
 public:
  Cycle now() const override { return 0; }
  EventId schedule(Cycle, EventTarget&, std::uint64_t, Priority) override { return {}; }
  bool cancel(EventId) override { return false; }
};

class NullStats final : public StatsRegistry {
 public:
  Counter& counter(const std::string&, std::string_view, std::string_view) override {
    return counter_;
  }
  Histogram& histogram(const std::string&, std::string_view, std::string_view, std::uint64_t,
                       std::size_t) override {
    return histogram_;
  }
  void formula(const std::string&, std::string_view, std::string_view, Formula) override {}

 private:
  Counter counter_;
  Histogram histogram_{1, 1};
};

using Keys = std::vector<std::pair<std::string, ParamValue>>;

/// Builds workload components against a NullEvents and a NullStats.
struct NullBuildContext {
  NullEvents events;
  NullStats stats;
  GpuConfig gpu;

  /// A `T` from its schema's defaults and `keys`, key i on line 2 + i of "w.toml"; a parameter
  /// with no default that `keys` leaves out gets `no_default`.
  template <typename T>
  std::unique_ptr<T> build(const Keys& keys, const ParamValue& no_default) {
    Schema schema;
    T::describe(schema);
    std::vector<Params::Entry> entries;
    for (const ParamSpec& spec : schema.params()) {
      Params::Entry e{spec.name, spec.default_value.value_or(no_default), {}};
      for (std::size_t i = 0; i < keys.size(); ++i)
        if (keys[i].first == spec.name)
          e = {spec.name, keys[i].second,
               SourceLocation{"w.toml", static_cast<std::uint32_t>(2 + i), 1}};
      entries.push_back(std::move(e));
    }
    const Params params("workload", SourceLocation{"w.toml", 1, 1}, std::move(entries));
    return build<T>(params);
  }

  /// A `T` from `params` as given.
  template <typename T>
  std::unique_ptr<T> build(const Params& params) {
    BuildContext context{params, events, StatsScope(stats, "workload"), gpu, 1, -1};
    return std::make_unique<T>(context);
  }
};

}  // namespace simfa::test
