// memory.ideal alone: every response exactly `latency` cycles after its send, same-cycle
// responses in send order, requests echoed untouched, counts by direction.
#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "engine_harness.h"
#include "ideal_memory.h"

namespace simfa::memory_models {
namespace {

using test::Bench;

// Records responses; optionally sends a follow-up from inside on_response.
class Client final : public MemClient {
 public:
  struct Response {
    Cycle at;
    MemRequest request;
  };
  void on_response(Cycle now, const MemRequest& request) override {
    responses.push_back({now, request});
    if (chain > 0) {
      --chain;
      MemRequest next = request;
      next.token = request.token + 1;
      port->send(now, next);
    }
  }
  std::vector<Response> responses;
  MemoryPort* port = nullptr;
  int chain = 0;
};

MemRequest read(Addr addr, std::uint64_t token, MemClient& client) {
  return MemRequest{addr, 128, 5, false, false, token, &client};
}

TEST(IdealMemory, DefaultLatencyAndSendOrderWithinACycle) {
  Bench bench;
  auto memory = bench.make<IdealMemory>({}, -1);
  Client client;
  memory->send(0, read(0x1000, 1, client));
  memory->send(0, MemRequest{0x2000, 128, 7, true, false, 2, &client});
  bench.events.call(5, Priority::kEngine,
                    [&](Cycle now) { memory->send(now, read(0x3000, 3, client)); });
  bench.events.run();
  ASSERT_EQ(client.responses.size(), 3u);
  // Three events: the send at 5 and one per response cycle (the two of 400 are one batch).
  EXPECT_EQ(bench.events.fired(), 3u);
  // Default latency 400: 0 + 400 twice (in send order), then 5 + 400.
  EXPECT_EQ(client.responses[0].at, 400u);
  EXPECT_EQ(client.responses[0].request.token, 1u);
  EXPECT_EQ(client.responses[1].at, 400u);
  EXPECT_EQ(client.responses[1].request.token, 2u);
  EXPECT_EQ(client.responses[2].at, 405u);
  // The request comes back untouched.
  const MemRequest& w = client.responses[1].request;
  EXPECT_EQ(w.addr, 0x2000u);
  EXPECT_EQ(w.bytes, 128u);
  EXPECT_EQ(w.sm, 7u);
  EXPECT_TRUE(w.write);
  EXPECT_EQ(w.client, &client);
}

TEST(IdealMemory, CountsReadsAndWritesWithBytes) {
  Bench bench;
  auto memory = bench.make<IdealMemory>({{"latency", std::int64_t{3}}}, -1);
  Client client;
  memory->send(0, read(0, 1, client));
  memory->send(0, MemRequest{128, 32, 0, false, false, 2, &client});
  memory->send(1, MemRequest{256, 128, 0, true, false, 3, &client});
  bench.events.run();
  EXPECT_EQ(bench.stats.value("c.reads"), 2u);
  EXPECT_EQ(bench.stats.value("c.writes"), 1u);
  // No cache: every byte that arrives is served by memory.
  const std::optional<MemoryTraffic> bytes = memory->traffic();
  ASSERT_TRUE(bytes);
  EXPECT_EQ(bytes->llc.read, 160u);
  EXPECT_EQ(bytes->dram.read, 160u);
  EXPECT_EQ(bytes->llc.write, 128u);
  EXPECT_EQ(bytes->dram.write, 128u);
}

// Lines a client timed itself (send_counted) are counted at their own cycles: the byte totals read
// during the run hold the lines sent so far, the counters every line by the end, and a run cut
// short counts only the lines sent before its end. None is answered.
TEST(IdealMemory, CountedLinesCountAtTheirCycles) {
  Bench bench;
  auto memory = bench.make<IdealMemory>({{"latency", std::int64_t{7}}}, -1);
  EXPECT_EQ(memory->fixed_latency(), std::optional<Cycle>{7});
  Client client;
  const MemRequest line = read(0, 1, client);
  MemRequest store = line;
  store.write = true;
  // 5 reads at 10 (2 slots left), 11, 11, 12; 4 writes at 20, 20, 21, 21.
  memory->send_counted(0, MemoryPort::Burst{line, nullptr, 5, 10, 2, 2});
  memory->send_counted(0, MemoryPort::Burst{store, nullptr, 4, 20, 2, 2});
  std::vector<std::pair<std::uint64_t, std::uint64_t>> seen;  // (read, write) bytes
  for (Cycle at : {9u, 10u, 11u, 12u, 20u, 21u})
    bench.events.call(at, Priority::kIssue, [&](Cycle) {
      seen.emplace_back(memory->traffic()->llc.read, memory->traffic()->dram.write);
    });
  bench.events.run();
  const std::vector<std::pair<std::uint64_t, std::uint64_t>> expected = {
      {0, 0}, {256, 0}, {512, 0}, {640, 0}, {640, 256}, {640, 512}};
  EXPECT_EQ(seen, expected);
  memory->finish(30);
  EXPECT_EQ(bench.stats.value("c.reads"), 5u);
  EXPECT_EQ(bench.stats.value("c.writes"), 4u);
  EXPECT_EQ(memory->traffic()->dram.read, 640u);
  EXPECT_TRUE(client.responses.empty());

  Bench cut;
  auto stopped = cut.make<IdealMemory>({}, -1);
  stopped->send_counted(0, MemoryPort::Burst{line, nullptr, 5, 10, 1, 1});
  stopped->finish(12);  // lines at 10, 11, 12 were sent; 13 and 14 never were
  EXPECT_EQ(cut.stats.value("c.reads"), 3u);
  EXPECT_EQ(stopped->traffic()->llc.read, 384u);
}

TEST(IdealMemory, ClientMaySendFromInsideItsResponse) {
  Bench bench;
  auto memory = bench.make<IdealMemory>({{"latency", std::int64_t{1}}}, -1);
  Client client;
  client.port = memory.get();
  client.chain = 999;  // 1000 round trips, each sent from inside the previous response
  memory->send(0, read(0x40, 0, client));
  bench.events.run();
  ASSERT_EQ(client.responses.size(), 1000u);
  for (std::size_t i = 0; i < client.responses.size(); ++i) {
    EXPECT_EQ(client.responses[i].at, i + 1);  // latency 1: the cycle after each send
    EXPECT_EQ(client.responses[i].request.token, i);
  }
}

TEST(IdealMemory, Schema) {
  EXPECT_EQ(test::schema_problems<IdealMemory>(), "");
  Schema schema;
  IdealMemory::describe(schema);
  EXPECT_EQ(schema.find("latency")->min, 1.0);
  Bench bench;
  auto memory = bench.make<IdealMemory>({}, -1);
  EXPECT_EQ(bench.stats.names(), test::declared_stats<IdealMemory>());
}

// bursts = true: lines booked ahead reach the memory at their cycles, every line of a cycle by
// one event whatever burst it came from: the bursts starting in the cycle in booking order, then
// those continuing from the cycle before (docs/performance.md §10).
TEST(IdealMemory, BurstLinesLeaveAtTheirCyclesOneEventACycle) {
  Bench bench;
  auto memory = bench.make<IdealMemory>({{"latency", std::int64_t{10}}, {"bursts", true}}, -1);
  ASSERT_TRUE(memory->accepts_bursts());
  Client client;
  const Addr a_lines[] = {0x1000, 0x1080, 0x1100, 0x1180};
  const Addr b_lines[] = {0x9000, 0x9080, 0x9100};
  // Burst a: cycle 3 has one slot left, then two a cycle: 3, 4, 4, 5. Burst b: 4, 5, 6.
  memory->send_burst(0, MemoryPort::Burst{read(0, 1, client), a_lines, 4, 3, 1, 2});
  memory->send_burst(0, MemoryPort::Burst{read(0, 2, client), b_lines, 3, 4, 1, 1});
  bench.events.run();
  std::vector<std::pair<Cycle, Addr>> got;
  for (const auto& r : client.responses) {
    got.emplace_back(r.at, r.request.addr);
    EXPECT_EQ(r.request.token, r.request.addr < 0x9000 ? 1u : 2u);
  }
  // Cycle 4: b starts there, a continues from 3; cycle 5: both continue, in cycle 4's order.
  EXPECT_EQ(got, (std::vector<std::pair<Cycle, Addr>>{{13, 0x1000},
                                                      {14, 0x9000},
                                                      {14, 0x1080},
                                                      {14, 0x1100},
                                                      {15, 0x9080},
                                                      {15, 0x1180},
                                                      {16, 0x9100}}));
  // Four wheel events (cycles 3..6) and four response batches (13..16).
  EXPECT_EQ(bench.events.fired(), 8u);
  EXPECT_EQ(bench.stats.value("c.reads"), 7u);
}

TEST(IdealMemory, NoBurstsByDefault) {
  Bench bench;
  EXPECT_FALSE(bench.make<IdealMemory>({}, -1)->accepts_bursts());
}

}  // namespace
}  // namespace simfa::memory_models
