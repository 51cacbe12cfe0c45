// StepBatch: the steps that clients of a memory port ask it to run (MemoryPort::defer_step), each
// where the event it stands for would fire, many as one event. Header-only, for a memory port's
// own use: it never crosses a plugin boundary.
//
// A step deferred for cycle t stands for an event scheduled at the deferral for (t,
// Priority::kEngine). Events of one cycle and priority fire in the order they were scheduled, so
// the events of deferrals for one cycle with nothing scheduled between them would fire one after
// another: one event, scheduled at the first of them, runs them all in deferral order (a
// segment). A deferral for another cycle, or after anything else was scheduled
// (EventQueue::scheduled() moved), starts a new segment, whose event stands in its own place;
// with a queue that does not count, every deferral is a segment. So each step runs at the cycle
// and in the place of its event, and only the count of events fired changes.
#pragma once

#include <cstdint>
#include <vector>

#include "simfa/event_queue.h"
#include "simfa/memory.h"

namespace simfa {

class StepBatch final : private EventTarget {
 public:
  explicit StepBatch(EventQueue& events) : events_(events) {}
  StepBatch(const StepBatch&) = delete;
  StepBatch& operator=(const StepBatch&) = delete;

  /// Runs `client.on_step(when)` where an event scheduled now for (when, kEngine) would fire.
  void defer(Cycle when, MemClient& client) {
    const std::uint64_t scheduled = events_.scheduled();
    if (open_ == kNone || scheduled != after_open_ || when != open_cycle_ ||
        scheduled == EventQueue::kUncounted) {
      if (free_.empty()) {
        open_ = static_cast<std::uint32_t>(segments_.size());
        segments_.emplace_back();
      } else {
        open_ = free_.back();
        free_.pop_back();
      }
      events_.schedule(when, *this, open_, Priority::kEngine);
      after_open_ = events_.scheduled();
      open_cycle_ = when;
    }
    segments_[open_].push_back(&client);
  }

 private:
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};

  /// The steps of segment `payload`, in deferral order; a step deferring another for this very
  /// place (nothing scheduled since) joins the end.
  void on_event(Cycle now, std::uint64_t payload) override {
    const auto id = static_cast<std::uint32_t>(payload);
    for (std::size_t i = 0; i < segments_[id].size(); ++i) {
      // The next client's object, as the event queue fetches the next event's target: the
      // clients (engines of many SMs) take turns, so each finds its state cold.
      if (i + 1 < segments_[id].size()) __builtin_prefetch(segments_[id][i + 1]);
      segments_[id][i]->on_step(now);
    }
    segments_[id].clear();
    free_.push_back(id);
    if (open_ == id) open_ = kNone;
  }

  EventQueue& events_;
  // Pending segments' clients by segment (the event's payload), storage kept for reuse.
  std::vector<std::vector<MemClient*>> segments_;
  std::vector<std::uint32_t> free_;
  std::uint32_t open_ = kNone;    ///< the segment scheduled last, while pending
  std::uint64_t after_open_ = 0;  ///< scheduled() right after its event
  Cycle open_cycle_ = kNever;     ///< its cycle
};

}  // namespace simfa
