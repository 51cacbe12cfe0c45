// The TMA engines (tma.fixed, tma.traffic) and the tensor-core engine (wgmma.half_n), each alone
// against the harness's event queue and recording fakes. Every expected cycle is derived in the
// comment next to it from the defaults: launch 40 + TensorMap setup 130 (TMA_BULK: 40 only).
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "engine_harness.h"
#include "simfa/error.h"
#include "tma_fixed.h"
#include "tma_traffic.h"
#include "wgmma_half_n.h"

namespace simfa::engines {
namespace {

using test::Bench;
using test::ParamOverrides;
using test::RecordingMemory;
using test::RecordingTensorClient;
using test::RecordingTmaClient;
using Done = RecordingTmaClient::Done;

constexpr Addr kBase = Addr{1} << 30;  // line-aligned

// A 2-D fp16 tensor: `shape0` x `shape1` elements, rows `row_stride` bytes apart.
TensorMap map2d(std::uint64_t shape0, std::uint64_t shape1, std::uint64_t row_stride,
                std::uint32_t box0, std::uint32_t box1) {
  TensorMap m;
  m.name = "t";
  m.base = kBase;
  m.elem_bytes = 2;
  m.rank = 2;
  m.shape = {shape0, shape1};
  m.stride = {2, row_stride};
  m.box = {box0, box1};
  return m;
}

TmaOp tensor_op(Opcode op, const TensorMap& m, std::int32_t x, std::int32_t y,
                std::uint64_t token) {
  TmaOp o;
  o.op = op;
  o.map = &m;
  o.coords[0] = x;
  o.coords[1] = y;
  o.bytes = static_cast<std::uint32_t>(m.box_bytes());
  o.token = token;
  return o;
}
TmaOp load(const TensorMap& m, std::int32_t x, std::int32_t y, std::uint64_t token) {
  return tensor_op(Opcode::kTmaLoad, m, x, y, token);
}
TmaOp bulk(Addr addr, std::uint32_t bytes, std::uint64_t token) {
  TmaOp o;
  o.op = Opcode::kTmaBulk;
  o.addr = addr;
  o.bytes = bytes;
  o.token = token;
  return o;
}

// ---- tma.fixed ---------------------------------------------------------------------------------

struct FixedBench {
  explicit FixedBench(const ParamOverrides& o = {}) : tma(bench.make<TmaFixed>(o)) {
    tma->connect(memory, client);
  }
  Bench bench;
  RecordingMemory memory{bench.events, 1};  // must stay unused: level 0 sends no traffic
  RecordingTmaClient client;
  std::unique_ptr<TmaFixed> tma;
};

TEST(TmaFixed, SetupThenInOrderBandwidthQueue) {
  FixedBench f({{"bytes_per_cycle", 64.0}});
  const TensorMap m = map2d(4096, 4096, 8192, 64, 64);  // 8192-byte box: 128 cycles at 64 B/cycle
  f.tma->issue(0, load(m, 0, 0, 1));   // ready 170, transfers [170, 298)
  f.tma->issue(0, load(m, 64, 0, 2));  // ready 170, queue busy until 298: [298, 426)
  f.tma->issue(0, bulk(kBase, 1024, 3));  // ready 40 (no TensorMap setup), waits: [426, 442)
  f.bench.events.run();
  EXPECT_EQ(f.client.done, (std::vector<Done>{{298, 1, 8192}, {426, 2, 8192}, {442, 3, 1024}}));
  EXPECT_TRUE(f.memory.sent.empty());
  EXPECT_EQ(f.bench.stats.value("c.ops"), 3u);
  EXPECT_EQ(f.bench.stats.value("c.bytes"), 8192u * 2 + 1024);
  EXPECT_EQ(f.bench.stats.value("c.busy_cycles"), 442u);  // one interval [0, 442)
}

TEST(TmaFixed, FractionalBandwidthAccumulatesAcrossOps) {
  FixedBench f;  // default 3.35e12 / 132 / 1.83e9 = 13.8686 B/cycle: 100 B take 7.2105 cycles
  f.tma->issue(0, bulk(kBase, 100, 1));  // [40, 47.21) -> completes at 48
  f.tma->issue(0, bulk(kBase, 100, 2));  // [47.21, 54.42) -> 55 (not 48 + 8 = 56)
  f.bench.events.call(200, Priority::kIssue,
                      [&](Cycle now) { f.tma->issue(now, bulk(kBase, 100, 3)); });
  // Third op: ready 240, queue idle: [240, 247.21) -> 248.
  f.bench.events.run();
  EXPECT_EQ(f.client.done, (std::vector<Done>{{48, 1, 100}, {55, 2, 100}, {248, 3, 100}}));
  // Busy: [0, 55) and [200, 248).
  EXPECT_EQ(f.bench.stats.value("c.busy_cycles"), 55u + 48u);
}

// ---- tma.traffic -------------------------------------------------------------------------------

struct TrafficBench {
  TrafficBench(Cycle latency, const ParamOverrides& o = {})
      : memory(bench.events, latency), tma(bench.make<TmaTraffic>(o, 3)) {
    tma->connect(memory, client);
  }
  Bench bench;
  RecordingMemory memory;
  RecordingTmaClient client;
  std::unique_ptr<TmaTraffic> tma;
  std::uint64_t stat(const char* name) const { return bench.stats.value(std::string("c.") + name); }
};

TEST(TmaTraffic, Box64x64IsSixtyFourLinesOnePerCycleAfterSetup) {
  TrafficBench t(100);
  // 64 x 64 fp16 box, rows 8192 B apart: 64 rows x 128 B = 64 distinct lines.
  const TensorMap m = map2d(4096, 4096, 8192, 64, 64);
  t.tma->issue(0, load(m, 0, 0, 7));
  t.bench.events.run();
  ASSERT_EQ(t.memory.sent.size(), 64u);
  for (std::size_t i = 0; i < 64; ++i) {
    SCOPED_TRACE(i);
    const auto& s = t.memory.sent[i];
    EXPECT_EQ(s.at, 170 + i);  // setup 40 + 130, then one request per cycle
    EXPECT_EQ(s.request.addr, kBase + i * 8192);
    EXPECT_EQ(s.request.bytes, 128u);
    EXPECT_EQ(s.request.sm, 3u);
    EXPECT_FALSE(s.request.write);
    EXPECT_EQ(s.request.client, t.tma.get());
  }
  // Last line sent at 170 + 63 = 233, answered at 233 + L = 333 = setup + 63 + L.
  EXPECT_EQ(t.client.done, (std::vector<Done>{{333, 7, 8192}}));
  EXPECT_EQ(t.stat("ops"), 1u);
  EXPECT_EQ(t.stat("lines"), 64u);
  EXPECT_EQ(t.stat("bytes"), 8192u);
  EXPECT_EQ(t.stat("busy_cycles"), 333u);
  EXPECT_EQ(t.stat("dedup_saved_lines"), 0u);
  // One generation step per request and one response each: nothing ticks during the setup or
  // while waiting for responses.
  EXPECT_EQ(t.bench.events.fired(), 128u);
}

TEST(TmaTraffic, MaxOutstandingThrottlesGeneration) {
  TrafficBench t(20, {{"max_outstanding", std::int64_t{4}}});
  const TensorMap m = map2d(4096, 4096, 8192, 64, 64);
  t.tma->issue(0, load(m, 0, 0, 1));
  t.bench.events.run();
  ASSERT_EQ(t.memory.sent.size(), 64u);
  // Four requests leave at 170..173; each response (20 cycles later, memory priority) frees a
  // slot that the same cycle's step refills: request i leaves at 170 + 20 (i / 4) + i % 4.
  for (std::size_t i = 0; i < 64; ++i) EXPECT_EQ(t.memory.sent[i].at, 170 + 20 * (i / 4) + i % 4) << i;
  EXPECT_EQ(t.memory.max_in_flight, 4u);
  // Last request at 170 + 20 * 15 + 3 = 473, answered at 493.
  EXPECT_EQ(t.client.done, (std::vector<Done>{{493, 1, 8192}}));
}

TEST(TmaTraffic, ConsecutiveOpsOverlapInFlightButGenerateInOrder) {
  TrafficBench t(100);
  const TensorMap m = map2d(4096, 4096, 8192, 64, 64);
  t.tma->issue(0, load(m, 0, 0, 1));
  t.tma->issue(0, load(m, 64, 0, 2));  // also ready at 170, but waits for op 1's generation
  t.bench.events.run();
  ASSERT_EQ(t.memory.sent.size(), 128u);
  // Op 2 sends at 234..297 while op 1's responses (270..333) are still out.
  for (std::size_t i = 0; i < 64; ++i) {
    EXPECT_EQ(t.memory.sent[64 + i].at, 234 + i);
    EXPECT_EQ(t.memory.sent[64 + i].request.addr, kBase + 128 + i * 8192);
  }
  EXPECT_EQ(t.client.done, (std::vector<Done>{{333, 1, 8192}, {397, 2, 8192}}));
}

TEST(TmaTraffic, RequestsPerCycle) {
  TrafficBench t(100, {{"requests_per_cycle", std::int64_t{2}}});
  const TensorMap m = map2d(4096, 4096, 8192, 64, 64);
  t.tma->issue(0, load(m, 0, 0, 1));
  t.bench.events.run();
  ASSERT_EQ(t.memory.sent.size(), 64u);
  for (std::size_t i = 0; i < 64; ++i) EXPECT_EQ(t.memory.sent[i].at, 170 + i / 2) << i;
  // Last pair at 170 + 31 = 201, answered at 301.
  EXPECT_EQ(t.client.done, (std::vector<Done>{{301, 1, 8192}}));
}

TEST(TmaTraffic, MaxOutstandingBindsWithinACycleToo) {
  TrafficBench t(20, {{"requests_per_cycle", std::int64_t{2}},
                      {"max_outstanding", std::int64_t{3}}});
  const TensorMap m = map2d(4096, 4096, 8192, 64, 64);
  t.tma->issue(0, load(m, 0, 0, 1));
  t.bench.events.run();
  ASSERT_EQ(t.memory.sent.size(), 64u);
  // 170: two requests; 171: one (budget left, but three in flight). At 190 two responses free
  // two slots: two requests; at 191 one. Request i leaves at 170 + 20 (i / 3) + (i % 3 == 2).
  for (std::size_t i = 0; i < 64; ++i)
    EXPECT_EQ(t.memory.sent[i].at, 170 + 20 * (i / 3) + (i % 3 == 2 ? 1 : 0)) << i;
  EXPECT_EQ(t.memory.max_in_flight, 3u);
  // Request 63 leaves at 170 + 20 * 21 = 590, answered at 610.
  EXPECT_EQ(t.client.done, (std::vector<Done>{{610, 1, 8192}}));
}

TEST(TmaTraffic, DedupMergesRowsSharingALine) {
  // 32 x 64 fp16 box of a dense 32-wide tensor: rows are 64 B and contiguous, so rows 2j and
  // 2j + 1 share line j: 64 rows, 32 distinct lines.
  const TensorMap m = map2d(32, 4096, 64, 32, 64);
  TrafficBench t(50);
  t.tma->issue(0, load(m, 0, 0, 1));
  t.bench.events.run();
  ASSERT_EQ(t.memory.sent.size(), 32u);
  for (std::size_t i = 0; i < 32; ++i) EXPECT_EQ(t.memory.sent[i].request.addr, kBase + i * 128);
  EXPECT_EQ(t.client.done, (std::vector<Done>{{170 + 31 + 50, 1, 4096}}));
  EXPECT_EQ(t.stat("dedup_saved_lines"), 32u);

  // Without dedup: every row's two 32-byte sectors, 128 requests, nothing merged.
  TrafficBench raw(50, {{"dedup", false}});
  raw.tma->issue(0, load(m, 0, 0, 1));
  raw.bench.events.run();
  ASSERT_EQ(raw.memory.sent.size(), 128u);
  for (std::size_t i = 0; i < 128; ++i) {
    EXPECT_EQ(raw.memory.sent[i].request.addr, kBase + i * 32);
    EXPECT_EQ(raw.memory.sent[i].request.bytes, 32u);
  }
  EXPECT_EQ(raw.client.done, (std::vector<Done>{{170 + 127 + 50, 1, 4096}}));
  EXPECT_EQ(raw.stat("dedup_saved_lines"), 0u);
  EXPECT_EQ(raw.stat("lines"), 128u);
}

TEST(TmaTraffic, DedupKeepsFirstOccurrenceOrderWhenRowsAreNotSorted) {
  // Rank 3, dim 1 strided 1024 B, dim 2 only 64 B: rows visit 0, 1024, 2048, 3072, then 64,
  // 1088, 2112, 3136, which fall in the same four lines again.
  TensorMap m;
  m.base = kBase;
  m.elem_bytes = 2;
  m.rank = 3;
  m.shape = {32, 4, 2};
  m.stride = {2, 1024, 64};
  m.box = {32, 4, 2};
  TrafficBench t(10);
  TmaOp op = load(m, 0, 0, 1);
  t.tma->issue(0, op);
  t.bench.events.run();
  ASSERT_EQ(t.memory.sent.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(t.memory.sent[i].request.addr, kBase + i * 1024);
  EXPECT_EQ(t.stat("dedup_saved_lines"), 4u);
}

TEST(TmaTraffic, ClipsAtTheTensorEdge) {
  // 100 x 70 tensor; the box at (64, 40) keeps columns 64..99 (72 B at +128) of rows 40..69.
  const TensorMap m = map2d(100, 70, 8192, 64, 64);
  TrafficBench t(100);
  t.tma->issue(0, load(m, 64, 40, 1));
  t.bench.events.run();
  ASSERT_EQ(t.memory.sent.size(), 30u);
  for (std::size_t i = 0; i < 30; ++i)
    EXPECT_EQ(t.memory.sent[i].request.addr, kBase + 128 + (40 + i) * 8192);
  // 30 lines: 170 + 29 + 100. The mbarrier still gets the whole box (zero-filled bytes count).
  EXPECT_EQ(t.client.done, (std::vector<Done>{{299, 1, 8192}}));

  // Negative origin (-32, -10): columns 0..31 (64 B) of rows 0..53.
  TrafficBench neg(100);
  neg.tma->issue(0, load(m, -32, -10, 2));
  neg.bench.events.run();
  ASSERT_EQ(neg.memory.sent.size(), 54u);
  EXPECT_EQ(neg.memory.sent.front().request.addr, kBase);
  EXPECT_EQ(neg.memory.sent.back().request.addr, kBase + 53 * 8192);
}

TEST(TmaTraffic, BoxEntirelyOutsideCompletesAfterSetupWithoutTraffic) {
  const TensorMap m = map2d(100, 70, 8192, 64, 64);
  TrafficBench t(100);
  t.tma->issue(0, load(m, 128, 0, 1));
  t.tma->issue(0, load(m, 0, 0, 2));  // behind it in the FIFO, starts the same cycle
  t.bench.events.run();
  ASSERT_EQ(t.memory.sent.size(), 64u);
  EXPECT_EQ(t.memory.sent.front().at, 170u);
  EXPECT_EQ(t.client.done, (std::vector<Done>{{170, 1, 8192}, {333, 2, 8192}}));
}

TEST(TmaTraffic, RowsPastTheEdgeAreRequestedFromTheEdgeLinesWhenAsked) {
  // 100 x 70 tensor, box (64, 40): rows 40..69 inside, 34 rows past the edge.
  const TensorMap m = map2d(100, 70, 8192, 64, 64);
  const std::int32_t at[] = {64, 40}, outside[] = {128, 0}, inside[] = {0, 0};
  EXPECT_EQ(m.rows_outside(at), 34u);
  EXPECT_EQ(m.rows_outside(outside), 64u);  // no column inside: every row
  EXPECT_EQ(m.rows_outside(inside), 0u);

  TrafficBench t(100, {{"edge_rows", std::string("requested")}, {"edge_lines", std::int64_t{4}}});
  t.tma->issue(0, load(m, 64, 40, 1));
  t.bench.events.run();
  // The 30 rows inside first, as when skipped, then 34 requests cycling over 4 reserved lines.
  ASSERT_EQ(t.memory.sent.size(), 64u);
  for (std::size_t i = 0; i < 30; ++i)
    EXPECT_EQ(t.memory.sent[i].request.addr, kBase + 128 + (40 + i) * 8192);
  std::set<Addr> edge;
  for (std::size_t i = 30; i < 64; ++i) {
    EXPECT_FALSE(t.memory.sent[i].request.write);
    edge.insert(t.memory.sent[i].request.addr);
  }
  EXPECT_EQ(edge.size(), 4u);
  EXPECT_EQ(*edge.rbegin() - *edge.begin(), 3u * 128);
  // 64 lines: 170 + 63 + 100, as a box wholly inside.
  EXPECT_EQ(t.client.done, (std::vector<Done>{{333, 1, 8192}}));
  EXPECT_EQ(t.stat("edge_lines"), 34u);

  // Stores never write past the edge.
  TrafficBench st(100, {{"edge_rows", std::string("requested")}});
  st.tma->issue(0, tensor_op(Opcode::kTmaStore, m, 64, 40, 2));
  st.bench.events.run();
  EXPECT_EQ(st.memory.sent.size(), 30u);
  EXPECT_EQ(st.stat("edge_lines"), 0u);
}

TEST(TmaTraffic, BulkSkipsTheTensorMapSetup) {
  TrafficBench t(100);
  // [base + 64, base + 1088): lines 0..8 of the base, 9 requests.
  t.tma->issue(0, bulk(kBase + 64, 1024, 1));
  t.bench.events.run();
  ASSERT_EQ(t.memory.sent.size(), 9u);
  for (std::size_t i = 0; i < 9; ++i) {
    EXPECT_EQ(t.memory.sent[i].at, 40 + i);  // launch latency only
    EXPECT_EQ(t.memory.sent[i].request.addr, kBase + i * 128);
  }
  EXPECT_EQ(t.client.done, (std::vector<Done>{{40 + 8 + 100, 1, 1024}}));
}

TEST(TmaTraffic, StoreEmitsWrites) {
  TrafficBench t(100);
  const TensorMap m = map2d(4096, 4096, 8192, 64, 64);
  t.tma->issue(0, tensor_op(Opcode::kTmaStore, m, 0, 0, 5));
  t.bench.events.run();
  ASSERT_EQ(t.memory.sent.size(), 64u);
  for (const auto& s : t.memory.sent) EXPECT_TRUE(s.request.write);
  EXPECT_EQ(t.client.done, (std::vector<Done>{{333, 5, 8192}}));  // same path as a load
}

// store_completion = "sent": a store is reported the cycle after its last line left (233 + 1),
// not when the last write is answered (333); the engine stays busy until then, and a load still
// completes on its last response.
TEST(TmaTraffic, StoreCompletesWhenSent) {
  TrafficBench t(100, {{"store_completion", std::string("sent")}});
  const TensorMap m = map2d(4096, 4096, 8192, 64, 64);
  t.tma->issue(0, tensor_op(Opcode::kTmaStore, m, 0, 0, 5));
  t.tma->issue(0, load(m, 0, 64, 6));  // ready 170, its lines follow the store's: 234..297
  t.bench.events.run();
  EXPECT_EQ(t.client.done, (std::vector<Done>{{234, 5, 8192}, {397, 6, 8192}}));
  EXPECT_EQ(t.stat("busy_cycles"), 397u);
}

// response_bytes_per_cycle: the lines of a load pass the SM's response port one after another.
// Four requests a cycle leave at 170..185 and arrive at 270..285, four a cycle; at 64 B a cycle a
// 128-byte line takes 2 cycles, so line i passes at 270 + 2 i and the last (63) at 396, not 285.
TEST(TmaTraffic, ResponsePortSpacesTheLinesOfALoad) {
  const TensorMap m = map2d(4096, 4096, 8192, 64, 64);
  TrafficBench free_port(100, {{"requests_per_cycle", std::int64_t{4}}});
  free_port.tma->issue(0, load(m, 0, 0, 1));
  free_port.bench.events.run();
  EXPECT_EQ(free_port.client.done, (std::vector<Done>{{285, 1, 8192}}));

  TrafficBench t(100, {{"requests_per_cycle", std::int64_t{4}},
                       {"response_bytes_per_cycle", 64.0}});
  t.tma->issue(0, load(m, 0, 0, 1));
  t.bench.events.run();
  EXPECT_EQ(t.client.done, (std::vector<Done>{{396, 1, 8192}}));
}

// A fractional rate keeps its fraction across lines and ops: at 48 B a cycle a line takes 8/3
// cycles, so of the 128 lines arriving from 270 line i passes at 270 + 8 i / 3, rounded up: op 1's
// last (63) at 270 + 168 = 438, op 2's (127) at 270 + 338.7 -> 609. Writes do not use the port: a
// store issued with them completes on its last answer, as without one (its lines wait for request
// slots, max_outstanding 128, and leave as op 1's answers arrive, 270..285: answered at 385).
TEST(TmaTraffic, ResponsePortKeepsFractionsAndLetsWritesBy) {
  TrafficBench t(100, {{"requests_per_cycle", std::int64_t{4}},
                       {"response_bytes_per_cycle", 48.0}});
  const TensorMap m = map2d(4096, 4096, 8192, 64, 64);
  t.tma->issue(0, load(m, 0, 0, 1));
  t.tma->issue(0, load(m, 64, 0, 2));
  t.tma->issue(0, tensor_op(Opcode::kTmaStore, m, 0, 64, 3));
  t.bench.events.run();
  EXPECT_EQ(t.client.done, (std::vector<Done>{{385, 3, 8192}, {438, 1, 8192}, {609, 2, 8192}}));
}

TEST(TmaTraffic, BusyCyclesAreTheUnionOfOpIntervals) {
  TrafficBench t(100);
  const TensorMap m = map2d(4096, 4096, 8192, 64, 64);
  t.tma->issue(0, load(m, 0, 0, 1));  // in flight [0, 333)
  t.bench.events.call(1000, Priority::kIssue,
                      [&](Cycle now) { t.tma->issue(now, load(m, 0, 64, 2)); });  // [1000, 1333)
  t.bench.events.run();
  EXPECT_EQ(t.client.done, (std::vector<Done>{{333, 1, 8192}, {1333, 2, 8192}}));
  EXPECT_EQ(t.stat("busy_cycles"), 666u);
  EXPECT_EQ(t.stat("ops"), 2u);
  EXPECT_EQ(t.stat("bytes"), 16384u);
}

// The loaded-DRAM law (loaded_dram_rate, loaded_base_ns): at the harness's 1000 MHz 16e9 B/s is
// 16 B a cycle and 500 ns 500 cycles. Two 8 KiB loads issued together, three other SMs loading:
// op 1 has nothing ahead and no floor; op 2 has op 1's 8192 B ahead at a quarter of the rate
// (four SMs), floor 500 + 8192 x 4 / 16 = 2548. Their last lines land at 333 and 397 (64 lines a
// cycle apart from 170 and 234, latency 100): op 1 completes then, op 2 waits for its floor.
TEST(TmaTraffic, LoadedDramLawHoldsADramLoadForTheBytesAheadOfIt) {
  const ParamOverrides law{{"loaded_dram_rate", 16e9}, {"loaded_base_ns", 500.0}};
  const TensorMap m = map2d(4096, 4096, 8192, 64, 64);
  TrafficBench t(100, law);
  t.memory.answers_from_dram = true;
  t.memory.other_sms = 3;
  t.tma->issue(0, load(m, 0, 0, 1));
  t.tma->issue(0, load(m, 64, 0, 2));
  EXPECT_EQ(t.memory.census, 1);  // this SM counted once, from its first load
  t.bench.events.run();
  EXPECT_EQ(t.client.done, (std::vector<Done>{{333, 1, 8192}, {2548, 2, 8192}}));
  EXPECT_EQ(t.memory.census, 0);  // and uncounted once both are done
  EXPECT_EQ(t.stat("loaded_ops"), 1u);
  EXPECT_EQ(t.stat("loaded_cycles"), 2548u - 397);
}

// Loads whose lines all hit in the L2 (from_dram false) are never held, and a store is neither
// held nor counted ahead of a load: the same ops land when their last lines do.
TEST(TmaTraffic, LoadedDramLawLeavesHitsAndStoresAlone) {
  const ParamOverrides law{{"loaded_dram_rate", 16e9}, {"loaded_base_ns", 500.0}};
  const TensorMap m = map2d(4096, 4096, 8192, 64, 64);
  TrafficBench hits(100, law);
  hits.memory.other_sms = 3;
  hits.tma->issue(0, load(m, 0, 0, 1));
  hits.tma->issue(0, load(m, 64, 0, 2));
  hits.bench.events.run();
  EXPECT_EQ(hits.client.done, (std::vector<Done>{{333, 1, 8192}, {397, 2, 8192}}));
  EXPECT_EQ(hits.stat("loaded_ops"), 0u);

  // A store first: the load behind it has nothing ahead of it, no floor; its lines leave after
  // the store's 64, from 234, and land at 397. With a load in the store's place it would wait
  // for 500 + 8192 x 4 / 16 = 2548, as above.
  TrafficBench store(100, law);
  store.memory.answers_from_dram = true;
  store.memory.other_sms = 3;
  store.tma->issue(0, tensor_op(Opcode::kTmaStore, m, 0, 0, 1));
  store.tma->issue(0, load(m, 64, 0, 2));
  store.bench.events.run();
  EXPECT_EQ(store.client.done, (std::vector<Done>{{333, 1, 8192}, {397, 2, 8192}}));
  EXPECT_EQ(store.stat("loaded_ops"), 0u);
}

// A TMA engine's ops issued at given cycles on a memory port of one latency: the regimes its
// lines' timing must keep whichever way the port takes them (setup, max_outstanding throttling
// within and across cycles, requests_per_cycle, consecutive ops, an empty op in the FIFO, bulk
// copies, stores reported when sent, a late issue).
struct Scenario {
  const char* name;
  ParamOverrides params;
  Cycle latency;
  std::vector<std::pair<Cycle, TmaOp>> ops;  ///< issue cycle, op
};

std::vector<Scenario> engine_regimes(const TensorMap& m, const TensorMap& edge) {
  return {
      {"one box", {}, 100, {{0, load(m, 0, 0, 1)}}},
      {"max_outstanding 4", {{"max_outstanding", std::int64_t{4}}}, 20, {{0, load(m, 0, 0, 1)}}},
      {"two ops", {}, 100, {{0, load(m, 0, 0, 1)}, {0, load(m, 64, 0, 2)}}},
      {"requests_per_cycle 2", {{"requests_per_cycle", std::int64_t{2}}}, 100,
       {{0, load(m, 0, 0, 1)}, {5, load(m, 64, 0, 2)}}},
      {"rpc 2, max_outstanding 3",
       {{"requests_per_cycle", std::int64_t{2}}, {"max_outstanding", std::int64_t{3}}}, 20,
       {{0, load(m, 0, 0, 1)}, {0, bulk(kBase + 64, 1024, 2)}}},
      {"rpc 3, max_outstanding 5",
       {{"requests_per_cycle", std::int64_t{3}}, {"max_outstanding", std::int64_t{5}}}, 7,
       {{0, load(m, 0, 0, 1)}, {30, load(m, 64, 0, 2)}, {31, bulk(kBase, 200, 3)}}},
      {"empty op between",
       {{"max_outstanding", std::int64_t{16}}}, 50,
       {{0, load(m, 0, 0, 1)}, {0, load(edge, 128, 0, 2)}, {0, load(m, 0, 64, 3)},
        {400, load(edge, 128, 0, 4)}}},
      {"stores sent", {{"store_completion", std::string("sent")}}, 100,
       {{0, tensor_op(Opcode::kTmaStore, m, 0, 0, 5)}, {0, load(m, 0, 64, 6)},
        {250, tensor_op(Opcode::kTmaStore, m, 64, 0, 7)}}},
      {"late issue", {}, 100, {{0, load(m, 0, 0, 1)}, {1000, load(m, 0, 64, 2)}}},
  };
}

// With a port that takes bursts, the engine books its lines ahead (docs/performance.md §10):
// every line must leave at the cycle its step would have sent it, and every op complete when it
// would have, in each of the engine's regimes (setup, max_outstanding throttling within and
// across cycles, requests_per_cycle, consecutive ops, an empty op in the FIFO, bulk copies,
// stores reported when sent).
TEST(TmaTraffic, BurstsLeaveAtTheCyclesOfTheStepsAndCompleteAlike) {
  using test::BurstRecordingMemory;
  const TensorMap m = map2d(4096, 4096, 8192, 64, 64);
  const TensorMap edge = map2d(100, 70, 8192, 64, 64);
  std::vector<Scenario> scenarios = engine_regimes(m, edge);
  // 2,049 lines booked at once, past the wheel's first 1,024 cycles: it grows.
  scenarios.push_back({"long bulk", {{"max_outstanding", std::int64_t{4096}}}, 100,
                       {{0, bulk(kBase + 64, 2048 * 128, 1)}, {10, load(m, 0, 0, 2)}}});
  for (const Scenario& sc : scenarios) {
    SCOPED_TRACE(sc.name);
    Bench line_bench, burst_bench;
    RecordingMemory line_memory(line_bench.events, sc.latency);
    BurstRecordingMemory burst_memory(burst_bench.events, sc.latency);
    RecordingTmaClient line_client, burst_client;
    auto line_tma = line_bench.make<TmaTraffic>(sc.params, 3);
    auto burst_tma = burst_bench.make<TmaTraffic>(sc.params, 3);
    line_tma->connect(line_memory, line_client);
    burst_tma->connect(burst_memory, burst_client);
    for (const auto& [at, op] : sc.ops) {
      line_bench.events.call(at, Priority::kIssue,
                             [&, op](Cycle now) { line_tma->issue(now, op); });
      burst_bench.events.call(at, Priority::kIssue,
                              [&, op](Cycle now) { burst_tma->issue(now, op); });
    }
    line_bench.events.run();
    burst_bench.events.run();
    ASSERT_EQ(burst_memory.lines.sent.size(), line_memory.sent.size());
    for (std::size_t i = 0; i < line_memory.sent.size(); ++i) {
      SCOPED_TRACE(i);
      const auto& a = line_memory.sent[i];
      const auto& b = burst_memory.lines.sent[i];
      EXPECT_EQ(b.at, a.at);
      EXPECT_EQ(b.request.addr, a.request.addr);
      EXPECT_EQ(b.request.write, a.request.write);
      EXPECT_EQ(b.request.bytes, a.request.bytes);
      EXPECT_EQ(b.request.sm, a.request.sm);
    }
    EXPECT_EQ(burst_client.done, line_client.done);
    EXPECT_EQ(burst_memory.lines.max_in_flight, line_memory.max_in_flight);
    EXPECT_EQ(burst_bench.stats.value("c.lines"), line_bench.stats.value("c.lines"));
    EXPECT_EQ(burst_bench.stats.value("c.busy_cycles"), line_bench.stats.value("c.busy_cycles"));
    EXPECT_GT(burst_memory.bursts, 0u);
  }
}

// With a port of fixed latency the engine times each op's lines itself when it is issued
// (docs/performance.md §20): every line must be counted at the cycle its step would have sent it
// and every op complete when and in the order it would have, in each of the engine's regimes.
TEST(TmaTraffic, TimedLinesLeaveAtTheCyclesOfTheStepsAndCompleteAlike) {
  const TensorMap m = map2d(4096, 4096, 8192, 64, 64);
  const TensorMap edge = map2d(100, 70, 8192, 64, 64);
  const TensorMap shared_rows = map2d(4096, 4096, 64, 64, 8);  // 128 B rows 64 B apart
  const TensorMap off_pitch = map2d(4096, 4096, 8256, 64, 16);  // a row a line and 64 B on
  // FA3's layout (head_dim, tokens, heads, batch): a box of 64 tokens of one head, and one of
  // 2 tokens x 3 heads, whose rows run along two dimensions.
  TensorMap bshd = map2d(128, 1000, 8 * 256, 128, 64);
  bshd.rank = 4;
  bshd.shape = {128, 1000, 8, 2};
  bshd.stride = {2, 8 * 256, 256, 1000 * 8 * 256};
  bshd.box = {128, 64, 1, 1};
  TensorMap bshd_heads = bshd;
  bshd_heads.box = {128, 2, 3, 1};
  auto load4 = [](const TensorMap& map, std::int32_t token, std::int32_t head, std::uint64_t t) {
    TmaOp op = load(map, 0, token, t);
    op.coords[2] = head;
    op.coords[3] = 1;
    return op;
  };
  std::vector<Scenario> scenarios = engine_regimes(m, edge);
  const std::vector<Scenario> more = {
      {"empty ops behind a full window, rpc 2",
       {{"requests_per_cycle", std::int64_t{2}}, {"max_outstanding", std::int64_t{3}}}, 9,
       {{0, bulk(kBase, 640, 1)}, {0, load(edge, 128, 0, 2)}, {0, load(edge, 128, 0, 3)},
        {2, bulk(kBase + 4096, 384, 4)}}},
      {"stores sent, latency 1", {{"store_completion", std::string("sent")}}, 1,
       {{0, tensor_op(Opcode::kTmaStore, m, 0, 0, 5)}, {3, load(m, 0, 64, 6)}}},
      {"issued while the window is full", {{"max_outstanding", std::int64_t{8}}}, 30,
       {{0, bulk(kBase, 4096, 1)}, {45, load(m, 0, 0, 2)}, {46, load(edge, 128, 0, 3)}}},
      // Counted from the box's shape, or, where lines may repeat, from its addresses.
      {"rows sharing lines, off the line, clipped", {}, 40,
       {{0, load(shared_rows, 0, 0, 1)}, {0, load(off_pitch, 3, 0, 2)},
        {0, load(edge, 40, 30, 3)}, {5, bulk(kBase + 40, 300, 4)}}},
      {"edge rows requested, no dedup",
       {{"edge_rows", std::string("requested")}, {"dedup", false}}, 40,
       {{0, load(edge, 40, 30, 1)}, {0, load(off_pitch, 3, 0, 2)}}},
      {"four dimensions", {}, 60,
       {{0, load4(bshd, 0, 3, 1)}, {0, load4(bshd, 980, 7, 2)}, {3, load4(bshd_heads, 5, 6, 3)}}},
      {"edge rows requested", {{"edge_rows", std::string("requested")}}, 40,
       {{0, load(edge, 40, 30, 1)}, {0, load(edge, 128, 0, 2)}}},
  };
  scenarios.insert(scenarios.end(), more.begin(), more.end());
  for (const Scenario& sc : scenarios) {
    SCOPED_TRACE(sc.name);
    Bench line_bench, timed_bench;
    RecordingMemory line_memory(line_bench.events, sc.latency);
    test::CountingMemory timed_memory(sc.latency);
    RecordingTmaClient line_client, timed_client;
    auto line_tma = line_bench.make<TmaTraffic>(sc.params, 3);
    auto timed_tma = timed_bench.make<TmaTraffic>(sc.params, 3);
    line_tma->connect(line_memory, line_client);
    timed_tma->connect(timed_memory, timed_client);
    for (const auto& [at, op] : sc.ops) {
      line_bench.events.call(at, Priority::kIssue,
                             [&, op](Cycle now) { line_tma->issue(now, op); });
      timed_bench.events.call(at, Priority::kIssue,
                              [&, op](Cycle now) { timed_tma->issue(now, op); });
    }
    line_bench.events.run();
    timed_bench.events.run();
    EXPECT_EQ(timed_memory.sent, 0u);
    EXPECT_EQ(timed_memory.runs_in_the_past, 0u);
    ASSERT_EQ(timed_memory.lines.size(), line_memory.sent.size());
    for (std::size_t i = 0; i < line_memory.sent.size(); ++i) {
      SCOPED_TRACE(i);
      const auto& a = line_memory.sent[i];
      const auto& b = timed_memory.lines[i];
      EXPECT_EQ(b.at, a.at);
      EXPECT_EQ(b.request.write, a.request.write);
      EXPECT_EQ(b.request.bytes, a.request.bytes);
      EXPECT_EQ(b.request.sm, a.request.sm);
    }
    EXPECT_EQ(timed_client.done, line_client.done);
    EXPECT_EQ(timed_bench.stats.value("c.lines"), line_bench.stats.value("c.lines"));
    EXPECT_EQ(timed_bench.stats.value("c.busy_cycles"), line_bench.stats.value("c.busy_cycles"));
    EXPECT_EQ(timed_bench.stats.value("c.dedup_saved_lines"),
              line_bench.stats.value("c.dedup_saved_lines"));
    EXPECT_EQ(timed_bench.stats.value("c.edge_lines"), line_bench.stats.value("c.edge_lines"));
    EXPECT_LT(timed_bench.events.fired(), line_bench.events.fired());
  }
}

// A port that runs the engines' steps (MemoryPort::defer_step, docs/performance.md §16) runs each
// where its event would fire: three engines sharing one port send the same lines at the same
// cycles in the same order, and complete the same ops at the same cycles in the same order, as
// with an event per step, in fewer events. Steps follow responses (max_outstanding binds), the
// next cycle's budget and an op's setup; a store is reported when sent.
TEST(TmaTraffic, StepsRunByThePortLeaveAndCompleteAsTheirEvents) {
  const TensorMap m = map2d(4096, 4096, 8192, 64, 64);
  struct Run {
    Bench bench;
    RecordingMemory memory{bench.events, 20};
    RecordingTmaClient client;  // shared: the completions of all three in their order
    std::vector<std::unique_ptr<TmaTraffic>> tmas;
  };
  auto run = [&](Run& r, bool steps) {
    if (steps) r.memory.run_steps();
    for (int sm = 0; sm < 3; ++sm) {
      r.tmas.push_back(r.bench.make<TmaTraffic>(
          {{"max_outstanding", std::int64_t{4 + sm}}, {"store_completion", std::string("sent")}},
          sm, "sm" + std::to_string(sm)));
      r.tmas.back()->connect(r.memory, r.client);
    }
    for (int sm = 0; sm < 3; ++sm) {
      TmaTraffic* tma = r.tmas[static_cast<std::size_t>(sm)].get();
      const auto token = static_cast<std::uint64_t>(sm) * 10;
      r.bench.events.call(static_cast<Cycle>(sm), Priority::kIssue, [=](Cycle now) {
        tma->issue(now, load(m, 0, 64 * sm, token + 1));
        tma->issue(now, tensor_op(Opcode::kTmaStore, m, 64, 64 * sm, token + 2));
      });
      r.bench.events.call(300, Priority::kIssue,
                          [=](Cycle now) { tma->issue(now, bulk(kBase, 1024, token + 3)); });
    }
    r.bench.events.run();
  };
  Run events, steps;
  run(events, false);
  run(steps, true);
  ASSERT_EQ(steps.memory.sent.size(), events.memory.sent.size());
  for (std::size_t i = 0; i < events.memory.sent.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(steps.memory.sent[i].at, events.memory.sent[i].at);
    EXPECT_EQ(steps.memory.sent[i].request.sm, events.memory.sent[i].request.sm);
    EXPECT_EQ(steps.memory.sent[i].request.addr, events.memory.sent[i].request.addr);
  }
  EXPECT_EQ(steps.client.done, events.client.done);
  EXPECT_EQ(steps.client.done.size(), 9u);
  EXPECT_LT(steps.bench.events.fired(), events.bench.events.fired());
}

// The point of bursts: one box of 64 lines, with the slots to send them all, is one burst, and
// the engine fires no step event of its own (the port's wheel fires one event a cycle).
TEST(TmaTraffic, ABoxIsOneBurstWithoutEngineSteps) {
  Bench bench;
  test::BurstRecordingMemory memory(bench.events, 100);
  RecordingTmaClient client;
  auto tma = bench.make<TmaTraffic>({}, 3);
  tma->connect(memory, client);
  tma->issue(0, load(map2d(4096, 4096, 8192, 64, 64), 0, 0, 7));
  bench.events.run();
  EXPECT_EQ(memory.bursts, 1u);
  ASSERT_EQ(memory.lines.sent.size(), 64u);
  EXPECT_EQ(memory.lines.sent.back().at, 233u);
  EXPECT_EQ(client.done, (std::vector<Done>{{333, 7, 8192}}));
  // 64 wheel events (one line a cycle) and 64 responses: the same count as line by line here,
  // since only one SM sends; with many, a cycle's event sends every SM's line.
  EXPECT_EQ(bench.events.fired(), 128u);
}

TEST(TmaTraffic, LineBytesMustBeAMultipleOfTheSector) {
  Bench bench;
  EXPECT_THROW(bench.make<TmaTraffic>({{"line_bytes", std::int64_t{100}}}), InputError);
}

// ---- wgmma.half_n ------------------------------------------------------------------------------

TEST(WgmmaLaw, HalfNScaledByTilesAndKeff) {
  for (std::uint32_t n = 8; n <= 256; n += 8)
    EXPECT_EQ(wgmma_cycles(WgmmaLatencyModel::kHalfN, 1.0, 64, n, 16), n / 2) << n;
  // M = 128, K = 32: two m64 tiles x two k16 steps of N/2 = 64 -> 256.
  EXPECT_EQ(wgmma_cycles(WgmmaLatencyModel::kHalfN, 1.0, 128, 128, 32), 256u);
  // H20's k_eff (paper VI-C): 5.176 x 64 = 331.26 -> 331.
  EXPECT_EQ(wgmma_cycles(WgmmaLatencyModel::kHalfN, 5.176, 64, 128, 16), 331u);
  // 0.1 x 4 = 0.4 rounds to 0: at least one cycle.
  EXPECT_EQ(wgmma_cycles(WgmmaLatencyModel::kHalfN, 0.1, 64, 8, 16), 1u);
}

TEST(WgmmaLaw, TableModelMeasuredPointsAndInterpolation) {
  const std::pair<std::uint32_t, Cycle> measured[] = {{8, 18},  {16, 20},  {32, 24},
                                                      {64, 32}, {128, 64}, {256, 128}};
  for (auto [n, cycles] : measured)
    EXPECT_EQ(wgmma_cycles(WgmmaLatencyModel::kTable, 1.0, 64, n, 16), cycles) << n;
  // Linear between neighbours: 24 -> (20 + 24) / 2 = 22; 96 -> (32 + 64) / 2 = 48.
  EXPECT_EQ(wgmma_cycles(WgmmaLatencyModel::kTable, 1.0, 64, 24, 16), 22u);
  EXPECT_EQ(wgmma_cycles(WgmmaLatencyModel::kTable, 1.0, 64, 96, 16), 48u);
  EXPECT_EQ(wgmma_cycles(WgmmaLatencyModel::kTable, 1.0, 64, 200, 16), 100u);
  // Outside [8, 256] the end segments extend: N = 4 -> 18 - 4 x 2/8 = 17.
  EXPECT_EQ(wgmma_cycles(WgmmaLatencyModel::kTable, 1.0, 64, 4, 16), 17u);
}

struct WgmmaBench {
  explicit WgmmaBench(const ParamOverrides& o = {}) : engine(bench.make<WgmmaHalfN>(o)) {
    engine->connect(client);
  }
  // Issue `op` in the SM issue phase of cycle `at` (after that cycle's completions).
  void issue_at(Cycle at, std::uint32_t n, std::uint64_t token, std::uint32_t warpgroup = 0) {
    bench.events.call(at, Priority::kIssue, [this, n, token, warpgroup](Cycle now) {
      ASSERT_TRUE(engine->can_accept(now)) << "at " << now;
      engine->issue(now, WgmmaOp{64, n, 16, token, warpgroup});
    });
  }
  void refused_at(Cycle at) {
    bench.events.call(at, Priority::kIssue,
                      [this](Cycle now) { EXPECT_FALSE(engine->can_accept(now)) << "at " << now; });
  }
  Bench bench;
  RecordingTensorClient client;
  std::unique_ptr<WgmmaHalfN> engine;
};

using Completions = std::vector<std::pair<Cycle, std::uint64_t>>;

TEST(WgmmaHalfN, InOrderPipeline) {
  WgmmaBench w;
  w.issue_at(0, 256, 1);  // [0, 128)
  w.issue_at(1, 8, 2);    // short, but behind: [128, 132)
  w.issue_at(2, 64, 3);   // [132, 164)
  w.bench.events.run();
  EXPECT_EQ(w.client.completed, (Completions{{128, 1}, {132, 2}, {164, 3}}));
  EXPECT_TRUE(w.client.slot_free.empty());  // never refused
  EXPECT_EQ(w.bench.stats.value("c.wgmma_issued"), 3u);
  EXPECT_EQ(w.bench.stats.value("c.busy_cycles"), 164u);
  EXPECT_EQ(w.bench.stats.value("c.flops"), 2u * 64 * 16 * (256 + 8 + 64));
}

// Three WGMMAs of WarpGroup 0, then two of WarpGroup 1 while the first runs (32 cycles each).
void issue_two_warpgroups(WgmmaBench& w) {
  w.issue_at(0, 64, 1, 0);
  w.issue_at(1, 64, 2, 0);
  w.issue_at(2, 64, 3, 0);
  w.issue_at(3, 64, 11, 1);
  w.issue_at(4, 64, 12, 1);
  w.bench.events.run();
}

TEST(WgmmaHalfN, IssueOrderServesTheWarpGroupsAsIssued) {
  WgmmaBench w;
  issue_two_warpgroups(w);
  EXPECT_EQ(w.client.completed, (Completions{{32, 1}, {64, 2}, {96, 3}, {128, 11}, {160, 12}}));
}

TEST(WgmmaHalfN, RoundRobinServesTheWarpGroupsInTurn) {
  // 1 runs from 0; of the rest each WarpGroup's first goes before either's second
  // (validation/h100/wgmma_issue: two WarpGroups' WGMMAs finish together), each WarpGroup's
  // own in order; the pipeline stays busy and counts the same occupancy.
  WgmmaBench w({{"service_order", std::string("round_robin")}});
  issue_two_warpgroups(w);
  EXPECT_EQ(w.client.completed, (Completions{{32, 1}, {64, 2}, {96, 11}, {128, 3}, {160, 12}}));
  EXPECT_EQ(w.bench.stats.value("c.busy_cycles"), 160u);
}

TEST(WgmmaHalfN, RoundRobinWithTheFp32CouplingKeepsTheTurns) {
  WgmmaBench w({{"service_order", std::string("round_robin")}, {"fp32_share", 1.0}});
  issue_two_warpgroups(w);
  EXPECT_EQ(w.client.completed, (Completions{{32, 1}, {64, 2}, {96, 11}, {128, 3}, {160, 12}}));
}

TEST(WgmmaHalfN, MeasuredFactorsScaleTheLawByN) {
  // 128:1.0, 256:1.5: N = 256 takes 1.5 x 128 = 192; N = 192, halfway, 1.25 x 96 = 120; N = 64,
  // below the first point, its factor 1.0: 32.
  WgmmaBench w({{"n_factors", std::string("128:1.0,256:1.5")}});
  w.issue_at(0, 256, 1);  // [0, 192)
  w.issue_at(1, 192, 2);  // [192, 312)
  w.issue_at(2, 64, 3);   // [312, 344)
  w.bench.events.run();
  EXPECT_EQ(w.client.completed, (Completions{{192, 1}, {312, 2}, {344, 3}}));
}

TEST(WgmmaHalfN, MalformedFactorsAreAnInputError) {
  for (const char* bad : {"128", "128:x", "256:1.2,128:1.0", "0:1", "128:1.0,"}) {
    Bench bench;
    EXPECT_THROW(bench.make<WgmmaHalfN>({{"n_factors", std::string(bad)}}), InputError) << bad;
  }
}

TEST(WgmmaHalfN, FullBufferRefusesThenCallsSlotFreeWhenTheOldestCompletes) {
  WgmmaBench w({{"buffer_depth", std::int64_t{2}}});
  w.issue_at(0, 256, 1);  // [0, 128)
  w.issue_at(1, 256, 2);  // [128, 256)
  w.refused_at(2);        // two in the buffer
  w.refused_at(50);
  // Completion of 1 at 128 (memory priority) frees a slot before the issue phase of 128.
  w.issue_at(128, 64, 3);  // [256, 288)
  w.bench.events.run();
  EXPECT_EQ(w.client.completed, (Completions{{128, 1}, {256, 2}, {288, 3}}));
  EXPECT_EQ(w.client.slot_free, (std::vector<Cycle>{128}));  // once, however many refusals
}

TEST(WgmmaHalfN, CompletionLatencyHoldsTheBufferNotThePipeline) {
  WgmmaBench w({{"completion_latency", std::int64_t{10}}, {"buffer_depth", std::int64_t{2}}});
  w.issue_at(0, 64, 1);  // pipeline [0, 32), completes 42
  w.issue_at(1, 64, 2);  // pipeline [32, 64), completes 74
  w.refused_at(40);      // both still buffered
  w.bench.events.run();
  EXPECT_EQ(w.client.completed, (Completions{{42, 1}, {74, 2}}));
  EXPECT_EQ(w.client.slot_free, (std::vector<Cycle>{42}));
  EXPECT_EQ(w.bench.stats.value("c.busy_cycles"), 64u);
}

// fp32_share: FP32 work beside the tensor core slows it to min(1, (1 - load) / share) (fp32_onset
// left at -1, 1 - share).
struct CoupledBench : WgmmaBench {
  explicit CoupledBench(double share) : WgmmaBench({{"fp32_share", share}}) {}
  void load_at(Cycle at, std::uint32_t slot, double fraction, Cycle until) {
    bench.events.call(at, Priority::kIssue, [this, slot, fraction, until](Cycle now) {
      engine->fp32_load(now, slot, fraction, until);
    });
  }
};

TEST(WgmmaHalfN, Fp32LoadSlowsThePipelineToWhatItLeaves) {
  CoupledBench w(0.5);
  w.load_at(0, 0, 0.75, 40);  // rate (1 - 0.75) / 0.5 = 0.5 until 40
  w.issue_at(0, 64, 1);       // 32 law cycles: 20 served by 40, the other 12 by 52
  w.bench.events.run();
  EXPECT_EQ(w.client.completed, (Completions{{52, 1}}));
  EXPECT_EQ(w.bench.stats.value("c.fp32_delay_cycles"), 20u);
  EXPECT_EQ(w.bench.stats.value("c.busy_cycles"), 52u);
}

TEST(WgmmaHalfN, Fp32LoadAfterIssueDelaysTheCompletion) {
  CoupledBench w(0.87);
  w.issue_at(0, 64, 1);       // would complete at 32
  w.issue_at(1, 64, 2);       // behind it: 64
  w.load_at(10, 3, 1.0, 30);  // a full FP32 pipe stops it for 20 cycles
  w.bench.events.run();
  EXPECT_EQ(w.client.completed, (Completions{{52, 1}, {84, 2}}));
  EXPECT_EQ(w.bench.stats.value("c.fp32_delay_cycles"), 20u);
}

TEST(WgmmaHalfN, Fp32LoadSaidAgainReplacesTheSlotsOwn) {
  CoupledBench w(0.87);
  w.load_at(0, 2, 1.0, 1000);  // stopped...
  w.issue_at(0, 64, 1);
  w.load_at(20, 2, 0.0, 21);  // ...until slot 2 says its work is over: 20 + 32
  w.bench.events.run();
  EXPECT_EQ(w.client.completed, (Completions{{52, 1}}));
}

TEST(WgmmaHalfN, Fp32LoadsOfSlotsAddUpAndLightLoadsCostNothing) {
  CoupledBench w(0.5);
  w.load_at(0, 0, 0.25, 100);  // 0.25 + 0.25 leaves 0.5 = the share: full rate
  w.load_at(0, 1, 0.25, 100);
  w.issue_at(0, 64, 1);       // [0, 32)
  w.load_at(40, 2, 0.5, 80);  // 1.0 in all from 40 to 80: stopped
  w.issue_at(40, 64, 2);      // [80, 112)
  w.bench.events.run();
  EXPECT_EQ(w.client.completed, (Completions{{32, 1}, {112, 2}}));
}

// fp32_onset: full rate up to the onset, then 1 / share slower a unit of load past it; a load
// of the whole pipe need not stop the pipeline.
TEST(WgmmaHalfN, Fp32OnsetKeepsTheRateUpToItAndAFullPipeLeavesSome) {
  WgmmaBench w({{"fp32_share", 1.25}, {"fp32_onset", 0.25}});
  auto load_at = [&w](Cycle at, double fraction, Cycle until) {
    w.bench.events.call(at, Priority::kIssue, [&w, fraction, until](Cycle now) {
      w.engine->fp32_load(now, 0, fraction, until);
    });
  };
  load_at(0, 0.25, 32);    // at the onset: full rate
  w.issue_at(0, 64, 1);    // [0, 32)
  load_at(32, 1.0, 1000);  // rate 1 - 0.75 / 1.25 = 0.4
  w.issue_at(32, 64, 2);   // 32 law cycles at 0.4: 80 cycles, [32, 112)
  w.bench.events.run();
  EXPECT_EQ(w.client.completed, (Completions{{32, 1}, {112, 2}}));
  EXPECT_EQ(w.bench.stats.value("c.fp32_delay_cycles"), 48u);
}

TEST(WgmmaHalfN, Fp32OnsetWithASteepShareStopsThePipelineNeverReversesIt) {
  WgmmaBench w({{"fp32_share", 0.5}, {"fp32_onset", 0.25}});
  w.bench.events.call(0, Priority::kIssue,
                      [&w](Cycle now) { w.engine->fp32_load(now, 0, 1.0, 40); });  // 1 - 1.5
  w.issue_at(0, 64, 1);  // stopped until 40, then [40, 72)
  w.bench.events.run();
  EXPECT_EQ(w.client.completed, (Completions{{72, 1}}));
}

TEST(WgmmaHalfN, Fp32LoadIsIgnoredWithoutAShare) {
  WgmmaBench w;  // fp32_share = 0: uncoupled
  w.bench.events.call(0, Priority::kIssue,
                      [&w](Cycle now) { w.engine->fp32_load(now, 0, 1.0, 1000); });
  w.issue_at(0, 64, 1);
  w.bench.events.run();
  EXPECT_EQ(w.client.completed, (Completions{{32, 1}}));
  EXPECT_EQ(w.bench.stats.value("c.fp32_delay_cycles"), 0u);
}

// busy_until: when the pipeline will have executed what was issued, not when it completes (the
// completion latency is not the pipeline's), at the FP32 load said so far.
TEST(WgmmaHalfN, BusyUntilIsTheEndOfTheIssuedOccupancy) {
  WgmmaBench w({{"completion_latency", std::int64_t{50}}});
  std::vector<Cycle> seen;
  auto ask_at = [&](Cycle at) {
    w.bench.events.call(at, Priority::kIssue,
                        [&](Cycle now) { seen.push_back(w.engine->busy_until(now)); });
  };
  ask_at(0);              // idle: now
  w.issue_at(0, 128, 1);  // [0, 64)
  w.issue_at(1, 128, 2);  // [64, 128)
  ask_at(2);
  ask_at(100);
  ask_at(150);  // executed at 128, completing at 178: idle
  w.bench.events.run();
  EXPECT_EQ(seen, (std::vector<Cycle>{0, 128, 128, 150}));

  CoupledBench c(0.5);
  std::vector<Cycle> coupled;
  c.load_at(0, 0, 0.75, 40);  // rate 0.5 until 40 (as Fp32LoadSlowsThePipelineToWhatItLeaves)
  c.issue_at(0, 64, 1);       // 20 law cycles by 40, the other 12 by 52
  c.issue_at(1, 64, 2);       // [52, 84)
  c.bench.events.call(10, Priority::kIssue,
                      [&](Cycle now) { coupled.push_back(c.engine->busy_until(now)); });
  c.bench.events.run();
  EXPECT_EQ(coupled, (std::vector<Cycle>{84}));
}

TEST(WgmmaHalfN, CoupledPipelineKeepsCompletionLatencyAndTheFullBuffersCall) {
  WgmmaBench plain({{"completion_latency", std::int64_t{10}},
                    {"buffer_depth", std::int64_t{1}},
                    {"fp32_share", 1.0}});
  plain.bench.events.call(0, Priority::kIssue,
                          [&plain](Cycle now) { plain.engine->fp32_load(now, 0, 0.5, 64); });
  plain.issue_at(0, 64, 1);   // rate 0.5: 32 law cycles in 64, completes at 74
  plain.refused_at(70);       // its buffer slot is held for the latency
  plain.issue_at(74, 64, 2);  // load over: [74, 106), completes 116
  plain.bench.events.run();
  EXPECT_EQ(plain.client.completed, (Completions{{74, 1}, {116, 2}}));
  EXPECT_EQ(plain.client.slot_free, (std::vector<Cycle>{74}));
}

TEST(WgmmaHalfN, IssueIntervalRefusesUntilItElapses) {
  WgmmaBench w({{"issue_interval", std::int64_t{4}}});
  w.issue_at(0, 64, 1);
  w.refused_at(1);
  w.issue_at(4, 64, 2);  // slot_free at 4 lets the SM retry in that issue phase
  w.refused_at(5);
  w.bench.events.run();
  EXPECT_EQ(w.client.slot_free, (std::vector<Cycle>{4, 8}));
  EXPECT_EQ(w.client.completed, (Completions{{32, 1}, {64, 2}}));
}

TEST(WgmmaHalfN, SlotFreeWaitsForBothBufferAndInterval) {
  WgmmaBench w({{"issue_interval", std::int64_t{100}}, {"buffer_depth", std::int64_t{1}}});
  w.issue_at(0, 64, 1);  // completes at 32, but the next issue is allowed from 100
  w.refused_at(1);
  w.bench.events.run();
  EXPECT_EQ(w.client.completed, (Completions{{32, 1}}));
  EXPECT_EQ(w.client.slot_free, (std::vector<Cycle>{100}));
}

TEST(WgmmaHalfN, TableModelAndKeffThroughTheEngine) {
  WgmmaBench w({{"latency_model", std::string("table")}, {"k_eff", 2.0}});
  w.issue_at(0, 16, 1);  // 2 x 20 = 40
  w.bench.events.run();
  EXPECT_EQ(w.client.completed, (Completions{{40, 1}}));
}

TEST(WgmmaHalfN, IssueWhileRefusedIsAnInternalError) {
  WgmmaBench w({{"buffer_depth", std::int64_t{1}}});
  w.engine->issue(0, WgmmaOp{64, 64, 16, 1});
  EXPECT_THROW(w.engine->issue(0, WgmmaOp{64, 64, 16, 2}), Error);
}

TEST(WgmmaHalfN, FinishClipsOccupancyBeyondTheEnd) {
  WgmmaBench w;
  w.engine->issue(0, WgmmaOp{64, 256, 16, 1});  // occupies [0, 128)
  w.engine->finish(50);                         // a watchdog stop at 50
  EXPECT_EQ(w.bench.stats.value("c.busy_cycles"), 50u);
}

// ---- schemas -----------------------------------------------------------------------------------

TEST(EngineSchemas, DeclaredOnceAndStatsMatchWhatIsRegistered) {
  EXPECT_EQ(test::schema_problems<TmaFixed>(), "");
  EXPECT_EQ(test::schema_problems<TmaTraffic>(), "");
  EXPECT_EQ(test::schema_problems<WgmmaHalfN>(), "");
  {
    Bench b;
    auto c = b.make<TmaFixed>();
    EXPECT_EQ(b.stats.names(), test::declared_stats<TmaFixed>());
  }
  {
    Bench b;
    auto c = b.make<TmaTraffic>();
    EXPECT_EQ(b.stats.names(), test::declared_stats<TmaTraffic>());
  }
  {
    Bench b;
    auto c = b.make<WgmmaHalfN>();
    EXPECT_EQ(b.stats.names(), test::declared_stats<WgmmaHalfN>());
  }
}

TEST(EngineSchemas, PaperDefaults) {
  Schema s;
  TmaTraffic::describe(s);
  EXPECT_EQ(std::get<std::int64_t>(*s.find("launch_latency")->default_value), 40);
  EXPECT_EQ(std::get<std::int64_t>(*s.find("tensormap_setup_latency")->default_value), 130);
  EXPECT_EQ(std::get<std::int64_t>(*s.find("line_bytes")->default_value), 128);
  Schema w;
  WgmmaHalfN::describe(w);
  EXPECT_EQ(std::get<std::string>(*w.find("latency_model")->default_value), "half_n");
  EXPECT_EQ(std::get<double>(*w.find("k_eff")->default_value), 1.0);
}

}  // namespace
}  // namespace simfa::engines
