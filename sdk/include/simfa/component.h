// The component base and what every component is built from.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "simfa/clock.h"
#include "simfa/error.h"
#include "simfa/event_queue.h"
#include "simfa/params.h"
#include "simfa/stats.h"
#include "simfa/types.h"

namespace simfa {

/// The `[gpu]` table of a manifest: limits every component may consult.
struct GpuConfig {
  std::string name;
  int sm_count = 1;
  double clock_mhz = 1000.0;  ///< the SM domain, which the event queue's cycles count
  /// The memory system's domain: the L2 slices, the request coalescer and the crossbar between
  /// them and the SMs. 0: the SM clock.
  double memory_clock_mhz = 0.0;
  std::int64_t smem_per_sm_bytes = 0;
  std::int64_t regs_per_sm = 0;
  int max_ctas_per_sm = 1;
  int max_warpgroups_per_sm = 1;

  ClockDomain sm_clock() const { return ClockDomain(clock_mhz); }
  ClockDomain memory_clock() const {
    return ClockDomain(memory_clock_mhz > 0 ? memory_clock_mhz : clock_mhz);
  }
};

/// How the run loop advances time: by events (default) or one cycle at a time (the paper's
/// Algorithm 1, kept to check that the event mode is exact).
enum class Stepping : std::uint8_t { kEvent, kReference };

class Component;
class InstructionSet;

/// The components built for a component's sub-slots (Schema::slot), by path relative to it:
/// "slice_map", or "l2.slice_map" for a grandchild. The kernel builds them first; the manifest
/// loader has checked that each has the slot's kind, so a static_cast to that kind's interface
/// is safe.
class SIMFA_API SlotResolver {
 public:
  /// Throws simfa::Error when nothing was built at `path`.
  virtual Component& slot(std::string_view path) const = 0;
  /// The component at `path`, or null when nothing was built there (an optional engine slot).
  virtual Component* find(std::string_view path) const = 0;

 protected:
  ~SlotResolver() = default;
};

/// Everything a factory receives. References stay valid for the component's lifetime.
struct BuildContext {
  const Params& params;
  EventQueue& events;
  StatsScope stats;
  const GpuConfig& gpu;
  std::uint64_t seed;  ///< derived from (manifest seed, component path): use for the PRNG
  int sm_index;        ///< the SM for per-SM components, -1 for GPU-wide ones
  const SlotResolver* slots = nullptr;  ///< sub-slot components; null when the schema has none
  /// The run's instruction table (simfa/instruction_set.h): Hopper's and the plugins'. Null:
  /// Hopper's alone (InstructionSet::hopper()).
  const InstructionSet* instructions = nullptr;
};

/// The sub-slot component at `path`, as the interface `T` of its kind.
template <typename T>
T& slot_as(const BuildContext& context, std::string_view path);

class SIMFA_API Component {
 public:
  virtual ~Component() = default;
  /// Called once after the last event, e.g. to turn accumulated state into statistics.
  virtual void finish(Cycle /*end*/) {}
};

template <typename T>
T& slot_as(const BuildContext& context, std::string_view path) {
  if (!context.slots) throw Error("internal: component has no sub-slots, asked for '" + std::string(path) + "'");
  return static_cast<T&>(context.slots->slot(path));
}

}  // namespace simfa
