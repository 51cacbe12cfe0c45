// simfa/clock.h: the conversions every component of a non-SM clock domain relies on.
#include <gtest/gtest.h>

#include <cstdint>

#include "simfa/clock.h"
#include "simfa/component.h"

namespace simfa {
namespace {

TEST(ClockDomain, CycleStartsRoundTripExactly) {
  const ClockDomain sm(1830);  // 1830 MHz: a cycle is 546.448... ps, never a whole femtosecond
  for (Cycle c : {Cycle{0}, Cycle{1}, Cycle{7}, Cycle{1'000'003}, Cycle{1} << 40})
    EXPECT_EQ(sm.cycle_at_or_after(sm.start_of(c)), c);
  EXPECT_EQ(sm.start_of(1830), 1'000'000'000u);  // 1830 cycles: exactly one microsecond
  EXPECT_EQ(sm.cycle_at_or_after(1), 1u);        // a femtosecond past cycle 0's start
}

TEST(ClockDomain, LatencyRoundsUpAndRateScales) {
  const ClockDomain memory(1704), sm_fast(1980), sm_slow(1290);
  // 294 memory cycles are 172.5 ns: 341.6 cycles at 1980 MHz, 222.6 at 1290.
  EXPECT_EQ(memory.latency_in(sm_fast, 294), 342u);
  EXPECT_EQ(memory.latency_in(sm_slow, 294), 223u);
  EXPECT_EQ(memory.latency_in(memory, 294), 294u);
  EXPECT_EQ(memory.latency_in(sm_fast, 0), 0u);
  // A slice's 0.21787 requests per memory cycle: 0.1875 per SM cycle at 1980, 0.2878 at 1290.
  EXPECT_NEAR(memory.rate_in(sm_fast, 0.21787), 0.18750, 1e-5);
  EXPECT_NEAR(memory.rate_in(sm_slow, 0.21787), 0.28780, 1e-5);
}

TEST(ClockDomain, MemoryDomainDefaultsToTheSmClock) {
  GpuConfig gpu;
  gpu.clock_mhz = 1290;
  EXPECT_EQ(gpu.memory_clock(), gpu.sm_clock());
  gpu.memory_clock_mhz = 1704;
  EXPECT_EQ(gpu.memory_clock().hz(), 1'704'000'000u);
  EXPECT_EQ(gpu.sm_clock().hz(), 1'290'000'000u);
}

}  // namespace
}  // namespace simfa
