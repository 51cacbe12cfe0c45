// Busy time from intervals: counts the cycles during which at least one unit of work is in
// flight, from begin/end notifications instead of per-cycle ticking.
#pragma once

#include <cstdint>

#include "simfa/stats.h"
#include "simfa/types.h"

namespace simfa::engines {

class BusyTime {
 public:
  explicit BusyTime(Counter& cycles) : cycles_(&cycles) {}

  /// The busy cycles counted so far (the counter's value).
  std::uint64_t cycles() const { return cycles_->value(); }
  void begin(Cycle now) {
    if (active_++ == 0) since_ = now;
  }
  void end(Cycle now) {
    if (--active_ == 0) cycles_->add(now - since_);
  }
  /// Closes the open interval at the end of the run (a watchdog stop leaves work in flight).
  void finish(Cycle end) {
    if (active_ > 0 && end > since_) cycles_->add(end - since_);
  }

 private:
  Counter* cycles_;
  std::uint64_t active_ = 0;
  Cycle since_ = 0;
};

}  // namespace simfa::engines
