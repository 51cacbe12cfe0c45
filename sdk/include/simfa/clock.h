// Clock domains: exact, deterministic conversions between a domain's cycles, SM cycles and time.
//
// A GPU's clocks move independently. On the H200 the L2 slices, the L2 request coalescer and the
// frame-buffer partitions run at ~1704 MHz while the SM clock throttles from 1980 to ~1250 MHz
// under the power cap (validation/h200/clock_domains.csv, ncu `<unit>__cycles_elapsed.avg.
// per_second`). The event queue counts SM cycles (simfa::Cycle); a component of another domain
// states its latencies and rates in that domain's cycles (its schema's unit says which) and
// converts them here, once, when it is built.
//
// A frequency is rounded once to whole hertz; time is an integer count of femtoseconds; every
// conversion is integer arithmetic on 128-bit intermediates, so a run gives the same cycles on
// every machine.
#pragma once

#include <cmath>
#include <cstdint>

#include "simfa/int_math.h"  // Uint128
#include "simfa/types.h"

namespace simfa {

/// Femtoseconds since cycle 0 (2^64 fs is about 5 hours of simulated time).
using Femtoseconds = std::uint64_t;

inline constexpr std::uint64_t kFemtosecondsPerSecond = 1'000'000'000'000'000;

/// Nanoseconds (a manifest value) to whole femtoseconds, rounded to nearest.
inline Femtoseconds femtoseconds_from_ns(double ns) {
  return static_cast<Femtoseconds>(std::llround(ns * 1e6));
}

/// One clock: its frequency in whole hertz and the start time of each of its cycles.
class ClockDomain {
 public:
  explicit ClockDomain(double clock_mhz)
      : hz_(static_cast<std::uint64_t>(std::llround(clock_mhz * 1e6))) {}

  std::uint64_t hz() const { return hz_; }

  /// When cycle `c` starts, rounded down to a femtosecond.
  Femtoseconds start_of(Cycle c) const {
    return static_cast<Femtoseconds>(Uint128{c} * kFemtosecondsPerSecond / hz_);
  }

  /// The first cycle that starts at or after `t`. cycle_at_or_after(start_of(c)) == c.
  Cycle cycle_at_or_after(Femtoseconds t) const {
    return static_cast<Cycle>(mul_div_up(t, hz_, kFemtosecondsPerSecond));
  }

  /// A delay of `cycles` of this domain as whole cycles of `to`, rounded up (a latency is never
  /// shortened by the crossing). Equal clocks give `cycles` back.
  Cycle latency_in(const ClockDomain& to, std::uint64_t cycles) const {
    return static_cast<Cycle>(mul_div_up(cycles, to.hz_, hz_));
  }

  /// A rate of `per_cycle` events per cycle of this domain as events per cycle of `to`.
  double rate_in(const ClockDomain& to, double per_cycle) const {
    return per_cycle * static_cast<double>(hz_) / static_cast<double>(to.hz_);
  }

  friend bool operator==(const ClockDomain&, const ClockDomain&) = default;

 private:
  std::uint64_t hz_;
};

}  // namespace simfa
