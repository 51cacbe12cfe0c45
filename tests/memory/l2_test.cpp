// l2.unified and l2.remote_copy alone: a fixed-latency fake DRAM (RecordingMemory) below, a
// recording client above, the manual event queue. Every expected cycle is derived next to it.
// Timing (sliced_cache.h): a request taken at cycle a is answered at a + H on a hit and at
// a + D + H on a miss (DRAM read sent at a, fill at a + D); far requests add far_latency.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "l2_bench.h"
#include "linear_slice_map.h"
#include "memory_harness.h"
#include "remote_copy_l2.h"
#include "simfa/error.h"
#include "srrip_replacement.h"
#include "unified_l2.h"
#include "xor_slice_map.h"

namespace simfa::memory_models {
namespace {

using test::L2Bench;
using test::ParamOverrides;
using test::read_request;
using test::RecordingClient;
using test::RecordingMemory;
using test::write_request;

constexpr std::uint32_t kLine = 128;

ParamOverrides with(ParamOverrides base, const ParamOverrides& more) {
  for (const auto& kv : more) base.push_back(kv);
  return base;
}

// One slice, hit latency 10, one request per cycle.
ParamOverrides small(std::int64_t assoc, std::int64_t sets) {
  return {{"slices", std::int64_t{1}},
          {"assoc", assoc},
          {"size", assoc * sets * kLine},
          {"hit_latency", std::int64_t{10}},
          {"requests_per_cycle", 1.0}};
}

// An L2 of type T wired to a slice map and a fake DRAM of latency `dram_latency`.
template <typename T, typename Map = LinearSliceMap, typename Policy = LruReplacement>
struct Rig {
  explicit Rig(const ParamOverrides& overrides, Cycle dram_latency = 100, std::uint64_t seed = 1,
               int sm_count = 132)
      : bench(sm_count),
        l2(bench.template make<T>(overrides, seed)),
        map(bench.template make<Map>()),
        dram(bench.events, dram_latency) {
    l2->connect(*map, dram);
  }
  /// Sends `request` at cycle `at` (as an engine would, after that cycle's memory events).
  void send_at(Cycle at, const MemRequest& request) {
    bench.events.call(at, Priority::kEngine, [this, request](Cycle now) { l2->send(now, request); });
  }
  std::uint64_t stat(const std::string& name) const { return bench.stats.value("c." + name); }

