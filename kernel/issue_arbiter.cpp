#include "kernel/issue_arbiter.h"

#include <string>

#include "simfa/error.h"

namespace simfa::kernel {

IssueArbiter::IssueArbiter(EventQueue& events, std::vector<SmCore*> sms, Stepping stepping)
    : events_(events), sms_(std::move(sms)), stepping_(stepping) {
  if (sms_.size() > (std::size_t{1} << kSmBits))
    throw Error("internal: the issue arbiter serves at most 65536 SMs");
}

void IssueArbiter::request_issue(int sm, Cycle at) {
  // A phase that has already passed this SM (or finished) cannot serve it in the same cycle:
  // exactly what per-cycle stepping in SM order gives.
  if (phase_cycle_ != kNever && at <= phase_cycle_ && (phase_done_ || sm <= phase_sm_))
    at = phase_cycle_ + 1;
  if (at > kLastRequestCycle)
    throw Error("internal: an issue request for cycle " + std::to_string(at) +
                ", past the arbiter's 2^48 - 1");
  requests_.push(request_key(at, sm));
  if (stepping_ == Stepping::kEvent) arm(at);
}

void IssueArbiter::arm(Cycle at) {
  // Payload 1: the event's cycle has its bit in armed_.
  std::uint64_t recorded = 0;
  if (at - events_.now() < kArmedWindow) {
    std::uint64_t& word = armed_[at / 64 % armed_.size()];
    const std::uint64_t bit = std::uint64_t{1} << (at % 64);
    if (word & bit) return;
    word |= bit;
    recorded = 1;
  }
  events_.schedule(at, *this, recorded, Priority::kIssue);
}

void IssueArbiter::on_event(Cycle now, std::uint64_t payload) {
  ++phase_events_;
  run_phase(now);
  // Cleared after the phase: a request for this cycle made during it is served by it or moved
  // to the next cycle, and needs no event of this cycle.
  if (payload) armed_[now / 64 % armed_.size()] &= ~(std::uint64_t{1} << (now % 64));
}

void IssueArbiter::run_phase(Cycle now) {
  phase_cycle_ = now;
  phase_done_ = false;
  while (!requests_.empty() && cycle_of(requests_.top()) <= now) {
    const int sm = sm_of(requests_.top());
    requests_.pop();
    if (sm <= phase_sm_) continue;  // a duplicate request of an SM already served
    phase_sm_ = sm;
    sms_[static_cast<std::size_t>(sm)]->step(now);
  }
  phase_sm_ = -1;
  phase_done_ = true;
}

void IssueArbiter::step_all(Cycle now) {
  phase_cycle_ = now;
  phase_done_ = false;
  for (std::size_t i = 0; i < sms_.size(); ++i) {
    phase_sm_ = static_cast<int>(i);
    sms_[i]->step(now);
  }
  phase_sm_ = -1;
  phase_done_ = true;
  while (!requests_.empty() && cycle_of(requests_.top()) <= now) requests_.pop();
}

Cycle IssueArbiter::next_request() {
  return requests_.empty() ? kNever : cycle_of(requests_.top());
}

}  // namespace simfa::kernel
