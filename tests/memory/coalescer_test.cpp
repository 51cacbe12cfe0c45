// coalescer.lrc and coalescer.none alone, in front of a fake L2 that answers every request 50
// cycles after it was sent (RecordingMemory).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "line_table.h"
#include "lrc_coalescer.h"
#include "memory_harness.h"
#include "next_line.h"
#include "pass_through_coalescer.h"

namespace simfa::memory_models {
namespace {

using test::MemoryBench;
using test::ParamOverrides;
using test::read_request;
using test::RecordingClient;
using test::RecordingMemory;
using test::write_request;

constexpr Cycle kL2 = 50;
constexpr Addr kX = 0x4000;  // a line-aligned address

template <typename T>
struct Rig {
  explicit Rig(const ParamOverrides& overrides = {})
      : coalescer(bench.make<T>(overrides)), l2(bench.events, kL2) {
    coalescer->connect(l2);
  }
  void send_at(Cycle at, const MemRequest& request) {
    bench.events.call(at, Priority::kEngine,
                      [this, request](Cycle now) { coalescer->send(now, request); });
  }
  std::uint64_t stat(const std::string& name) const { return bench.stats.value("c." + name); }

  MemoryBench bench;
  std::unique_ptr<T> coalescer;
  RecordingMemory l2;
  RecordingClient client;
};

TEST(LrcCoalescer, PairInsideTheWindowMakesOneL2Request) {
  Rig<LrcCoalescer> rig;
  rig.send_at(0, read_request(kX, 1, rig.client, 0));
  rig.send_at(10, read_request(kX, 2, rig.client, 1));  // SM 1: same pair (1 / 2 == 0 / 2)
  rig.bench.events.run();
  ASSERT_EQ(rig.l2.sent.size(), 1u);
  // The one response (sent at 0, back at 50) answers both, each with its own request.
  ASSERT_EQ(rig.client.responses.size(), 2u);
  EXPECT_EQ(rig.client.responses[0].at, 50u);
  EXPECT_EQ(rig.client.responses[0].request.token, 1u);
  EXPECT_EQ(rig.client.responses[0].request.sm, 0u);
  EXPECT_EQ(rig.client.responses[1].at, 50u);
  EXPECT_EQ(rig.client.responses[1].request.token, 2u);
  EXPECT_EQ(rig.client.responses[1].request.sm, 1u);
  EXPECT_EQ(rig.client.responses[1].request.client, &rig.client);
  // The forwarded request names the coalescer as its client.
  EXPECT_NE(rig.l2.sent[0].request.client, &rig.client);
  EXPECT_EQ(rig.stat("requests"), 2u);
  EXPECT_EQ(rig.stat("merged"), 1u);
  EXPECT_EQ(rig.stat("forwarded"), 1u);
}

// The L2's answer says whether it fetched the line from DRAM (MemRequest::from_dram): that is
// the first requester's alone, whose request the L2 served; the merged one asked nothing of it.
TEST(LrcCoalescer, OnlyTheFirstRequesterHearsOfTheDramFill) {
  Rig<LrcCoalescer> rig;
  rig.l2.answers_from_dram = true;
  rig.send_at(0, read_request(kX, 1, rig.client, 0));
  rig.send_at(10, read_request(kX, 2, rig.client, 1));
  rig.bench.events.run();
  ASSERT_EQ(rig.client.responses.size(), 2u);
  EXPECT_TRUE(rig.client.responses[0].request.from_dram);
  EXPECT_FALSE(rig.client.responses[1].request.from_dram);
}

TEST(LrcCoalescer, OutsideTheWindowTwoRequests) {
  Rig<LrcCoalescer> rig;
  rig.send_at(0, read_request(kX, 1, rig.client, 0));
  // At 50 the first response has returned (memory events precede engine events in a cycle):
  // the window is closed.
  rig.send_at(50, read_request(kX, 2, rig.client, 1));
  rig.bench.events.run();
  ASSERT_EQ(rig.l2.sent.size(), 2u);
  EXPECT_EQ(rig.client.at(1), 50u);
  EXPECT_EQ(rig.client.at(2), 100u);
  EXPECT_EQ(rig.stat("merged"), 0u);
}

TEST(LrcCoalescer, DifferentPairsTwoRequests) {
  Rig<LrcCoalescer> rig;
  rig.send_at(0, read_request(kX, 1, rig.client, 1));   // pair 0
  rig.send_at(10, read_request(kX, 2, rig.client, 2));  // pair 1
  rig.bench.events.run();
  EXPECT_EQ(rig.l2.sent.size(), 2u);
  EXPECT_EQ(rig.client.at(2), 60u);
}

TEST(LrcCoalescer, GroupSizeSetsTheGroup) {
  Rig<LrcCoalescer> rig({{"group_size", std::int64_t{4}}});
  rig.send_at(0, read_request(kX, 1, rig.client, 0));
  rig.send_at(1, read_request(kX, 2, rig.client, 3));  // 3 / 4 == 0
  rig.send_at(2, read_request(kX, 3, rig.client, 4));  // 4 / 4 == 1
  rig.bench.events.run();
  EXPECT_EQ(rig.l2.sent.size(), 2u);
  EXPECT_EQ(rig.client.at(2), 50u);
  EXPECT_EQ(rig.client.at(3), 52u);
}

TEST(LrcCoalescer, GroupSizesGiveGroupsOfTheirOwnSizesRepeating) {
  Rig<LrcCoalescer> rig({{"group_sizes", std::string("3,2")}});
  // One period: SMs 0-2 are group 0, SMs 3-4 group 1; then 5-7 group 2, 8-9 group 3.
  rig.send_at(0, read_request(kX, 1, rig.client, 0));
  rig.send_at(1, read_request(kX, 2, rig.client, 2));  // group 0: merges
  rig.send_at(2, read_request(kX, 3, rig.client, 3));  // group 1
  rig.send_at(3, read_request(kX, 4, rig.client, 4));  // group 1: merges
  rig.send_at(4, read_request(kX, 5, rig.client, 5));  // group 2
  rig.send_at(5, read_request(kX, 6, rig.client, 7));  // group 2: merges
  rig.send_at(6, read_request(kX, 7, rig.client, 8));  // group 3
  rig.bench.events.run();
  EXPECT_EQ(rig.l2.sent.size(), 4u);
  EXPECT_EQ(rig.stat("merged"), 3u);
  EXPECT_EQ(rig.client.at(2), 50u);
  EXPECT_EQ(rig.client.at(4), 52u);
  EXPECT_EQ(rig.client.at(6), 54u);
  EXPECT_EQ(rig.client.at(7), 56u);
}

TEST(LrcCoalescer, MaxMergedOpensTheLinesNextWindow) {
  Rig<LrcCoalescer> rig({{"group_size", std::int64_t{16}}, {"max_merged", std::int64_t{3}}});
  // Nine reads of one line from one group: 1 + 3 merged, 1 + 3 merged, 1.
  for (std::uint64_t t = 0; t < 9; ++t) rig.send_at(t, read_request(kX, t + 1, rig.client, static_cast<std::uint16_t>(t)));
  rig.bench.events.run();
  ASSERT_EQ(rig.l2.sent.size(), 3u);
  EXPECT_EQ(rig.l2.sent[0].at, 0u);
  EXPECT_EQ(rig.l2.sent[1].at, 4u);
  EXPECT_EQ(rig.l2.sent[2].at, 8u);
  EXPECT_EQ(rig.stat("merged"), 6u);
  // Each read is answered by the window it joined.
  for (std::uint64_t t = 1; t <= 4; ++t) EXPECT_EQ(rig.client.at(t), 50u) << t;
  for (std::uint64_t t = 5; t <= 8; ++t) EXPECT_EQ(rig.client.at(t), 54u) << t;
  EXPECT_EQ(rig.client.at(9), 58u);
}

// The forwarded read first, then its merged reads in arrival order, whether or not max_merged
// counts them, for SMs within gpu.sm_count (132 here) and beyond it (whose group is computed on
// the fly rather than looked up).
TEST(LrcCoalescer, MergedReadsAreAnsweredInArrivalOrder) {
  for (const std::int64_t max_merged : {std::int64_t{0}, std::int64_t{5}}) {
    for (const std::uint16_t first_sm : {std::uint16_t{0}, std::uint16_t{640}}) {
      Rig<LrcCoalescer> rig({{"group_size", std::int64_t{16}}, {"max_merged", max_merged}});
      for (std::uint64_t t = 0; t < 6; ++t)
        rig.send_at(t, read_request(kX, t + 1, rig.client,
                                    static_cast<std::uint16_t>(first_sm + (t * 7) % 16)));
      rig.bench.events.run();
      ASSERT_EQ(rig.l2.sent.size(), 1u) << max_merged << " " << first_sm;
      ASSERT_EQ(rig.client.responses.size(), 6u);
      for (std::uint64_t t = 0; t < 6; ++t) {
        EXPECT_EQ(rig.client.responses[t].request.token, t + 1) << max_merged << " " << first_sm;
        EXPECT_EQ(rig.client.responses[t].request.sm, first_sm + (t * 7) % 16);
        EXPECT_EQ(rig.client.responses[t].at, 50u);
      }
    }
  }
}

// max_merged counts the reads merged into each window, not into every window of the line: the
// line's second window takes max_merged reads of its own while the first is still in flight.
TEST(LrcCoalescer, EachWindowCountsItsOwnMergedReads) {
  Rig<LrcCoalescer> rig({{"group_size", std::int64_t{16}}, {"max_merged", std::int64_t{2}}});
  for (std::uint64_t t = 0; t < 7; ++t)
    rig.send_at(t, read_request(kX, t + 1, rig.client, static_cast<std::uint16_t>(t)));
  rig.send_at(60, read_request(kX, 8, rig.client, 0));  // after both windows closed
  rig.bench.events.run();
  // Windows: {1, 2, 3} sent at 0, {4, 5, 6} at 3, {7} at 6, {8} at 60.
  ASSERT_EQ(rig.l2.sent.size(), 4u);
  EXPECT_EQ(rig.l2.sent[1].at, 3u);
  EXPECT_EQ(rig.l2.sent[2].at, 6u);
  EXPECT_EQ(rig.stat("merged"), 4u);
  for (std::uint64_t t = 1; t <= 3; ++t) EXPECT_EQ(rig.client.at(t), 50u) << t;
  for (std::uint64_t t = 4; t <= 6; ++t) EXPECT_EQ(rig.client.at(t), 53u) << t;
  EXPECT_EQ(rig.client.at(7), 56u);
  EXPECT_EQ(rig.client.at(8), 110u);
}

TEST(LrcCoalescer, AGroupSizeThatIsNotANumberIsAnError) {
  for (const char* bad : {"16,x", "16,,2", "0", "16,2000", "16,"}) {
    MemoryBench bench;
    EXPECT_THROW(bench.make<LrcCoalescer>({{"group_sizes", std::string(bad)}}), InputError) << bad;
  }
}

TEST(LrcCoalescer, WritesAndUncoveredReadsPassThrough) {
  Rig<LrcCoalescer> rig;
  rig.send_at(0, write_request(kX, 1, rig.client, 0));
  rig.send_at(1, write_request(kX, 2, rig.client, 1));
  rig.send_at(2, read_request(kX, 3, rig.client, 0, 32));   // opens kX's window: 32 bytes
  rig.send_at(3, read_request(kX, 4, rig.client, 1, 128));  // not covered by it: forwarded
  rig.send_at(4, read_request(kX + 32, 5, rig.client, 1, 32));  // not covered either
  rig.send_at(5, read_request(kX, 6, rig.client, 1, 32));   // covered: merged
  rig.bench.events.run();
  EXPECT_EQ(rig.l2.sent.size(), 5u);
  EXPECT_EQ(rig.stat("merged"), 1u);
  EXPECT_EQ(rig.stat("forwarded"), 5u);
  EXPECT_EQ(rig.client.at(1), 50u);
  EXPECT_EQ(rig.client.at(2), 51u);
  EXPECT_EQ(rig.client.at(6), 52u);  // with token 3's response
  EXPECT_TRUE(rig.client.responses[0].request.write);
}

// A client that reads the line again from inside its response.
class Rereader final : public MemClient {
 public:
  void on_response(Cycle now, const MemRequest& request) override {
    at.push_back(now);
    if (at.size() < 3) port->send(now, read_request(request.addr, at.size(), *this, request.sm));
  }
  MemoryPort* port = nullptr;
  std::vector<Cycle> at;
};

TEST(LrcCoalescer, AReadSentFromTheResponseStartsANewWindow) {
  Rig<LrcCoalescer> rig;
  Rereader client;
  client.port = rig.coalescer.get();
  rig.coalescer->send(0, read_request(kX, 0, client, 0));
  rig.bench.events.run();
  EXPECT_EQ(client.at, (std::vector<Cycle>{50, 100, 150}));
  EXPECT_EQ(rig.l2.sent.size(), 3u);
}

// Entries are reused latest freed first: a read sent from inside the first answer takes the entry
// one of the same response's merged reads has just given up, and those reads are still answered
// with their own requests.
class SendsOnFirstAnswer final : public MemClient {
 public:
  void on_response(Cycle now, const MemRequest& request) override {
    answers.push_back({now, request});
    if (answers.size() == 1) port->send(now, read_request(kX + 0x1000, 100, *this, 0));
  }
  MemoryPort* port = nullptr;
  std::vector<RecordingClient::Response> answers;
};

TEST(LrcCoalescer, AReadSentWhileAnsweringReusesAFreedEntry) {
  Rig<LrcCoalescer> rig({{"group_size", std::int64_t{16}}});
  SendsOnFirstAnswer client;
  client.port = rig.coalescer.get();
  for (std::uint64_t t = 0; t < 4; ++t)
    rig.send_at(t, read_request(kX, t + 1, client, static_cast<std::uint16_t>(t)));
  rig.bench.events.run();
  ASSERT_EQ(rig.l2.sent.size(), 2u);
  // The L2 saw the new read under a token the response had just freed: the entry of token 2,
  // the last of the merged reads freed (they are listed newest first).
  EXPECT_EQ(rig.l2.sent[1].request.token, rig.l2.sent[0].request.token + 1);
  ASSERT_EQ(client.answers.size(), 5u);
  for (std::uint64_t t = 0; t < 4; ++t) {
    EXPECT_EQ(client.answers[t].at, 50u);
    EXPECT_EQ(client.answers[t].request.token, t + 1);
    EXPECT_EQ(client.answers[t].request.sm, t);
    EXPECT_EQ(client.answers[t].request.addr, kX);
  }
  EXPECT_EQ(client.answers[4].at, 100u);
  EXPECT_EQ(client.answers[4].request.token, 100u);
  EXPECT_EQ(client.answers[4].request.addr, kX + 0x1000);
}

TEST(PassThroughCoalescer, ForwardsEveryRequestUnchanged) {
  Rig<PassThroughCoalescer> rig;
  rig.send_at(0, read_request(kX, 1, rig.client, 0));
  rig.send_at(1, read_request(kX, 2, rig.client, 1));
  rig.bench.events.run();
  ASSERT_EQ(rig.l2.sent.size(), 2u);
  EXPECT_EQ(rig.l2.sent[1].request.client, &rig.client);
  EXPECT_EQ(rig.l2.sent[1].request.token, 2u);
  EXPECT_EQ(rig.client.at(2), 51u);
  EXPECT_EQ(rig.stat("requests"), 2u);
}

// The coalescer's prefetches follow the predictor of next_line.h: a box's rows of one line
// (delta = the pitch) and of two lines (+1, then pitch - 1), both one and two lines ahead.
TEST(NextLinePredictor, PredictsTheNextTwoLinesOfABoxsRows) {
  NextLinePredictor one_line;
  for (std::uint64_t row = 0; row < 3; ++row) one_line.next_two(0, 100 + 8 * row);
  const NextLinePredictor<>::Lines one = one_line.next_two(0, 124);
  EXPECT_EQ(one.next, 132u);
  EXPECT_EQ(one.after_next, 140u);

  NextLinePredictor two_lines;
  for (const std::uint64_t line : {100u, 101u, 108u}) two_lines.next_two(5, line);
  const NextLinePredictor<>::Lines after_second =
      two_lines.next_two(5, 109);  // a row's second line
  EXPECT_EQ(after_second.next, 116u);
  EXPECT_EQ(after_second.after_next, 117u);
  EXPECT_EQ(two_lines.next(5, 116), 117u);
  const NextLinePredictor<>::Lines after_first = two_lines.next_two(5, 117);  // and its first
  EXPECT_EQ(after_first.next, 124u);
  EXPECT_EQ(after_first.after_next, 125u);
}

// find_or_insert, the coalescer's one walk for a read (look for the line's window, open one if
// none), against find then insert: the entry found, or the new one indexed at the end of its
// chain, through the table's growth from 8 buckets; erase finds every entry after.
TEST(LineChains, FindOrInsertIsFindThenInsert) {
  std::vector<std::uint64_t> lines;
  std::vector<std::uint32_t> links_a, links_b;
  LineChains a, b;  // 8 buckets: grows at the 9th entry, and again at the 17th
  const auto line_of = [&](std::uint32_t i) { return lines[i]; };
  const auto link_a = [&](std::uint32_t i) -> std::uint32_t& { return links_a[i]; };
  const auto link_b = [&](std::uint32_t i) -> std::uint32_t& { return links_b[i]; };
  for (std::uint32_t i = 0; i < 40; ++i) {
    const std::uint64_t line = (i * 7) % 23;  // every line twice, the second time found
    lines.push_back(line);
    links_a.push_back(LineChains::kNone);
    links_b.push_back(LineChains::kNone);
    std::uint32_t expected = a.find(line, line_of, link_a);
    if (expected == LineChains::kNone) a.insert(line, i, line_of, link_a);
    EXPECT_EQ(b.find_or_insert(line, i, line_of, link_b), expected) << i;
    EXPECT_EQ(b.size(), a.size()) << i;
  }
  EXPECT_EQ(b.size(), 23u);
  for (std::uint64_t line = 0; line < 23; ++line) {
    const std::uint32_t i = a.find(line, line_of, link_a);
    ASSERT_NE(i, LineChains::kNone);
    EXPECT_EQ(b.find(line, line_of, link_b), i);
    b.erase(line, i, link_b);
    EXPECT_EQ(b.find(line, line_of, link_b), LineChains::kNone);
  }
  EXPECT_EQ(b.size(), 0u);
}

TEST(Coalescers, Schema) {
  EXPECT_EQ(test::schema_problems<LrcCoalescer>(), "");
  EXPECT_EQ(test::schema_problems<PassThroughCoalescer>(), "");
  MemoryBench bench;
  auto lrc = bench.make<LrcCoalescer>({}, 1, "lrc");
  auto none = bench.make<PassThroughCoalescer>({}, 1, "none");
  auto expected = test::declared_stats<LrcCoalescer>("lrc");
  expected.merge(test::declared_stats<PassThroughCoalescer>("none"));
  EXPECT_EQ(bench.stats.names(), expected);
}

}  // namespace
}  // namespace simfa::memory_models
