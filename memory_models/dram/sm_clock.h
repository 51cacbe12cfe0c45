// Exact conversion between SM cycles and absolute time for the DRAM backends.
//
// DRAM timing lives in nanoseconds and memory-clock cycles, never in SM cycles: the H200's SM
// clock moves between 1250 and 1980 MHz under its power limit, and a run simulates at the clock
// the measurement ran at (`--set gpu.clock_mhz=...`). Time is kept as an integer count of
// femtoseconds; the SM clock is rounded once to whole hertz. Every conversion is integer
// arithmetic on 128-bit intermediates, so a run gives the same cycles on every machine.
#pragma once

#include <cmath>
#include <cstdint>

#include "simfa/types.h"

namespace simfa::memory_models {

/// Femtoseconds since cycle 0 (2^64 fs is about 5 hours of simulated time).
using Femtoseconds = std::uint64_t;

/// Products of times and frequencies overflow 64 bits; GCC's 128-bit integer holds them
/// (__extension__ keeps -Wpedantic quiet about the non-standard type).
__extension__ typedef unsigned __int128 Uint128;

inline constexpr std::uint64_t kFemtosecondsPerSecond = 1'000'000'000'000'000;

/// Nanoseconds (a manifest value) to whole femtoseconds, rounded to nearest.
inline Femtoseconds femtoseconds_from_ns(double ns) {
  return static_cast<Femtoseconds>(std::llround(ns * 1e6));
}

class SmClock {
 public:
  explicit SmClock(double clock_mhz) : hz_(static_cast<std::uint64_t>(std::llround(clock_mhz * 1e6))) {}

  /// When SM cycle `c` starts, rounded down to a femtosecond.
  Femtoseconds start_of(Cycle c) const {
    return static_cast<Femtoseconds>(Uint128{c} * kFemtosecondsPerSecond / hz_);
  }

  /// The first SM cycle that starts at or after `t`. cycle_at_or_after(start_of(c)) == c.
  Cycle cycle_at_or_after(Femtoseconds t) const {
    const Uint128 scaled = Uint128{t} * hz_;
    return static_cast<Cycle>((scaled + kFemtosecondsPerSecond - 1) / kFemtosecondsPerSecond);
  }

 private:
  std::uint64_t hz_;
};

}  // namespace simfa::memory_models
