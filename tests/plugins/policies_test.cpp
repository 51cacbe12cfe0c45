// Warp-scheduler and CTA-dispatch policies, each alone: exact pick sequences on crafted inputs.
#include <gtest/gtest.h>

#include <vector>

#include "cta_dispatchers.h"
#include "engine_harness.h"
#include "warp_schedulers.h"

namespace simfa::policies {
namespace {

using test::Bench;
using Ready = std::vector<IssueCandidate>;

// The slot of the WarpGroup `policy` picks from `ready`.
std::uint32_t pick_slot(WarpSchedulerPolicy& policy, const Ready& ready) {
  return ready[policy.pick(ready)].slot;
}

TEST(GtoScheduler, KeepsTheLastIssuerWhileReadyElseTheOldest) {
  Bench bench;
  auto gto = bench.make<GtoScheduler>();
  // Ages: slot 1 is the oldest (5), then slot 2 (7), then slot 0 (10).
  const Ready all{{0, 10}, {1, 5}, {2, 7}};
  EXPECT_EQ(pick_slot(*gto, all), 1u);                     // nothing issued yet: oldest
  EXPECT_EQ(pick_slot(*gto, all), 1u);                     // greedy
  EXPECT_EQ(pick_slot(*gto, Ready{{0, 10}, {2, 7}}), 2u);  // slot 1 stalled: oldest ready
  EXPECT_EQ(pick_slot(*gto, all), 2u);                     // greedy beats the older slot 1
  EXPECT_EQ(pick_slot(*gto, Ready{{0, 10}, {1, 5}}), 1u);  // slot 2 stalled: oldest
  // Slot 1 now holds a younger WarpGroup (its CTA exited): not the same thread, so no greed.
  EXPECT_EQ(pick_slot(*gto, Ready{{0, 10}, {1, 20}}), 0u);
  // Switches: 1->2, 2->1, 1->(0,10).
  EXPECT_EQ(bench.stats.value("c.switches"), 3u);
}

TEST(GtoScheduler, EqualAgesGoToTheLowestSlot) {
  Bench bench;
  auto gto = bench.make<GtoScheduler>();
  // Three WarpGroups of one CTA share its dispatch age.
  EXPECT_EQ(pick_slot(*gto, Ready{{3, 2}, {4, 2}, {5, 2}}), 3u);
  EXPECT_EQ(pick_slot(*gto, Ready{{4, 2}, {5, 2}}), 4u);
}

TEST(LrrScheduler, FirstReadySlotAfterTheLastIssuedWrapping) {
  Bench bench;
  auto lrr = bench.make<LrrScheduler>();
  // Ages deliberately reversed: LRR ignores them.
  const Ready all{{0, 9}, {1, 8}, {2, 7}, {3, 6}};
  EXPECT_EQ(pick_slot(*lrr, all), 0u);  // nothing issued yet: lowest slot
  EXPECT_EQ(pick_slot(*lrr, all), 1u);
  EXPECT_EQ(pick_slot(*lrr, all), 2u);
  EXPECT_EQ(pick_slot(*lrr, all), 3u);
  EXPECT_EQ(pick_slot(*lrr, all), 0u);                    // wraps
  EXPECT_EQ(pick_slot(*lrr, Ready{{0, 9}, {2, 7}}), 2u);  // slot 1 not ready: skipped
  EXPECT_EQ(pick_slot(*lrr, Ready{{0, 9}, {1, 8}}), 0u);  // nothing after slot 2: wraps
  EXPECT_EQ(pick_slot(*lrr, Ready{{0, 9}}), 0u);          // the only ready one, again
  EXPECT_EQ(pick_slot(*lrr, Ready{{3, 6}}), 3u);
  // Switches: every pick but the first and the repeated slot 0.
  EXPECT_EQ(bench.stats.value("c.switches"), 7u);
}

TEST(OldestScheduler, AlwaysTheSmallestAge) {
  Bench bench;
  auto oldest = bench.make<OldestScheduler>();
  const Ready all{{0, 4}, {1, 3}, {2, 3}, {3, 8}};
  EXPECT_EQ(pick_slot(*oldest, all), 1u);  // age 3, lower slot than slot 2
  EXPECT_EQ(pick_slot(*oldest, all), 1u);  // no rotation
  EXPECT_EQ(pick_slot(*oldest, Ready{{0, 4}, {2, 3}, {3, 8}}), 2u);
  EXPECT_EQ(pick_slot(*oldest, Ready{{0, 4}, {3, 8}}), 0u);
  EXPECT_EQ(pick_slot(*oldest, Ready{{3, 8}}), 3u);
  EXPECT_EQ(bench.stats.value("c.switches"), 3u);
}

TEST(RoundRobinDispatch, NextCandidateSmAfterTheLastWrapping) {
  Bench bench;
  auto rr = bench.make<RoundRobinDispatch>({}, -1);
  const std::vector<int> all{0, 1, 2, 3};
  std::vector<int> chosen;
  auto choose = [&](const std::vector<int>& candidates) {
    chosen.push_back(candidates[rr->choose(candidates, chosen.size())]);
  };
  choose(all);       // 0
  choose(all);       // 1
  choose(all);       // 2
  choose(all);       // 3
  choose(all);       // wraps to 0
  choose({0, 2});    // first after 0: 2
  choose({1, 3});    // first after 2: 3
  choose({0, 1});    // none after 3: wraps to 0
  choose({2});       // 2
  choose({1, 2});    // nothing after 2: wraps to the lowest, 1
  EXPECT_EQ(chosen, (std::vector<int>{0, 1, 2, 3, 0, 2, 3, 0, 2, 1}));
}

TEST(FillDispatch, LowestIndexCandidateFillsOneSmFirst) {
  Bench bench;
  auto fill = bench.make<FillDispatch>({}, -1);
  // SM 0 takes CTAs until it is full (drops out of the candidates), then SM 1.
  const std::vector<std::vector<int>> rounds{{0, 1, 2}, {0, 1, 2}, {1, 2}, {1, 2}, {2}, {0, 2}};
  std::vector<int> chosen;
  for (const auto& candidates : rounds)
    chosen.push_back(candidates[fill->choose(candidates, chosen.size())]);
  EXPECT_EQ(chosen, (std::vector<int>{0, 0, 1, 1, 2, 0}));
}

TEST(PolicySchemas, DeclaredOnceAndStatsMatchWhatIsRegistered) {
  EXPECT_EQ(test::schema_problems<GtoScheduler>(), "");
  EXPECT_EQ(test::schema_problems<LrrScheduler>(), "");
  EXPECT_EQ(test::schema_problems<OldestScheduler>(), "");
  EXPECT_EQ(test::schema_problems<RoundRobinDispatch>(), "");
  EXPECT_EQ(test::schema_problems<FillDispatch>(), "");
  Bench bench;
  auto gto = bench.make<GtoScheduler>();
  EXPECT_EQ(bench.stats.names(), test::declared_stats<GtoScheduler>());
  Bench b2;
  auto rr = b2.make<RoundRobinDispatch>({}, -1);
  EXPECT_EQ(b2.stats.names(), test::declared_stats<RoundRobinDispatch>());
}

}  // namespace
}  // namespace simfa::policies