  L2Bench<Policy> bench;
  std::unique_ptr<T> l2;
  std::unique_ptr<Map> map;
  RecordingMemory dram;
  RecordingClient client;
};

/// A request the L2 sent to DRAM, as a test expects it.
struct SentToDram {
  Cycle at;
  Addr addr;
  std::uint32_t bytes;
  bool write;
};

void expect_sent(const RecordingMemory& dram, const std::vector<SentToDram>& expected) {
  ASSERT_EQ(dram.sent.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(dram.sent[i].at, expected[i].at) << i;
    EXPECT_EQ(dram.sent[i].request.addr, expected[i].addr) << i;
    EXPECT_EQ(dram.sent[i].request.bytes, expected[i].bytes) << i;
    EXPECT_EQ(dram.sent[i].request.write, expected[i].write) << i;
  }
}

// ---- l2.unified ---------------------------------------------------------------------------------

TEST(UnifiedL2, HitLatencyExactAndMissIsHitPlusDram) {
  Rig<UnifiedL2, XorSliceMap> rig({}, 500);  // defaults: hit latency 200
  const Addr a = 0x12345 * kLine;
  rig.send_at(0, read_request(a, 1, rig.client));
  rig.send_at(1000, read_request(a, 2, rig.client));
  rig.bench.events.run();
  // Miss: taken at 0, DRAM read at 0 answered at 500, response at 500 + 200 = 700.
  EXPECT_EQ(rig.client.at(1), 700u);
  // Hit: taken at 1000, answered at 1000 + 200.
  EXPECT_EQ(rig.client.at(2), 1200u);
  ASSERT_EQ(rig.dram.sent.size(), 1u);
  EXPECT_EQ(rig.dram.sent[0].at, 0u);
  EXPECT_EQ(rig.dram.sent[0].request.addr, a);
  EXPECT_EQ(rig.dram.sent[0].request.bytes, kLine);
  EXPECT_FALSE(rig.dram.sent[0].request.write);
  EXPECT_EQ(rig.stat("hits"), 1u);
  EXPECT_EQ(rig.stat("misses"), 1u);
  EXPECT_EQ(rig.stat("llc_read_bytes"), 256u);
  // The request comes back untouched.
  EXPECT_EQ(rig.client.responses[0].request.addr, a);
  EXPECT_EQ(rig.client.responses[0].request.client, &rig.client);
  EXPECT_TRUE(rig.client.responses[0].request.from_dram);  // the miss fetched its line
  EXPECT_FALSE(rig.client.responses[1].request.from_dram);
  // Events: two sends, one DRAM response, two responses: nothing ticks while idle.
  EXPECT_EQ(rig.bench.events.fired(), 5u);
}

TEST(UnifiedL2, LruEvictsTheLeastRecentlyUsedWay) {
  // One slice, 2 ways, 2 sets: set = (line / 1) mod 2, so lines 0, 2, 4 share set 0.
  Rig<UnifiedL2> rig(small(2, 2));
  const std::vector<std::uint64_t> lines = {0, 2, 0, 4, 0, 2, 4};
  for (std::size_t i = 0; i < lines.size(); ++i)
    rig.send_at(1000 * i, read_request(lines[i] * kLine, i, rig.client));
  rig.bench.events.run();
  // 0 miss, 2 miss, 0 hit (2 is now LRU), 4 miss evicts 2, 0 hit (4 is LRU), 2 miss evicts 4,
  // 4 miss evicts 0.
  std::vector<Addr> fetched;
  for (const auto& s : rig.dram.sent) fetched.push_back(s.request.addr / kLine);
  EXPECT_EQ(fetched, (std::vector<Addr>{0, 2, 4, 2, 4}));
  const std::vector<Cycle> latency = {110, 110, 10, 110, 10, 110, 110};  // miss 100 + 10, hit 10
  for (std::size_t i = 0; i < lines.size(); ++i) EXPECT_EQ(rig.client.at(i), 1000 * i + latency[i]);
  EXPECT_EQ(rig.stat("hits"), 2u);
  EXPECT_EQ(rig.stat("misses"), 5u);
}

TEST(UnifiedL2, LruOrderSurvivesThousandsOfTouchesOfOneSet) {
  // One slice, 4 ways, 1 set. A set keeps 8-bit LRU stamps from its own clock and renumbers
  // them when the clock runs out (every ~250 touches); the order must come through unchanged.
  Rig<UnifiedL2> rig(small(4, 1));
  std::vector<std::uint64_t> lines = {0, 1, 2, 3};             // fill the set
  for (std::uint64_t i = 0; i < 1000; ++i) lines.push_back(i % 3);  // 1000 hits on 0, 1, 2
  for (std::uint64_t line : {1, 2, 0}) lines.push_back(line);   // recency: 3 < 1 < 2 < 0
  for (std::uint64_t line : {4, 5, 6}) lines.push_back(line);   // evict 3, then 1, then 2
  lines.push_back(0);                                            // still held
  lines.push_back(1);                                            // evicted: fetched again
  for (std::size_t i = 0; i < lines.size(); ++i)
    rig.send_at(1000 * i, read_request(lines[i] * kLine, i, rig.client));
  rig.bench.events.run();
  std::vector<Addr> fetched;
  for (const auto& s : rig.dram.sent) fetched.push_back(s.request.addr / kLine);
  EXPECT_EQ(fetched, (std::vector<Addr>{0, 1, 2, 3, 4, 5, 6, 1}));
  EXPECT_EQ(rig.stat("hits"), 1004u);
  EXPECT_EQ(rig.stat("misses"), 8u);
}

TEST(UnifiedL2, FoldedSetIndexSpreadsRowsAPowerOfTwoApart) {
  // One slice, 2 ways, 4 sets; lines 0, 4, 8, 12 twice. Modulo: line mod 4 = 0 for all, so four
  // lines share set 0's two ways and LRU evicts each before its second use: 8 misses. Fold (b =
  // bit_width(3) = 2): 0 -> 0; 4 ^ 1 = 5 -> 1; 8 ^ 2 = 10 -> 2; 12 ^ 3 = 15 -> 3, a set each, so
  // the second round hits.
  for (const bool fold : {false, true}) {
    Rig<UnifiedL2> rig(with(small(2, 4), {{"set_index", std::string(fold ? "fold" : "modulo")}}));
    for (std::uint64_t i = 0; i < 8; ++i)
      rig.send_at(1000 * i, read_request(i % 4 * 4 * kLine, i, rig.client));
    rig.bench.events.run();
    EXPECT_EQ(rig.stat("misses"), fold ? 4u : 8u) << fold;
    EXPECT_EQ(rig.stat("hits"), fold ? 4u : 0u) << fold;
  }
}

// ---- replacement policies (the `replacement` sub-slot) -----------------------------------------

// SRRIP's state alone (Jaleel et al., ISCA 2010, figure 5, hit priority): with M = 3 bits a fill
// predicts 2^3 - 2 = 6, a hit 0, and a victim is the first way at 7 after aging every way.
TEST(SrripReplacement, FillHitAndVictimFollowThePaper) {
  L2Bench<> bench;
  auto srrip = bench.make<SrripReplacement>({{"rrpv_bits", std::int64_t{3}}});
  std::uint8_t ways[4] = {};
  std::uint64_t word = 0;
  const ReplacementPolicy::Set set{ways, &word, 4};
  for (std::uint32_t w = 0; w < 4; ++w) srrip->on_fill(set, w);
  EXPECT_EQ(std::vector<int>(ways, ways + 4), (std::vector<int>{6, 6, 6, 6}));
  srrip->on_hit(set, 0);
  srrip->on_hit(set, 3);
  EXPECT_EQ(std::vector<int>(ways, ways + 4), (std::vector<int>{0, 6, 6, 0}));
  // No way at 7: all age by 1, and the first of the largest (way 1) is the victim.
  EXPECT_EQ(srrip->victim(set), 1u);
  EXPECT_EQ(std::vector<int>(ways, ways + 4), (std::vector<int>{1, 7, 7, 1}));
  srrip->on_fill(set, 1);
  // Way 2 is already at 7: no aging.
  EXPECT_EQ(srrip->victim(set), 2u);
  EXPECT_EQ(std::vector<int>(ways, ways + 4), (std::vector<int>{1, 6, 7, 1}));
  EXPECT_EQ(word, 0u);  // SRRIP keeps no per-set word
}

// Scan resistance, the reason for RRIP (the paper's section 2): a 2-line working set, re-used,
// then a one-pass stream of 6 lines through the same 4-way set, then the working set again.
// LRU: the stream's 12 and 13 evict 0 and 1 (the least recently used), so both miss again.
// SRRIP (M = 2: fill at 2, hit at 0, evict at 3): the stream's lines age to 3 before the working
// set does ([0 0 2 2] -> 12 ages all, evicts 10: [1 1 2 3] -> 13 evicts 11: [1 1 2 2] -> 14 ages
// all, evicts 12: [2 2 2 3] -> 15 evicts 13: [2 2 2 2]), so 0 and 1 hit.
template <typename Policy>
std::vector<Addr> fetched_around_a_scan(std::uint64_t& hits) {
  Rig<UnifiedL2, LinearSliceMap, Policy> rig(small(4, 1));
  const std::vector<std::uint64_t> lines = {0, 1, 0, 1, 10, 11, 12, 13, 14, 15, 0, 1};
  for (std::size_t i = 0; i < lines.size(); ++i)
    rig.send_at(1000 * i, read_request(lines[i] * kLine, i, rig.client));
  rig.bench.events.run();
  std::vector<Addr> fetched;
  for (const auto& s : rig.dram.sent) fetched.push_back(s.request.addr / kLine);
  hits = rig.stat("hits");
  EXPECT_EQ(rig.client.responses.size(), lines.size());
  return fetched;
}

TEST(UnifiedL2, SrripKeepsAReusedWorkingSetThroughAScanThatLruFlushesIt) {
  std::uint64_t hits = 0;
  EXPECT_EQ(fetched_around_a_scan<LruReplacement>(hits),
            (std::vector<Addr>{0, 1, 10, 11, 12, 13, 14, 15, 0, 1}));
  EXPECT_EQ(hits, 2u);
  EXPECT_EQ(fetched_around_a_scan<SrripReplacement>(hits),
            (std::vector<Addr>{0, 1, 10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(hits, 4u);
}

// Under SRRIP a line filled and never hit is still evicted eventually: a stream through one set
// longer than the paper's window fetches every line once and leaves the cache working.
TEST(UnifiedL2, SrripEvictsAWorkingSetThatStopsBeingUsed) {
  Rig<UnifiedL2, LinearSliceMap, SrripReplacement> rig(small(4, 1));
  std::vector<std::uint64_t> lines = {0, 1, 0, 1};
  for (std::uint64_t l = 10; l < 20; ++l) lines.push_back(l);  // 10 distinct lines: 0, 1 age out
  lines.push_back(0);
  for (std::size_t i = 0; i < lines.size(); ++i)
    rig.send_at(1000 * i, read_request(lines[i] * kLine, i, rig.client));
  rig.bench.events.run();
  EXPECT_EQ(rig.stat("hits"), 2u);
  EXPECT_EQ(rig.stat("misses"), 13u);  // 0, 1, the 10 streamed lines and 0 again
}

TEST(UnifiedL2, WriteBackWriteAllocateWithDirtySectors) {
  // One line of cache (1 way, 1 set), 32 B sectors, hit latency 10, DRAM latency 100.
  Rig<UnifiedL2> rig(small(1, 1));
  rig.send_at(0, write_request(0 * kLine, 1, rig.client));              // full line: no fetch
  rig.send_at(1000, read_request(1 * kLine, 2, rig.client));            // evicts dirty line 0
  rig.send_at(2000, write_request(2 * kLine + 32, 3, rig.client, 0, 32));  // partial: fetch
  rig.send_at(3000, write_request(2 * kLine + 96, 4, rig.client, 0, 32));  // hit, sector 3
  rig.send_at(4000, read_request(3 * kLine, 5, rig.client));            // evicts line 2
  rig.bench.events.run();
  // Full-line write miss: allocated at 0, acknowledged at 0 + 10.
  EXPECT_EQ(rig.client.at(1), 10u);
  // Read miss at 1000: fill at 1100 evicts line 0 (4 dirty sectors: 128 B written back).
  EXPECT_EQ(rig.client.at(2), 1110u);
  // Partial write miss: fetch-on-write, answered with the fill at 2100 + 10; line 1 was clean.
  EXPECT_EQ(rig.client.at(3), 2110u);
  EXPECT_EQ(rig.client.at(4), 3010u);
  // Read miss at 4000: fill at 4100 evicts line 2 with sectors 1 and 3 dirty: 64 B.
  EXPECT_EQ(rig.client.at(5), 4110u);
  const std::vector<SentToDram> expected = {{1000, 1 * kLine, 128, false},
                                          {1100, 0 * kLine, 128, true},
                                          {2000, 2 * kLine, 128, false},
                                          {4000, 3 * kLine, 128, false},
                                          {4100, 2 * kLine, 64, true}};
  expect_sent(rig.dram, expected);
  EXPECT_EQ(rig.stat("writebacks"), 2u);
  EXPECT_EQ(rig.stat("llc_write_bytes"), 128u + 32 + 32);
  EXPECT_EQ(rig.stat("llc_read_bytes"), 256u);
}

// start_dirty: the L2 after a write flush, every way holding a line of the flush buffer (from
// below kFirstTensorBase, never the kernel's own), a share of them dirty, the newest of each set:
// a miss that evicts a dirty one writes it back, a clean one nothing.
struct AfterFlush {
  std::uint64_t writebacks = 0;
  std::vector<SentToDram> sent;
};

AfterFlush misses_after_flush(double start_dirty) {
  // 4 slices x 2 sets x 4 ways; 32 line reads at the first tensor, one every 1000 cycles: line i
  // goes to slice i % 4, set (i / 4) % 2, so each of the 8 sets takes 4 misses, one every 8.
  Rig<UnifiedL2> rig({{"slices", std::int64_t{4}},
                      {"assoc", std::int64_t{4}},
                      {"size", std::int64_t{4 * 2 * 4} * kLine},
                      {"hit_latency", std::int64_t{10}},
                      {"requests_per_cycle", 1.0},
                      {"start_dirty", start_dirty}});
  for (std::uint64_t i = 0; i < 32; ++i)
    rig.send_at(1000 * i, read_request(kFirstTensorBase + i * kLine, i, rig.client));
  rig.bench.events.run();
  AfterFlush out{rig.stat("writebacks"), {}};
  for (const auto& s : rig.dram.sent)
    out.sent.push_back({s.at, s.request.addr, s.request.bytes, s.request.write});
  return out;
}

TEST(UnifiedL2, StartDirtyWritesBackTheFlushBuffersLines) {
  // Empty: 32 fetches, nothing written back.
  AfterFlush run = misses_after_flush(0);
  EXPECT_EQ(run.writebacks, 0u);
  EXPECT_EQ(run.sent.size(), 32u);
  // Every line dirty: each of the 32 misses evicts one whole flush-buffer line, at its fill.
  run = misses_after_flush(1);
  EXPECT_EQ(run.writebacks, 32u);
  ASSERT_EQ(run.sent.size(), 64u);
  std::set<Addr> written;
  for (const SentToDram& s : run.sent) {
    if (!s.write) continue;
    EXPECT_LT(s.addr, kFirstTensorBase);
    EXPECT_GE(s.addr, kFirstTensorBase - (Addr{1} << 30));
    EXPECT_EQ(s.bytes, kLine);
    EXPECT_EQ(s.at % 1000, 100u);
    written.insert(s.addr);
  }
  EXPECT_EQ(written.size(), 32u);  // every way of every set held one
  // A share: more of it, more written back; at 0.75 every set has at least 2 of 4 dirty.
  std::uint64_t last = 0;
  for (double share : {0.25, 0.5, 0.75}) {
    run = misses_after_flush(share);
    EXPECT_GE(run.writebacks, last) << share;
    EXPECT_LT(run.writebacks, 32u) << share;
    EXPECT_EQ(run.sent.size(), 32u + run.writebacks) << share;
    last = run.writebacks;
    // The dirty lines are each set's newest: once a set's miss wrote back, its later ones do.
    std::vector<int> wrote(32, 0);  // by miss
    for (const SentToDram& s : run.sent)
      if (s.write) wrote[(s.at - 100) / 1000] = 1;
    for (std::uint64_t i = 8; i < 32; ++i) EXPECT_GE(wrote[i], wrote[i - 8]) << share << " " << i;
  }
  EXPECT_GE(last, 16u);
}

TEST(UnifiedL2, LinesFarFromTheFirstAreToldApartByTheirLines) {
  // One slice, 2 ways, 1 set. A way keeps a 32-bit key, exact for the lines of a window of
  // 2^32 - 2 from 2^31 below the first line installed (F); the lines outside it (Low, High) share
  // one key and are compared whole.
  Rig<UnifiedL2> rig(small(2, 1));
  constexpr std::uint64_t kF = std::uint64_t{1} << 40, kLow = 5,
                          kHigh = kF - (std::uint64_t{1} << 31) + (std::uint64_t{1} << 32) + 5;
  rig.send_at(0, write_request(kF * kLine, 1, rig.client, 0, 32));        // partial: fetch F
  rig.send_at(1000, read_request(kLow * kLine, 2, rig.client));           // miss
  rig.send_at(2000, read_request(kF * kLine, 3, rig.client));             // hit; Low is LRU
  rig.send_at(3000, write_request(kHigh * kLine, 4, rig.client, 0, 32));  // not Low: evicts it
  rig.send_at(4000, read_request(kLow * kLine, 5, rig.client));           // not High: evicts F
  rig.send_at(5000, read_request(kHigh * kLine, 6, rig.client));          // hit; Low is LRU
  rig.send_at(6000, read_request((kF + 7) * kLine, 7, rig.client));       // evicts Low
  rig.send_at(7000, read_request(kLow * kLine, 8, rig.client));           // evicts High
  rig.bench.events.run();
  // Misses at t are answered at t + 100 + 10, hits at t + 10.
  const std::vector<Cycle> answered = {110, 1110, 2010, 3110, 4110, 5010, 6110, 7110};
  for (std::size_t i = 0; i < answered.size(); ++i) EXPECT_EQ(rig.client.at(i + 1), answered[i]);
  // The write-backs of F and High: their one dirty sector each, to their own addresses.
  const std::vector<SentToDram> expected = {
      {0, kF * kLine, 128, false},       {1000, kLow * kLine, 128, false},
      {3000, kHigh * kLine, 128, false}, {4000, kLow * kLine, 128, false},
      {4100, kF * kLine, 32, true},      {6000, (kF + 7) * kLine, 128, false},
      {7000, kLow * kLine, 128, false},  {7100, kHigh * kLine, 32, true}};
  expect_sent(rig.dram, expected);
  EXPECT_EQ(rig.stat("hits"), 2u);
  EXPECT_EQ(rig.stat("misses"), 6u);
  EXPECT_TRUE(rig.l2->holds(0, kF + 7));
  EXPECT_TRUE(rig.l2->holds(0, kLow));
  EXPECT_FALSE(rig.l2->holds(0, kF));
  EXPECT_FALSE(rig.l2->holds(0, kHigh));
}

TEST(UnifiedL2, MshrMergesMissesToOneLine) {
  Rig<UnifiedL2, XorSliceMap> rig({}, 500);  // defaults: hit 200, 0.25 requests/cycle
  const Addr a = 77 * kLine;
  rig.send_at(0, read_request(a, 1, rig.client, 0));
  rig.send_at(1, read_request(a + 32, 2, rig.client, 9, 32));
  rig.bench.events.run();
  // One DRAM read. The second request waits for the slice's bandwidth (taken at 4: one request
  // every 4 cycles) and merges; both are answered with the fill at 500 + 200.
  ASSERT_EQ(rig.dram.sent.size(), 1u);
  EXPECT_EQ(rig.client.at(1), 700u);
  EXPECT_EQ(rig.client.at(2), 700u);
  EXPECT_EQ(rig.client.responses[1].request.sm, 9u);  // each requester gets its own request
  // The miss that fetched the line is answered from_dram; the merged one waited for it but
  // fetched nothing (the loaded-DRAM law of tma.traffic counts fetched lines).
  EXPECT_TRUE(rig.client.responses[0].request.from_dram);
  EXPECT_FALSE(rig.client.responses[1].request.from_dram);
  const std::string slice = "slice[" + std::to_string(rig.map->slice_of(77, 160)) + "].";
  EXPECT_EQ(rig.stat(slice + "mshr_merges"), 1u);
  EXPECT_EQ(rig.stat(slice + "misses"), 2u);
  EXPECT_EQ(rig.stat(slice + "queue_wait_cycles"), 3u);
  EXPECT_EQ(rig.stat("misses"), 2u);
}

TEST(UnifiedL2, SliceRequestBandwidth) {
  // Line 0 is warmed at cycle 0 (answered at 110); four reads of it arrive together at 1000.
  const auto taken = [](double per_cycle) {
    Rig<UnifiedL2> rig(with(small(1, 1), {{"requests_per_cycle", per_cycle}}));
    rig.send_at(0, read_request(0, 100, rig.client));
    for (std::uint64_t t = 0; t < 4; ++t) rig.send_at(1000, read_request(0, t, rig.client));
    rig.bench.events.run();
    std::vector<Cycle> at;
    for (std::uint64_t t = 0; t < 4; ++t) at.push_back(rig.client.at(t) - 10);  // less the hit
    return std::make_pair(at, rig.stat("slice[0].queue_wait_cycles"));
  };
  // 0.5 per cycle: one every 2 cycles, 1000, 1002, 1004, 1006; waits 0 + 2 + 4 + 6.
  EXPECT_EQ(taken(0.5), std::make_pair(std::vector<Cycle>{1000, 1002, 1004, 1006}, Cycle{12}));
  // 2 per cycle: 1000, 1000, 1001, 1001; waits 0 + 0 + 1 + 1.
  EXPECT_EQ(taken(2.0), std::make_pair(std::vector<Cycle>{1000, 1000, 1001, 1001}, Cycle{2}));
}

TEST(UnifiedL2, ResponsesDueInOneCycleAreOneEvent) {
  // Four slices (linear map: line k at slice k), lines 0..3 warmed at 0 (answered at 110). At
  // 1000 four reads of them arrive, each at an idle slice: all taken at 1000 and answered at
  // 1010, in arrival order, by one event; a fifth read of line 0 at 1001 is answered at 1011 by
  // a second one.
  Rig<UnifiedL2> rig({{"slices", std::int64_t{4}},
                      {"assoc", std::int64_t{1}},
                      {"size", std::int64_t{4 * 4 * kLine}},
                      {"hit_latency", std::int64_t{10}},
                      {"requests_per_cycle", 1.0}});
  for (std::uint64_t k = 0; k < 4; ++k) rig.send_at(0, read_request(k * kLine, 100 + k, rig.client));
  rig.bench.events.run(999);
  const std::uint64_t before = rig.bench.events.fired();
  for (std::uint64_t k = 0; k < 4; ++k) rig.send_at(1000, read_request(k * kLine, k, rig.client));
  rig.send_at(1001, read_request(0, 4, rig.client));
  rig.bench.events.run();
  // Five sends (the rig's own events) and two response events.
  EXPECT_EQ(rig.bench.events.fired() - before, 5u + 2u);
  ASSERT_EQ(rig.client.responses.size(), 9u);
  for (std::uint64_t k = 0; k < 4; ++k) {
    EXPECT_EQ(rig.client.responses[4 + k].request.token, k);
    EXPECT_EQ(rig.client.at(k), 1010u) << k;
  }
  EXPECT_EQ(rig.client.at(4), 1011u);
}

TEST(UnifiedL2, ClientsHearOfTheirResponsesEightAhead) {
  // One slice taking a request a cycle, hit latency 10, DRAM 100: read i of 40 distinct lines
  // arrives at cycle i, misses, is filled at 100 + i and answered at 110 + i. When response i
  // fires, the fills up to 110 + i have scheduled responses up to i + 10, and the L2 hands its
  // client the request of response i + 9 (eight places behind the next one) before it answers
  // i: hints for 9..39 (none once fewer than nine responses are left), hint k after k - 9
  // answers. The coalescer fetches the entry and window that response reads
  // (docs/performance.md §11); a hint changes nothing else.
  Rig<UnifiedL2> rig(small(64, 1));
  for (std::uint64_t i = 0; i < 40; ++i) rig.send_at(i, read_request(i * kLine, i, rig.client));
  rig.bench.events.run();
  ASSERT_EQ(rig.client.responses.size(), 40u);
  for (std::uint64_t i = 0; i < 40; ++i) EXPECT_EQ(rig.client.at(i), 110 + i) << i;
  ASSERT_EQ(rig.client.hints.size(), 31u);
  for (std::size_t k = 0; k < 31; ++k) {
    EXPECT_EQ(rig.client.hints[k].token, 9 + k) << k;
    EXPECT_EQ(rig.client.hints[k].answered, k) << k;
  }
}

TEST(UnifiedL2, MshrsLimitBandwidthByLittlesLaw) {
  // One slice, M = 4 MSHRs, DRAM latency L = 100, hit latency 10, one request per cycle; 400
  // distinct lines all sent at 0. Requests 0..3 are taken at 0..3; request 4 waits for the first
  // fill (at 100), and so on: request k is taken at (k / 4) x 100 + k mod 4 and answered 110
  // later. Sustained: (400 - 4) lines in resp[399] - resp[3] = 10013 - 113 = 9900 cycles,
  // 396 x 128 / 9900 = 5.12 B/cycle = M x line / L = 4 x 128 / 100.
  constexpr std::uint64_t kN = 400, kM = 4;
  constexpr Cycle kL = 100;
  Rig<UnifiedL2> rig(with(small(16, 64), {{"mshr_per_slice", std::int64_t{kM}}}), kL);
  for (std::uint64_t k = 0; k < kN; ++k) rig.l2->send(0, read_request(k * kLine, k, rig.client));
  rig.bench.events.run();
  rig.l2->finish(rig.bench.events.now());

  // Count in = count out: every request answered once, none lost while the MSHRs were full.
  ASSERT_EQ(rig.client.responses.size(), kN);
  std::vector<int> answered(kN, 0);
  for (const auto& r : rig.client.responses) ++answered[r.request.token];
  for (std::uint64_t k = 0; k < kN; ++k) EXPECT_EQ(answered[k], 1) << k;
  EXPECT_EQ(rig.dram.sent.size(), kN);
  EXPECT_EQ(rig.dram.max_in_flight, kM);

  for (std::uint64_t k = 0; k < kN; ++k)
    ASSERT_EQ(rig.client.at(k), (k / kM) * kL + k % kM + kL + 10) << k;
  const double sustained = static_cast<double>((kN - kM) * kLine) /
                           static_cast<double>(rig.client.at(kN - 1) - rig.client.at(kM - 1));
  const double little = static_cast<double>(kM * kLine) / static_cast<double>(kL);
  EXPECT_NEAR(sustained, little, 0.05 * little);
  EXPECT_DOUBLE_EQ(sustained, 5.12);

  // Occupancy (cycles at each level, 4 buckets of width 1, overflow = all 4 busy): 1, 2, 3 for a
  // cycle each while filling (0..3), full from 3 to the first of the last fills at 10000
  // (9997 cycles: each fill frees an MSHR that a waiting request takes in the same cycle), 3, 2,
  // 1 for a cycle each at 10000..10002, then empty until the end at 10013 (10 cycles).
  Histogram& occupancy = rig.bench.stats.histogram("c.slice[0].mshr_occupancy", "", "", 1, 4);
  EXPECT_EQ(occupancy.buckets(), (std::vector<std::uint64_t>{10, 2, 2, 2}));
  EXPECT_EQ(occupancy.overflow(), 9997u);
  EXPECT_EQ(occupancy.count(), 10013u);
}

TEST(UnifiedL2, PerSliceLittlesLawOverFourSlices) {
  // Four slices, consecutive lines (slice.linear: line mod 4), M = 8 per slice, L = 200: each
  // slice sustains 8 x 128 / 200 = 5.12 B/cycle, the L2 four times that.
  constexpr std::uint64_t kN = 4000;
  Rig<UnifiedL2> rig({{"slices", std::int64_t{4}},
                      {"assoc", std::int64_t{16}},
                      {"size", std::int64_t{4 * 16 * 64 * kLine}},
                      {"hit_latency", std::int64_t{10}},
                      {"requests_per_cycle", 1.0},
                      {"mshr_per_slice", std::int64_t{8}}},
                     200);
  for (std::uint64_t k = 0; k < kN; ++k) rig.l2->send(0, read_request(k * kLine, k, rig.client));
  rig.bench.events.run();
  ASSERT_EQ(rig.client.responses.size(), kN);
  const Cycle span = rig.client.responses.back().at - rig.client.responses.front().at;
  const double per_slice = static_cast<double>(kN * kLine) / 4.0 / static_cast<double>(span);
  EXPECT_NEAR(per_slice, 5.12, 0.05 * 5.12);
}

TEST(UnifiedL2, EveryRequestIsAnsweredOnceUnderPressure) {
  // Random reads and writes (full and partial) over 48 lines, two slices of 2 x 2 ways, 2 MSHRs
  // each, bursts that overrun the MSHRs: nothing is dropped or answered twice.
  Rig<UnifiedL2, XorSliceMap> rig({{"slices", std::int64_t{2}},
                                   {"assoc", std::int64_t{2}},
                                   {"size", std::int64_t{2 * 2 * 2 * kLine}},
                                   {"hit_latency", std::int64_t{3}},
                                   {"mshr_per_slice", std::int64_t{2}}},
                                  37);
  std::mt19937_64 rng(3);
  constexpr std::uint64_t kN = 3000;
  for (std::uint64_t k = 0; k < kN; ++k) {
    const Addr addr = (rng() % 48) * kLine + (rng() % 4) * 32;
    const bool is_write = rng() % 3 == 0;
    const std::uint32_t bytes = rng() % 2 ? 32 : 128;
    const MemRequest r{addr - (bytes == 128 ? addr % kLine : 0), bytes, 0, is_write, false, k,
                       &rig.client};
    rig.send_at(k / 8, r);  // bursts of 8 per cycle
  }
  rig.bench.events.run();
  ASSERT_EQ(rig.client.responses.size(), kN);
  std::vector<int> answered(kN, 0);
  for (const auto& r : rig.client.responses) ++answered[r.request.token];
  for (std::uint64_t k = 0; k < kN; ++k) ASSERT_EQ(answered[k], 1) << k;
  EXPECT_EQ(rig.stat("hits") + rig.stat("misses"), kN);
  EXPECT_TRUE(rig.bench.events.empty());
}

// The tag array's storage: zeroed, on 64-byte boundaries (a set's lookup reads whole host cache
// lines), and handed over intact by a move.
TEST(HostTable, ZeroedAlignedAndMovable) {
  for (const std::size_t bytes : {std::size_t{64}, std::size_t{3} << 20, std::size_t{5000}}) {
    HostTable table(bytes);
    auto* words = static_cast<std::uint64_t*>(table.data());
    ASSERT_NE(words, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(words) % 64, 0u) << bytes;
    const std::size_t n = bytes / sizeof(std::uint64_t);
    EXPECT_TRUE(std::all_of(words, words + n, [](std::uint64_t w) { return w == 0; })) << bytes;
    words[n - 1] = 42;
    HostTable moved(std::move(table));
    EXPECT_EQ(table.data(), nullptr);  // NOLINT(bugprone-use-after-move): the contract
    EXPECT_EQ(moved.data(), words);
    EXPECT_EQ(words[n - 1], 42u);
    HostTable assigned;
    assigned = std::move(moved);
    EXPECT_EQ(assigned.data(), words);
  }
  EXPECT_EQ(HostTable(0).data(), nullptr);
}

// As RemoteCopyL2.PredictedLinesAreServedAsUnpredictedOnes (below) for l2.unified: a strided
// stream of reads and writes over 4 slices from one SM (its placements predicted) and from a new
// SM per request (none) is served alike.
std::pair<std::vector<std::pair<Cycle, std::uint64_t>>, std::vector<std::uint64_t>>
run_strided_unified(bool one_sm) {
  Rig<UnifiedL2> rig({{"slices", std::int64_t{4}},
                      {"assoc", std::int64_t{2}},
                      {"size", std::int64_t{4 * 2 * 4} * kLine},
                      {"hit_latency", std::int64_t{10}},
                      {"requests_per_cycle", 1.0}});
  std::uint64_t k = 0;
  for (int pass = 0; pass < 3; ++pass) {
    for (std::uint64_t line = 0; line < 120; line += 3, ++k) {
      const auto sm = static_cast<std::uint16_t>(one_sm ? 0 : k);
      rig.send_at(1000 * k, pass == 1 ? write_request(line * kLine, k, rig.client, sm)
                                      : read_request(line * kLine, k, rig.client, sm));
    }
  }
  rig.bench.events.run();
  std::vector<std::pair<Cycle, std::uint64_t>> trace;
  for (const auto& r : rig.client.responses) trace.emplace_back(r.at, r.request.token);
  std::vector<std::uint64_t> stats;
  for (const char* name : {"hits", "misses", "writebacks", "slice[0].hits", "slice[1].hits",
                           "slice[2].hits", "slice[3].hits"})
    stats.push_back(rig.stat(name));
  return {trace, stats};
}

TEST(UnifiedL2, PredictedLinesAreServedAsUnpredictedOnes) {
  const auto predicted = run_strided_unified(true);
  EXPECT_EQ(predicted, run_strided_unified(false));
  EXPECT_GT(predicted.second[0], 0u);  // hits
  EXPECT_GT(predicted.second[2], 0u);  // writebacks: the written lines evicted by the last pass
}

TEST(UnifiedL2, SizeMustGiveAWholeNumberOfSets) {
  L2Bench<> bench;
  try {
    // 50 MiB / (3 x 16 x 128) = 8533.33 sets.
    bench.make<UnifiedL2>({{"slices", std::int64_t{3}}});
    FAIL() << "no error";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("test.toml:1:1: error: [test] size (52428800 bytes)"), std::string::npos)
        << what;
    for (const char* field : {"slices (3)", "assoc (16)", "line_bytes (128)", "sets"})
      EXPECT_NE(what.find(field), std::string::npos) << field << " in " << what;
  }
  EXPECT_THROW(bench.make<UnifiedL2>({{"size", std::int64_t{16}}}), InputError);  // < 1 set
  EXPECT_THROW(bench.make<UnifiedL2>({{"sector_bytes", std::int64_t{48}}}), InputError);
  EXPECT_THROW(bench.make<UnifiedL2>({{"sector_bytes", std::int64_t{2}}}), InputError);  // 64 > 32
}

TEST(UnifiedL2, Schema) {
  EXPECT_EQ(test::schema_problems<UnifiedL2>(), "");
  Schema schema;
  UnifiedL2::describe(schema);
  ASSERT_EQ(schema.slots().size(), 2u);
  EXPECT_EQ(schema.slots()[0].name, "slice_map");
  EXPECT_EQ(schema.slots()[0].kind, "slice");
  EXPECT_EQ(schema.slots()[0].default_plugin, "");  // the manifest must name one
  EXPECT_EQ(schema.slots()[1].name, "replacement");
  EXPECT_EQ(schema.slots()[1].kind, "replacement");
  EXPECT_EQ(schema.slots()[1].default_plugin, "replacement.lru");
  L2Bench<> bench;
  auto l2 = bench.make<UnifiedL2>();
  EXPECT_EQ(l2->slices(), 160u);
  EXPECT_EQ(l2->sets(), 160u);  // 50 MiB / (160 x 16 x 128)
  EXPECT_EQ(bench.stats.names(), test::declared_stats_expanded<UnifiedL2>(160));
}

// ---- l2.remote_copy -----------------------------------------------------------------------------
// 4 SMs (halves: SMs 0, 1 near partition 0; SMs 2, 3 near partition 1), 4 slices (partition 0:
// slices 0, 1; partition 1: slices 2, 3), slice.linear: home slice = line mod 4, shadow slice in
// partition p = 2p + line mod 2; set = (line / 4) mod sets. Hit 10, DRAM 100, far_latency 30.

ParamOverrides partitioned(std::int64_t assoc, std::int64_t sets, double probability,
                           double threshold) {
  return {{"slices", std::int64_t{4}},
          {"assoc", assoc},
          {"size", 4 * assoc * sets * kLine},
          {"hit_latency", std::int64_t{10}},
          {"requests_per_cycle", 1.0},
          {"far_latency", std::int64_t{30}},
          {"max_insert_probability", probability},
          {"occupancy_threshold", threshold}};
}

using RemoteRig = Rig<RemoteCopyL2>;

RemoteRig remote(const ParamOverrides& overrides, std::uint64_t seed = 1) {
  return RemoteRig(overrides, 100, seed, 4);
}

TEST(RemoteCopyL2, PartitionsOfSmsAndSlices) {
  auto rig = remote(partitioned(2, 4, 0, 1));
  EXPECT_EQ(rig.l2->partition_of_sm(1), 0u);
  EXPECT_EQ(rig.l2->partition_of_sm(2), 1u);
  EXPECT_EQ(rig.l2->shadow_slice(0, 7), 1u);
  EXPECT_EQ(rig.l2->shadow_slice(1, 7), 3u);
  auto alt = remote(with(partitioned(2, 4, 0, 1), {{"sm_partition", std::string("alternate")}}));
  EXPECT_EQ(alt.l2->partition_of_sm(1), 1u);
  EXPECT_EQ(alt.l2->partition_of_sm(2), 0u);
}

// sm_partition = gpcs: GPCs of 1 and 2 SMs, repeating, over 7 SMs are GPCs 0, 1, 1, 2, 3, 3, 4,
// near partitions 0, 1, 1, 0, 1, 1, 0.
TEST(RemoteCopyL2, GpcsPlaceWholeGpcsInTurn) {
  const ParamOverrides gpcs = with(partitioned(2, 4, 0, 1), {{"sm_partition", std::string("gpcs")},
                                                             {"gpc_sizes", std::string("1,2")}});
  RemoteRig rig(gpcs, 100, 1, 7);
  std::vector<std::uint32_t> near;
  for (std::uint32_t sm = 0; sm < 7; ++sm) near.push_back(rig.l2->partition_of_sm(sm));
  EXPECT_EQ(near, (std::vector<std::uint32_t>{0, 1, 1, 0, 1, 1, 0}));
  // SM indices past gpu.sm_count follow the rules on; halves puts them in partition 1.
  EXPECT_EQ(rig.l2->partition_of_sm(10), 1u);  // GPC 7
  EXPECT_EQ(remote(partitioned(2, 4, 0, 1)).l2->partition_of_sm(640), 1u);
  L2Bench<> bench(7);
  for (const char* bad : {"", "1,x", "0,2"})
    EXPECT_THROW(bench.make<RemoteCopyL2>(with(gpcs, {{"gpc_sizes", std::string(bad)}})),
                 InputError)
        << bad;
}

TEST(UnifiedL2, LatencyAndRateCountTheMemoryClock) {
  // The slice runs at 2000 MHz under a 1000 MHz SM clock. Hit latency 11 memory cycles is
  // ceil(11 / 2) = 6 SM cycles; 0.25 requests per memory cycle are one every 2 SM cycles (had
  // they counted SM cycles: a latency of 11 and one request every 4 cycles).
  L2Bench<> bench;
  bench.gpu.clock_mhz = 1000;
  bench.gpu.memory_clock_mhz = 2000;
  auto l2 = bench.make<UnifiedL2>(
      with(small(1, 1), {{"hit_latency", std::int64_t{11}}, {"requests_per_cycle", 0.25}}));
  auto map = bench.make<LinearSliceMap>();
  RecordingMemory dram(bench.events, 100);
  RecordingClient client;
  l2->connect(*map, dram);
  const auto send_at = [&](Cycle at, const MemRequest& request) {
    bench.events.call(at, Priority::kEngine, [&l2, request](Cycle now) { l2->send(now, request); });
  };
  send_at(0, read_request(0, 100, client));  // a miss: DRAM 100, then the hit latency
  for (std::uint64_t t = 0; t < 4; ++t) send_at(1000, read_request(0, t, client));
  bench.events.run();
  EXPECT_EQ(client.at(100), 0u + 100 + 6);
  std::vector<Cycle> taken;
  for (std::uint64_t t = 0; t < 4; ++t) taken.push_back(client.at(t) - 6);
  EXPECT_EQ(taken, (std::vector<Cycle>{1000, 1002, 1004, 1006}));
}

TEST(RemoteCopyL2, FarLatencyCharged) {
  auto rig = remote(partitioned(2, 4, 0, 1));  // no shadow copies
  rig.send_at(0, read_request(2 * kLine, 1, rig.client, 0));     // home slice 2: far for SM 0
  rig.send_at(1000, read_request(2 * kLine, 2, rig.client, 0));  // far hit
  rig.send_at(2000, read_request(2 * kLine, 3, rig.client, 2));  // near hit for SM 2
  rig.send_at(3000, read_request(0 * kLine, 4, rig.client, 0));  // near miss for SM 0
  rig.bench.events.run();
  EXPECT_EQ(rig.client.at(1), 0u + 100 + 10 + 30);
  EXPECT_EQ(rig.client.at(2), 1000u + 10 + 30);
  EXPECT_EQ(rig.client.at(3), 2000u + 10);
  EXPECT_EQ(rig.client.at(4), 3000u + 100 + 10);
  EXPECT_EQ(rig.stat("far_requests"), 2u);
  EXPECT_EQ(rig.stat("fabric_read_bytes"), 2 * kLine);  // both far reads cross to slice 2
  EXPECT_EQ(rig.stat("shadow_insertions"), 0u);
}

TEST(RemoteCopyL2, ShadowCopyServesNearReadsAtNearLatency) {
  auto rig = remote(partitioned(2, 4, 1.0, 1.0));  // always insert
  rig.send_at(0, read_request(2 * kLine, 1, rig.client, 0));
  rig.send_at(1000, read_request(2 * kLine, 2, rig.client, 0));
  rig.send_at(2000, read_request(2 * kLine, 3, rig.client, 1));
  rig.bench.events.run();
  // The far miss pays DRAM and the crossing; its fill leaves a copy in slice 2 x 0 + 2 mod 2 = 0
  // (occupancy 0: probability 1 x (1 - 0) = 1).
  EXPECT_EQ(rig.client.at(1), 140u);
  EXPECT_TRUE(rig.l2->holds(0, 2));
  EXPECT_EQ(rig.stat("shadow_insertions"), 1u);
  EXPECT_EQ(rig.stat("slice[0].shadow_insertions"), 1u);
  // Later reads from partition 0 hit the copy at near latency.
  EXPECT_EQ(rig.client.at(2), 1010u);
  EXPECT_EQ(rig.client.at(3), 2010u);
  EXPECT_EQ(rig.stat("shadow_hits"), 2u);
  EXPECT_EQ(rig.stat("far_requests"), 3u);
  EXPECT_EQ(rig.stat("fabric_read_bytes"), 1 * kLine);  // the first; the copy serves the others
  EXPECT_EQ(rig.dram.sent.size(), 1u);
}

TEST(RemoteCopyL2, ShadowLinesCompeteForCapacity) {
  // Slice 0, set 0 (2 ways) holds lines 0 and 16 of partition 0; a far read of line 2 inserts
  // its copy there over the LRU line, 0, which then misses again.
  auto rig = remote(partitioned(2, 4, 1.0, 1.0));
  rig.send_at(0, read_request(0 * kLine, 1, rig.client, 0));
  rig.send_at(1000, read_request(16 * kLine, 2, rig.client, 0));
  rig.send_at(2000, read_request(2 * kLine, 3, rig.client, 0));
  rig.send_at(3000, read_request(0 * kLine, 4, rig.client, 0));
  rig.bench.events.run();
  EXPECT_TRUE(rig.l2->holds(0, 2));
  EXPECT_EQ(rig.client.at(4), 3000u + 100 + 10);  // a miss: the shadow copy evicted it
  EXPECT_EQ(rig.dram.sent.size(), 4u);
}

TEST(RemoteCopyL2, WriteDropsTheShadowCopy) {
  auto rig = remote(partitioned(2, 4, 1.0, 1.0));
  rig.send_at(0, read_request(2 * kLine, 1, rig.client, 0));  // leaves a copy in slice 0
  rig.send_at(1000, write_request(2 * kLine, 2, rig.client, 2));  // near write at home
  rig.send_at(2000, read_request(2 * kLine, 3, rig.client, 0));
  rig.bench.events.run();
  EXPECT_EQ(rig.client.at(2), 1010u);
  // No copy left: the read goes across to the (written) home line and hits there, 10 + 30, and
  // being a far hit leaves a fresh copy.
  EXPECT_EQ(rig.client.at(3), 2040u);
  EXPECT_EQ(rig.stat("shadow_hits"), 0u);
  EXPECT_EQ(rig.stat("shadow_insertions"), 2u);
  EXPECT_EQ(rig.stat("fabric_read_bytes"), 2 * kLine);  // the near write crosses nothing
}

TEST(RemoteCopyL2, CopyEvictedWhileQueuedGoesAcross) {
  // One way per set and one request per 128 cycles per slice. Line 2's copy sits in slice 0,
  // set 0; SM 0 reads line 16 (slice 0, set 0) at 1000: slice 0 is busy until 1128 and its fill
  // at 1100 evicts the copy. SM 0's read of line 2 at 1050 was routed to the copy, finds it gone
  // when slice 0 takes it at 1128, and goes to home slice 2 (idle): a far hit, 1128 + 10 + 30.
  auto rig = remote(with(partitioned(1, 4, 1.0, 1.0), {{"requests_per_cycle", 1.0 / 128}}));
  rig.send_at(0, read_request(2 * kLine, 1, rig.client, 0));
  rig.send_at(1000, read_request(16 * kLine, 2, rig.client, 0));
  rig.send_at(1050, read_request(2 * kLine, 3, rig.client, 0));
  rig.bench.events.run();
  EXPECT_EQ(rig.client.at(3), 1168u);
  EXPECT_EQ(rig.stat("shadow_hits"), 0u);
  EXPECT_EQ(rig.stat("far_requests"), 2u);
  EXPECT_EQ(rig.stat("fabric_read_bytes"), 2 * kLine);  // the first, and the second once its copy was gone
  EXPECT_EQ(rig.stat("slice[0].queue_wait_cycles"), 78u);  // 1050 .. 1128
}

// SM 0 and SM 3 read random lines (a fixed workload stream) in bursts; the shadow insertions
// are the only random choice.
std::pair<std::vector<std::pair<Cycle, std::uint64_t>>, std::uint64_t> run_shuffled(
    const ParamOverrides& overrides, std::uint64_t seed) {
  auto rig = remote(overrides, seed);
  std::mt19937_64 workload(11);
  for (std::uint64_t k = 0; k < 4000; ++k) {
    const auto sm = static_cast<std::uint16_t>(k % 2 ? 3 : 0);
    rig.send_at(k / 4, read_request((workload() % 256) * kLine, k, rig.client, sm));
  }
  rig.bench.events.run();
  std::vector<std::pair<Cycle, std::uint64_t>> trace;
  for (const auto& r : rig.client.responses) trace.emplace_back(r.at, r.request.token);
  return {trace, rig.stat("shadow_insertions")};
}

TEST(RemoteCopyL2, SeededInsertionsAreReproducible) {
  const ParamOverrides params = partitioned(4, 8, 0.5, 0.75);
  const auto a = run_shuffled(params, 1);
  const auto b = run_shuffled(params, 1);
  const auto c = run_shuffled(params, 2);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_GT(a.second, 0u);
}

// A request takes its line's slices and set from those computed for its SM's predicted next line
// when the prediction was right (RemoteCopyL2::send's placements). The same stream of reads and
// writes (strided, so that the predictor is right for nearly all), sent once by SM 0 alone and
// once by a new SM of the same partition for each request (none predicted, every placement
// computed afresh), must be served alike: homes, far routes, shadow copies, invalidations.
std::pair<std::vector<std::pair<Cycle, std::uint64_t>>, std::vector<std::uint64_t>> run_strided(
    bool one_sm) {
  auto rig =
      remote(with(partitioned(2, 4, 1.0, 1.0), {{"sm_partition", std::string("alternate")}}));
  std::uint64_t k = 0;
  for (int pass = 0; pass < 4; ++pass) {
    for (std::uint64_t line = 0; line < 24; line += 3, ++k) {
      // SM 2k is near partition 0, as SM 0 (alternate).
      const auto sm = static_cast<std::uint16_t>(one_sm ? 0 : 2 * k);
      const Cycle at = 1000 * k;
      rig.send_at(at, pass == 2 ? write_request(line * kLine, k, rig.client, sm)
                                : read_request(line * kLine, k, rig.client, sm));
    }
  }
  rig.bench.events.run();
  std::vector<std::pair<Cycle, std::uint64_t>> trace;
  for (const auto& r : rig.client.responses) trace.emplace_back(r.at, r.request.token);
  std::vector<std::uint64_t> stats;
  for (const char* name :
       {"hits", "misses", "far_requests", "shadow_hits", "fabric_read_bytes", "shadow_insertions",
        "slice[0].hits", "slice[1].hits", "slice[2].hits", "slice[3].hits"})
    stats.push_back(rig.stat(name));
  return {trace, stats};
}

TEST(RemoteCopyL2, PredictedLinesAreServedAsUnpredictedOnes) {
  const auto predicted = run_strided(true);
  const auto fresh = run_strided(false);
  EXPECT_EQ(predicted, fresh);
  // The stream crosses the partitions, leaves copies, hits them and drops them.
  const std::vector<std::uint64_t>& stats = predicted.second;
  EXPECT_GT(stats[2], 0u);  // far_requests
  EXPECT_GT(stats[3], 0u);  // shadow_hits
  EXPECT_GT(stats[5], 1u);  // shadow_insertions: the first pass and again after the writes
}

TEST(RemoteCopyL2, NoInsertionAtOrAboveTheOccupancyThreshold) {
  // Threshold 0: the gate is closed from the start.
  const auto closed = run_shuffled(partitioned(4, 8, 1.0, 0.0), 1);
  EXPECT_EQ(closed.second, 0u);
  // Threshold 0.5 of 4 ways: a set takes a copy at 0 or 1 shadow lines (0 or 0.25 < 0.5) and
  // none at 2: no set ever holds more than 2.
  auto rig = remote(partitioned(4, 8, 1.0, 0.5));
  std::mt19937_64 workload(5);
  std::uint32_t most = 0;
  for (std::uint64_t k = 0; k < 4000; ++k) {
    rig.send_at(k / 4, read_request((workload() % 512) * kLine, k, rig.client,
                                    static_cast<std::uint16_t>(k % 4)));
    if (k % 64 == 63) {
      rig.bench.events.run(k / 4);
      for (std::uint32_t slice = 0; slice < 4; ++slice)
        for (std::uint64_t line = 0; line < 8 * 4; line += 4)  // one line per set
          most = std::max(most, rig.l2->shadow_ways(slice, line));
    }
  }
  rig.bench.events.run();
  for (std::uint32_t slice = 0; slice < 4; ++slice)
    for (std::uint64_t line = 0; line < 8 * 4; line += 4)
      most = std::max(most, rig.l2->shadow_ways(slice, line));
  EXPECT_GT(rig.stat("shadow_insertions"), 0u);
  EXPECT_EQ(most, 2u);
}

TEST(RemoteCopyL2, OddSliceCountIsAnError) {
  L2Bench<> bench(4);
  // 5 x 16 x 128 x 10 bytes: whole sets, but 5 slices do not split into two partitions.
  try {
    bench.make<RemoteCopyL2>({{"slices", std::int64_t{5}}, {"size", std::int64_t{5 * 16 * 128 * 10}}});
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("slices (5) must be even"), std::string::npos) << e.what();
  }
}

TEST(RemoteCopyL2, Schema) {
  EXPECT_EQ(test::schema_problems<RemoteCopyL2>(), "");
  L2Bench<> bench;
  auto l2 = bench.make<RemoteCopyL2>();
  EXPECT_EQ(bench.stats.names(), test::declared_stats_expanded<RemoteCopyL2>(160));
}

}  // namespace
}  // namespace simfa::memory_models
