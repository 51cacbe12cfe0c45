// The kernel's IssueClock: runs SM issue phases in SM-index order after every other event of a
// cycle, identically in event-driven and reference (per-cycle) stepping.
#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <utility>
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
  /// Earliest requested issue cycle not yet served, or kNever.
  Cycle next_request();
  /// How many issue-phase events have fired (event stepping).
  std::uint64_t phase_events() const { return phase_events_; }

 private:
  using Request = std::pair<Cycle, int>;  // (cycle, sm): served in this order
  void run_phase(Cycle now);
  void arm(Cycle at);

  EventQueue& events_;
  std::vector<SmCore*> sms_;
  Stepping stepping_;
  std::priority_queue<Request, std::vector<Request>, std::greater<>> requests_;
  // The phase in progress (or last run): requests for SMs it has passed move to the next cycle.
  Cycle phase_cycle_ = kNever;
  int phase_sm_ = -1;
  bool phase_done_ = true;
  Cycle armed_at_ = kNever;  // cycle of the single pending phase event
  EventId armed_event_{};
  std::uint64_t phase_events_ = 0;
};

}  // namespace simfa::kernel
