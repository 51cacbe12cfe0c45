// The discrete-event interface every component schedules through.
//
// Events are plain values (target, payload), never closures: scheduling allocates nothing on the
// hot path. Events fire in the total order (cycle, priority, insertion sequence).
#pragma once

#include <cstdint>

#include "simfa/types.h"

namespace simfa {

/// Same-cycle ordering classes. Lower fires first within a cycle.
enum class Priority : std::uint8_t {
  kMemory = 0,      ///< memory responses and engine completions
  kEngine = 1,      ///< engine-internal steps (TMA issue, tensor-core pipeline)
  kWake = 2,        ///< thread wake-ups
  kIssue = 3,       ///< SM issue: sees every completion of its cycle
};
inline constexpr int kPriorityCount = 4;

/// Receives events. `payload` is whatever the scheduler passed; its meaning is the target's.
class SIMFA_API EventTarget {
 public:
  virtual void on_event(Cycle now, std::uint64_t payload) = 0;

 protected:
  ~EventTarget() = default;
};

/// Handle to a scheduled event, for cancellation.
struct EventId {
  std::uint64_t seq = 0;
};

class SIMFA_API EventQueue {
 public:
  virtual ~EventQueue() = default;
  /// The cycle of the event being processed (or of the last one).
  virtual Cycle now() const = 0;
  /// Schedule `target.on_event(when, payload)`; `when` must be >= now().
  virtual EventId schedule(Cycle when, EventTarget& target, std::uint64_t payload = 0,
                           Priority priority = Priority::kMemory) = 0;
  /// Cancel a pending event. Returns false when it already fired or was cancelled.
  virtual bool cancel(EventId id) = 0;

  /// A scheduled() answer from a queue that does not count its events.
  static constexpr std::uint64_t kUncounted = ~std::uint64_t{0};
  /// How many events have been scheduled so far (the next insertion sequence number), or
  /// kUncounted. Two calls that answer the same number saw nothing scheduled between them: what
  /// StepBatch needs to run many targets' steps as one event in their events' order.
  virtual std::uint64_t scheduled() const { return kUncounted; }
};

}  // namespace simfa
