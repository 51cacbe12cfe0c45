// The kernel's IssueClock: runs SM issue phases in SM-index order after every other event of a
// cycle, identically in event-driven and reference (per-cycle) stepping.
//
// In event stepping every cycle some SM asked to issue at gets one phase event, scheduled when
// the first request for that cycle arrives and never cancelled: a request is only removed by the
// phase of its own cycle (or a later one), so each cycle with a request has its phase whatever
// else is asked meanwhile. One event armed at the earliest request, cancelled whenever an earlier
// one came, ran the same phases; its cancelled entries cost the event queue 16-18% of a run
// (docs/performance.md).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

#include "simfa/core.h"
#include "simfa/event_queue.h"

namespace simfa::kernel {

class IssueArbiter final : public IssueClock, public EventTarget {
 public:
  /// In reference stepping no events are scheduled: the run loop steps every SM every cycle
  /// and uses pending() only to know whether any SM still expects to issue.
  IssueArbiter(EventQueue& events, std::vector<SmCore*> sms, Stepping stepping);

  void request_issue(int sm, Cycle at) override;
  void on_event(Cycle now, std::uint64_t payload) override;

  /// Reference stepping: the issue phase of `now` for every SM.
  void step_all(Cycle now);
  /// Whether some SM asked to issue at `now` (or earlier) and has not been served.
  bool requested(Cycle now) const;
  /// Whether any SM asked to issue and has not been served.
  bool any_request() const { return near_requests_ != 0 || !far_.empty(); }
  /// How many of the arbiter's events have fired (event stepping).
  std::uint64_t phase_events() const { return phase_events_; }

 private:
  // A request past the buckets' window as one integer, (cycle << kSmBits) | sm, so that the heap
  // orders (cycle, sm) with one comparison a step.
  static constexpr int kSmBits = 16;
  static constexpr Cycle kLastRequestCycle = (Cycle{1} << (64 - kSmBits)) - 1;
  static std::uint64_t request_key(Cycle at, int sm) {
    return at << kSmBits | static_cast<std::uint64_t>(sm);
  }
  static Cycle cycle_of(std::uint64_t key) { return key >> kSmBits; }
  static int sm_of(std::uint64_t key) {
    return static_cast<int>(key & ((std::uint64_t{1} << kSmBits) - 1));
  }
  /// The SMs asking to issue at `at`, one bit each (`at` within the window of now).
  std::uint64_t* bucket(Cycle at) { return &buckets_[(at & (window_ - 1)) * words_]; }
  const std::uint64_t* bucket(Cycle at) const { return &buckets_[(at & (window_ - 1)) * words_]; }
  /// Marks `sm` in the bucket of `at`.
  void add_near(Cycle at, int sm);
  void run_phase(Cycle now);
  // Schedules the phase event of cycle `at` unless it is already scheduled.
  void arm(Cycle at);

  // Cycles within kArmedWindow of now() whose phase event is scheduled, one bit each at
  // `cycle % kArmedWindow` (two such cycles never share a bit). A request further ahead, rare
  // (a long BUBBLE), schedules its event unrecorded: a second event of a cycle finds no request
  // left at or before it and does nothing.
  static constexpr Cycle kArmedWindow = 4096;
  std::array<std::uint64_t, kArmedWindow / 64> armed_{};

  EventQueue& events_;
  std::vector<SmCore*> sms_;
  Stepping stepping_;
  // The requests of the next `window_` cycles (a power of two) as one bucket of `words_` words a
  // cycle, at `cycle % window_`: a phase visits its SMs in index order by scanning its bucket's
  // bits, and a repeated request costs nothing. A heap of them was most of a phase's time (each
  // pop a sift through some thousand entries; docs/performance.md §20). Requests further ahead
  // (a long BUBBLE) wait in `far_` and join their bucket when their phase runs.
  std::size_t words_;
  Cycle window_;
  std::vector<std::uint64_t> buckets_;
  std::uint64_t near_requests_ = 0;  ///< bits set in the buckets
  std::priority_queue<std::uint64_t, std::vector<std::uint64_t>, std::greater<>> far_;
  // The phase in progress (or last run): requests for SMs it has passed move to the next cycle.
  Cycle phase_cycle_ = kNever;
  int phase_sm_ = -1;
  bool phase_done_ = true;
  std::uint64_t phase_events_ = 0;
};

}  // namespace simfa::kernel
