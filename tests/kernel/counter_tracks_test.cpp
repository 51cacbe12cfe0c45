// Counter tracks against a registry whose counters the test moves by hand, with a 10-cycle
// window on a 1000 MHz clock (1 byte per cycle = 1 GB/s).
#include "kernel/counter_tracks.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace simfa::kernel {
namespace {

const CounterTracks::Track& track(const CounterTracks& t, const std::string& name) {
  for (const CounterTracks::Track& x : t.tracks())
    if (x.name == name) return x;
  throw std::runtime_error("no track " + name);
}

std::vector<double> values(const CounterTracks& t, const std::string& name) {
  std::vector<double> out;
  for (const CounterTracks::Point& p : t.series(track(t, name))) out.push_back(p.value);
  return out;
}

TEST(CounterTracks, WindowsSumToTheTotals) {
  StatsRegistryImpl stats;
  Counter& busy = stats.counter("sm[0].tensor_core.busy_cycles", "cycles", "");
  Counter& tma_bytes = stats.counter("sm[0].tma.bytes", "bytes", "");
  Counter& landed = stats.counter("sm[0].tma_completed_bytes", "bytes", "");
  Counter& hits = stats.counter("memory.l2.hits", "requests", "");
  Counter& misses = stats.counter("memory.l2.misses", "requests", "");
  Counter& llc_read = stats.counter("memory.llc_read_bytes", "bytes", "");
  stats.counter("memory.llc_write_bytes", "bytes", "");
  Counter& dram_read = stats.counter("memory.dram_read_bytes", "bytes", "");
  stats.counter("memory.dram_write_bytes", "bytes", "");

  CounterTracks t(stats, {0}, 1, 1000.0, 10);
  // Six tracks: SM 0's two and four GPU-wide (the all-SM TMA one among them).
  EXPECT_EQ(t.tracks().size(), 6u);
  t.sample_until(0);
  // Cycle 0: a WGMMA of 25 cycles issues (counted at once), a TMA op of 8192 bytes leaves.
  busy.add(25);
  tma_bytes.add(8192);
  t.sample_until(14);  // boundary 10
  // Cycle 14: 3 L2 hits and a miss, 640 bytes read from the L2 and 100 from DRAM.
  hits.add(3);
  misses.add(1);
  llc_read.add(640);
  dram_read.add(100);
  t.sample_until(27);  // boundary 20
  landed.add(8192);    // cycle 27: the op lands
  t.finish(30);

  // The tensor core runs the 25 cycles in order: a full window, a full one, half of the last.
  EXPECT_EQ(values(t, "SM 0 tensor core busy"), (std::vector<double>{100, 100, 50, 0}));
  // Bytes in flight at each window's start and at the end.
  EXPECT_EQ(values(t, "SM 0 TMA bytes in flight"), (std::vector<double>{0, 8192, 8192, 0}));
  EXPECT_EQ(values(t, "L2 hit rate"), (std::vector<double>{0, 75, 0, 0}));
  EXPECT_EQ(values(t, "L2 bandwidth"), (std::vector<double>{0, 64, 0, 0}));    // 640 B / 10
  EXPECT_EQ(values(t, "DRAM bandwidth"), (std::vector<double>{0, 10, 0, 0}));  // 100 B / 10
  const std::vector<CounterTracks::Point> points = t.series(track(t, "DRAM bandwidth"));
  EXPECT_EQ(points.back().begin, 30u);
}

TEST(CounterTracks, AShortLastWindowAndMissingStatistics) {
  StatsRegistryImpl stats;
  Counter& busy = stats.counter("sm[3].tensor_core.busy_cycles", "cycles", "");
  CounterTracks t(stats, {3}, 4, 1000.0, 100);
  ASSERT_EQ(t.tracks().size(), 1u);  // only the statistics that exist become tracks
  t.sample_until(0);
  busy.add(30);
  t.finish(120);  // windows [0, 100) and [100, 120)
  EXPECT_EQ(values(t, "SM 3 tensor core busy"), (std::vector<double>{30, 0, 0}));
  const std::vector<CounterTracks::Point> points = t.series(t.tracks()[0]);
  EXPECT_EQ(points[1].begin, 100u);
  EXPECT_EQ(points[2].begin, 120u);
}

}  // namespace
}  // namespace simfa::kernel
