#include "kernel/issue_arbiter.h"

#include <algorithm>
#include <bit>
#include <string>

#include "simfa/error.h"

namespace simfa::kernel {

IssueArbiter::IssueArbiter(EventQueue& events, std::vector<SmCore*> sms, Stepping stepping)
    : events_(events), sms_(std::move(sms)), stepping_(stepping) {
  if (sms_.size() > (std::size_t{1} << kSmBits))
    throw Error("internal: the issue arbiter serves at most 65536 SMs");
  words_ = std::max<std::size_t>(1, (sms_.size() + 63) / 64);
  // 4096 cycles for up to 256 SMs (128 KiB), fewer for more, at least 64.
  window_ = std::bit_floor(std::max<std::size_t>(64, std::min<std::size_t>(4096, 16384 / words_)));
  buckets_.assign(window_ * words_, 0);
}

void IssueArbiter::add_near(Cycle at, int sm) {
  std::uint64_t& word = bucket(at)[static_cast<std::size_t>(sm) / 64];
  const std::uint64_t bit = std::uint64_t{1} << (sm % 64);
  near_requests_ += (word & bit) == 0;
  word |= bit;
}

bool IssueArbiter::requested(Cycle now) const {
  if (!far_.empty() && cycle_of(far_.top()) <= now) return true;
  if (near_requests_ == 0) return false;
  const std::uint64_t* b = bucket(now);
  for (std::size_t w = 0; w < words_; ++w)
    if (b[w] != 0) return true;
  return false;
}

void IssueArbiter::request_issue(int sm, Cycle at) {
  // A phase that has already passed this SM (or finished) cannot serve it in the same cycle:
  // exactly what per-cycle stepping in SM order gives.
  if (phase_cycle_ != kNever && at <= phase_cycle_ && (phase_done_ || sm <= phase_sm_))
    at = phase_cycle_ + 1;
  if (at > kLastRequestCycle)
    throw Error("internal: an issue request for cycle " + std::to_string(at) +
                ", past the arbiter's 2^48 - 1");
  // Within the window every cycle's bucket is its own: the phases of the cycles before now have
  // emptied theirs, and no request is for a cycle before now.
  if (at - events_.now() < window_)
    add_near(at, sm);
  else
    far_.push(request_key(at, sm));
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
  while (!far_.empty() && cycle_of(far_.top()) <= now) {
    add_near(now, sm_of(far_.top()));
    far_.pop();
  }
  std::uint64_t* b = bucket(now);
  for (std::size_t w = 0; w < words_; ++w) {
    // Read again after every step: a step may ask for an SM further on in this phase.
    while (b[w] != 0) {
      const int sm = static_cast<int>(w * 64) + std::countr_zero(b[w]);
      b[w] &= b[w] - 1;
      --near_requests_;
      phase_sm_ = sm;
      sms_[static_cast<std::size_t>(sm)]->step(now);
    }
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
  while (!far_.empty() && cycle_of(far_.top()) <= now) far_.pop();
  std::uint64_t* b = bucket(now);
  for (std::size_t w = 0; w < words_; ++w) {
    near_requests_ -= static_cast<std::uint64_t>(std::popcount(b[w]));
    b[w] = 0;
  }
}

}  // namespace simfa::kernel
