// Counter tracks against SMs whose meters and a memory whose cache use and traffic the test moves
// by hand, with a 10-cycle window on a 1000 MHz clock (1 byte per cycle = 1 GB/s).
#include "kernel/counter_tracks.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace simfa::kernel {
namespace {

/// An SM that runs nothing and reports the meters the test sets, as sm.warpgroup names them.
class MeteredSm final : public SmCore {
 public:
  void connect(const SmWiring&) override {}
  bool can_accept(const CtaProgram&) const override { return false; }
  bool fits_empty(const CtaProgram&, std::string&) const override { return false; }
  void accept(Cycle, std::unique_ptr<CtaProgram>) override {}
  void step(Cycle) override {}
  std::size_t resident_ctas() const override { return 0; }
  void report_blocked(std::vector<BlockedThread>&) const override {}
  void meters(std::vector<SmMeter>& out) const override {
    out.push_back({"tensor core", SmMeter::Kind::kPipelineBusy, busy});
    out.push_back({"TMA", SmMeter::Kind::kBusy, 0});  // a summary line, no track
    out.push_back({"TMA bytes in flight", SmMeter::Kind::kLevel, tma_bytes, landed, "bytes"});
    out.push_back({"mb_wait", SmMeter::Kind::kStall, 7});  // the summary's stall line, no track
  }
  std::uint64_t busy = 0, tma_bytes = 0, landed = 0;
};

/// A memory that takes nothing and reports the cache use and traffic the test sets, or none
/// without a cache or, for a part of a hierarchy, traffic.
class MeteredMemory final : public MemoryPort {
 public:
  MeteredMemory(bool cache, bool totals) : cache_(cache), totals_(totals) {}
  void send(Cycle, const MemRequest&) override {}
  std::optional<CacheUse> cache_use() const override {
    return cache_ ? std::optional<CacheUse>(use) : std::nullopt;
  }
  std::optional<MemoryTraffic> traffic() const override {
    return totals_ ? std::optional<MemoryTraffic>(bytes) : std::nullopt;
  }
  CacheUse use;
  MemoryTraffic bytes;

 private:
  bool cache_, totals_;
};

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
  MeteredSm sm;
  MeteredMemory memory(true, true);
  CounterTracks t({&sm}, memory, {0}, 1000.0, 10);
  // Six tracks: SM 0's two and four GPU-wide (the all-SM TMA one among them).
  EXPECT_EQ(t.tracks().size(), 6u);
  t.sample_until(0);
  // Cycle 0: a WGMMA of 25 cycles issues (counted at once), a TMA op of 8192 bytes leaves.
  sm.busy += 25;
  sm.tma_bytes += 8192;
  t.sample_until(14);  // boundary 10
  // Cycle 14: 3 L2 hits and a miss, 640 bytes read from the L2 and 60 written, 100 read from
  // DRAM.
  memory.use.hits += 3;
  memory.use.misses += 1;
  memory.bytes.llc.read += 640;
  memory.bytes.llc.write += 60;
  memory.bytes.dram.read += 100;
  t.sample_until(27);  // boundary 20
  sm.landed += 8192;   // cycle 27: the op lands
  t.finish(30);

  // The tensor core runs the 25 cycles in order: a full window, a full one, half of the last.
  EXPECT_EQ(values(t, "SM 0 tensor core busy"), (std::vector<double>{100, 100, 50, 0}));
  // Bytes in flight at each window's start and at the end.
  EXPECT_EQ(values(t, "SM 0 TMA bytes in flight"), (std::vector<double>{0, 8192, 8192, 0}));
  EXPECT_EQ(values(t, "TMA bytes in flight (all SMs)"), (std::vector<double>{0, 8192, 8192, 0}));
  EXPECT_EQ(values(t, "L2 hit rate"), (std::vector<double>{0, 75, 0, 0}));
  EXPECT_EQ(values(t, "L2 bandwidth"), (std::vector<double>{0, 70, 0, 0}));    // 700 B / 10
  EXPECT_EQ(values(t, "DRAM bandwidth"), (std::vector<double>{0, 10, 0, 0}));  // 100 B / 10
  const std::vector<CounterTracks::Point> points = t.series(track(t, "DRAM bandwidth"));
  EXPECT_EQ(points.back().begin, 30u);
}

TEST(CounterTracks, AShortLastWindowAndNoMemoryTracks) {
  std::vector<MeteredSm> sms(4);
  const MeteredMemory memory(false, false);
  CounterTracks t({&sms[0], &sms[1], &sms[2], &sms[3]}, memory, {3}, 1000.0, 100);
  // SM 3's two and the TMA level over the four SMs; the memory has no cache and reports no
  // traffic, so no L2 or DRAM track.
  ASSERT_EQ(t.tracks().size(), 3u);
  t.sample_until(0);
  sms[3].busy += 30;
  sms[1].tma_bytes += 100;  // in flight on SM 1 alone: only the all-SM track sees it
  t.finish(120);            // windows [0, 100) and [100, 120)
  EXPECT_EQ(values(t, "SM 3 tensor core busy"), (std::vector<double>{30, 0, 0}));
  EXPECT_EQ(values(t, "SM 3 TMA bytes in flight"), (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(values(t, "TMA bytes in flight (all SMs)"), (std::vector<double>{0, 100, 100}));
  const std::vector<CounterTracks::Point> points = t.series(t.tracks()[0]);
  EXPECT_EQ(points[1].begin, 100u);
  EXPECT_EQ(points[2].begin, 120u);
}

}  // namespace
}  // namespace simfa::kernel
