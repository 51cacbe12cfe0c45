// CalendarQueue: the (cycle, priority, sequence) order on every path an event can take (same
// cycle, per-cycle slot, period bucket, overflow heap), cancellation, and a differential run
// against a std::priority_queue model.
#include "kernel/event_queue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <queue>
#include <ostream>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "simfa/error.h"

namespace simfa::kernel {
namespace {

struct Fired {
  Cycle cycle;
  std::uint64_t payload;
  bool operator==(const Fired&) const = default;
};

void PrintTo(const Fired& f, std::ostream* os) { *os << "{" << f.cycle << ", " << f.payload << "}"; }

// Records every event; `reaction` (if set) runs inside the handler.
class Recorder final : public EventTarget {
 public:
  void on_event(Cycle now, std::uint64_t payload) override {
    log.push_back({now, payload});
    if (reaction) reaction(now, payload);
  }
  std::vector<Fired> log;
  std::function<void(Cycle, std::uint64_t)> reaction;
};

void drain(CalendarQueue& q) {
  while (q.fire_next()) {
  }
}

TEST(CalendarQueue, StartsEmptyAtCycleZero) {
  CalendarQueue q;
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.size(), 0U);
  EXPECT_EQ(q.now(), 0U);
  EXPECT_EQ(q.next_cycle(), kNever);
  EXPECT_FALSE(q.fire_next());
  EXPECT_EQ(q.fired(), 0U);
}

TEST(CalendarQueue, OrdersByCycleThenPriorityThenSequence) {
  CalendarQueue q(64);
  Recorder r;
  // payload = expected firing position.
  q.schedule(7, r, 5, Priority::kIssue);
  q.schedule(3, r, 2, Priority::kWake);
  q.schedule(7, r, 3, Priority::kMemory);
  q.schedule(3, r, 0, Priority::kMemory);
  q.schedule(7, r, 4, Priority::kMemory);
  q.schedule(3, r, 1, Priority::kEngine);
  q.schedule(500, r, 6, Priority::kEngine);  // beyond the 64-cycle wheel
  EXPECT_EQ(q.size(), 7U);
  EXPECT_EQ(q.next_cycle(), 3U);
  drain(q);
  EXPECT_EQ(r.log, (std::vector<Fired>{{3, 0}, {3, 1}, {3, 2}, {7, 3}, {7, 4}, {7, 5}, {500, 6}}));
  EXPECT_EQ(q.now(), 500U);
  EXPECT_EQ(q.fired(), 7U);
  EXPECT_TRUE(q.empty());
}

TEST(CalendarQueue, SameCycleSamePriorityIsFifo) {
  CalendarQueue q;
  Recorder r;
  std::vector<Fired> expected;
  for (std::uint64_t i = 0; i < 1000; ++i) {
    q.schedule(42, r, i, Priority::kWake);
    expected.push_back({42, i});
  }
  drain(q);
  EXPECT_EQ(r.log, expected);
}

TEST(CalendarQueue, HonorsEventsScheduledAtNowFromAHandler) {
  CalendarQueue q;
  Recorder r;
  q.schedule(10, r, 1, Priority::kEngine);
  q.schedule(10, r, 2, Priority::kWake);
  q.schedule(10, r, 3, Priority::kIssue);
  r.reaction = [&](Cycle now, std::uint64_t payload) {
    if (payload != 1) return;
    // Below the firing priority: it is now the earliest pending event, so it fires next.
    q.schedule(now, r, 10, Priority::kMemory);
    // Same priority: after the firing one, before the higher-priority ones already queued.
    q.schedule(now, r, 11, Priority::kEngine);
    // Same priority as an already queued event: after it (sequence order).
    q.schedule(now, r, 12, Priority::kIssue);
  };
  drain(q);
  EXPECT_EQ(r.log, (std::vector<Fired>{{10, 1}, {10, 10}, {10, 11}, {10, 2}, {10, 3}, {10, 12}}));
}

TEST(CalendarQueue, SchedulingAtNowBetweenFiresJoinsTheCurrentCycle) {
  CalendarQueue q;
  Recorder r;
  q.schedule(5, r, 1, Priority::kWake);
  q.schedule(5, r, 2, Priority::kIssue);
  q.schedule(6, r, 3);
  ASSERT_TRUE(q.fire_next());
  q.schedule(q.now(), r, 4, Priority::kMemory);
  EXPECT_EQ(q.next_cycle(), 5U);
  drain(q);
  EXPECT_EQ(r.log, (std::vector<Fired>{{5, 1}, {5, 4}, {5, 2}, {6, 3}}));
}

TEST(CalendarQueue, FarEventsInterleaveWithNearOnes) {
  constexpr std::size_t kWheel = 64;
  CalendarQueue q(kWheel);
  Recorder r;
  // Far events, several wheel sizes out and beyond, scheduled up front.
  const std::vector<Cycle> far = {kWheel * 3 + 5, kWheel * 10, kWheel * 10 + 1, 1'000'000,
                                  kWheel * 2, 37 * kWheel + 63, 1 + 23 * 30};
  for (Cycle c : far) q.schedule(c, r, c, Priority::kIssue);
  // A chain of near events, each scheduling the next 23 cycles later from its handler; one of
  // them lands on the cycle of a far event with a lower priority and must fire before it.
  r.reaction = [&](Cycle now, std::uint64_t payload) {
    if (payload >= kNever / 2 && now + 23 < 3000) q.schedule(now + 23, r, kNever / 2 + now + 23);
  };
  q.schedule(1, r, kNever / 2 + 1);
  drain(q);

  std::vector<std::tuple<Cycle, int, std::uint64_t>> expected;
  for (Cycle c : far) expected.emplace_back(c, 3, c);
  for (Cycle c = 1; c < 3000; c += 23) expected.emplace_back(c, 0, kNever / 2 + c);
  std::sort(expected.begin(), expected.end());
  std::vector<Fired> want;
  for (const auto& [c, prio, payload] : expected) want.push_back({c, payload});
  EXPECT_EQ(r.log, want);
}

TEST(CalendarQueue, FarEventFiresBeforeLaterNearEventOfSameCycleAndPriority) {
  CalendarQueue q(16);
  Recorder r;
  q.schedule(100, r, 1);  // overflow heap: 100 is beyond 0 + 16
  q.schedule(90, r, 0);
  r.reaction = [&](Cycle now, std::uint64_t payload) {
    if (payload == 0) q.schedule(now + 10, r, 2);  // same cycle, later sequence, via the calendar
  };
  drain(q);
  EXPECT_EQ(r.log, (std::vector<Fired>{{90, 0}, {100, 1}, {100, 2}}));
}

TEST(CalendarQueue, KeepsSequenceOrderForEventsReachingACycleThroughEveryLevel) {
  constexpr std::size_t kWheel = 16;
  constexpr Cycle kTarget = kWheel * CalendarQueue::kPeriodBuckets * 3 + 8;  // mid-period
  CalendarQueue q(kWheel);
  Recorder r;
  // Scheduled from ever closer: via the heap, a period bucket, a slot, and at now().
  q.schedule(kTarget, r, 1, Priority::kWake);
  q.schedule(kTarget - kWheel * CalendarQueue::kPeriodBuckets / 2, r, 100);
  q.schedule(kTarget - 3, r, 101);
  q.schedule(kTarget, r, 102);
  r.reaction = [&](Cycle now, std::uint64_t payload) {
    if (payload == 100) q.schedule(kTarget, r, 2, Priority::kWake);
    if (payload == 101) q.schedule(kTarget, r, 3, Priority::kWake);
    if (payload == 102) {
      q.schedule(now, r, 4, Priority::kWake);
      q.schedule(now, r, 103, Priority::kEngine);  // lower priority than the pending kWake ones
    }
  };
  drain(q);
  EXPECT_EQ(r.log, (std::vector<Fired>{{kTarget - kWheel * CalendarQueue::kPeriodBuckets / 2, 100},
                                       {kTarget - 3, 101},
                                       {kTarget, 102},
                                       {kTarget, 103},
                                       {kTarget, 1},
                                       {kTarget, 2},
                                       {kTarget, 3},
                                       {kTarget, 4}}));
}

TEST(CalendarQueue, SkipsLongIdleStretches) {
  CalendarQueue q;
  Recorder r;
  for (std::uint64_t i = 1; i <= 100; ++i) q.schedule(i * 1'000'000'000'000ULL, r, i);
  q.schedule(kNever - 1, r, 0);
  drain(q);
  ASSERT_EQ(r.log.size(), 101U);
  EXPECT_EQ(r.log[99], (Fired{100'000'000'000'000ULL, 100}));
  EXPECT_EQ(r.log[100], (Fired{kNever - 1, 0}));
}

TEST(CalendarQueue, CancelsPendingEventsOnlyOnce) {
  CalendarQueue q(64);
  Recorder r;
  const EventId near = q.schedule(5, r, 1);
  const EventId same = q.schedule(5, r, 2);
  const EventId far = q.schedule(10'000, r, 3);
  const EventId kept = q.schedule(20'000, r, 4);
  EXPECT_EQ(q.size(), 4U);

  EXPECT_TRUE(q.cancel(near));
  EXPECT_FALSE(q.cancel(near));
  EXPECT_TRUE(q.cancel(far));
  EXPECT_FALSE(q.cancel(far));
  EXPECT_FALSE(q.cancel(EventId{12345}));  // never issued
  EXPECT_EQ(q.size(), 2U);

  ASSERT_TRUE(q.fire_next());
  EXPECT_FALSE(q.cancel(same));  // already fired
  EXPECT_EQ(q.size(), 1U);
  EXPECT_EQ(q.next_cycle(), 20'000U);  // the cancelled far event is skipped
  drain(q);
  EXPECT_EQ(r.log, (std::vector<Fired>{{5, 2}, {20'000, 4}}));
  EXPECT_FALSE(q.cancel(kept));
  EXPECT_EQ(q.fired(), 2U);
}

TEST(CalendarQueue, TracksPendingEventsFromTheFirstCancel) {
  // The queue keeps no pending set until the first cancel(), which rebuilds it from the stored
  // entries: events in a slot of the current period, in a period bucket and in the far heap,
  // with fired ones among their sequence numbers.
  CalendarQueue q(64);
  Recorder r;
  const EventId fired = q.schedule(2, r, 1);
  const EventId slot = q.schedule(9, r, 2);
  const EventId bucket = q.schedule(1'000, r, 3);
  const EventId far = q.schedule(1'000'000, r, 4);
  q.schedule(9, r, 5);
  q.schedule(1'000, r, 6);
  q.schedule(1'000'000, r, 7);
  ASSERT_TRUE(q.fire_next());  // payload 1
  EXPECT_EQ(q.size(), 6U);
  EXPECT_FALSE(q.cancel(fired));  // the first cancel: already fired
  EXPECT_TRUE(q.cancel(slot));
  EXPECT_TRUE(q.cancel(bucket));
  EXPECT_TRUE(q.cancel(far));
  EXPECT_FALSE(q.cancel(far));
  EXPECT_EQ(q.size(), 3U);
  const EventId late = q.schedule(2'000'000, r, 8);
  drain(q);
  EXPECT_EQ(r.log, (std::vector<Fired>{{2, 1}, {9, 5}, {1'000, 6}, {1'000'000, 7}, {2'000'000, 8}}));
  EXPECT_FALSE(q.cancel(late));
  EXPECT_TRUE(q.empty());
}

TEST(CalendarQueue, CancellingEverythingLeavesNowUnchanged) {
  CalendarQueue q(64);
  Recorder r;
  q.schedule(3, r, 0);
  ASSERT_TRUE(q.fire_next());
  const EventId a = q.schedule(50, r, 1);
  const EventId b = q.schedule(5000, r, 2);
  const EventId c = q.schedule(3, r, 3, Priority::kIssue);
  EXPECT_TRUE(q.cancel(a));
  EXPECT_TRUE(q.cancel(b));
  EXPECT_TRUE(q.cancel(c));
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.next_cycle(), kNever);
  EXPECT_FALSE(q.fire_next());
  // Cancelled events do not move time: cycle 3 is still schedulable.
  EXPECT_EQ(q.now(), 3U);
  q.schedule(3, r, 4);
  drain(q);
  EXPECT_EQ(r.log, (std::vector<Fired>{{3, 0}, {3, 4}}));
}

TEST(CalendarQueue, CancelsAnEventPendingWhileMillionsOfOthersFire) {
  CalendarQueue q;
  Recorder r;
  const EventId pinned = q.schedule(kNever - 1, r, 0);
  const EventId late = q.schedule(2'000'000, r, 0);
  r.reaction = [&](Cycle now, std::uint64_t payload) {
    if (payload != 0 && now < 1'500'000) q.schedule(now + 1 + payload % 7, r, payload + 1);
  };
  q.schedule(1, r, 1);
  q.schedule(1, r, 2);
  while (q.next_cycle() < 2'000'000) ASSERT_TRUE(q.fire_next());
  EXPECT_GT(q.fired(), 500'000U);
  EXPECT_EQ(q.size(), 2U);
  EXPECT_TRUE(q.cancel(pinned));
  EXPECT_FALSE(q.cancel(pinned));
  ASSERT_TRUE(q.fire_next());
  EXPECT_EQ(q.now(), 2'000'000U);
  EXPECT_FALSE(q.cancel(late));
  EXPECT_FALSE(q.fire_next());
}

TEST(CalendarQueue, RejectsInvalidSchedules) {
  CalendarQueue q;
  Recorder r;
  q.schedule(100, r);
  ASSERT_TRUE(q.fire_next());
  EXPECT_THROW(q.schedule(99, r), Error);
  EXPECT_THROW(q.schedule(0, r), Error);
  EXPECT_THROW(q.schedule(kNever, r), Error);
  EXPECT_THROW(q.schedule(200, r, 0, static_cast<Priority>(kPriorityCount)), Error);
  EXPECT_TRUE(q.empty());
  EXPECT_NO_THROW(q.schedule(100, r));
  EXPECT_EQ(q.size(), 1U);
}

TEST(CalendarQueue, RejectsWheelSizesThatAreNotPowersOfTwo) {
  EXPECT_THROW(CalendarQueue(0), Error);
  EXPECT_THROW(CalendarQueue(1000), Error);
  EXPECT_NO_THROW(CalendarQueue(1));
}

TEST(PendingSeqs, MemoryFollowsPendingSeqsNotIssuedOnes) {
  PendingSeqs seqs;
  const std::uint64_t pinned = seqs.add();
  std::uint64_t previous = seqs.add();
  for (int i = 0; i < 10'000'000; ++i) {
    const std::uint64_t seq = seqs.add();
    ASSERT_TRUE(seqs.erase(previous));
    previous = seq;
  }
  EXPECT_LE(seqs.chunks_allocated(), 3U);
  EXPECT_TRUE(seqs.contains(pinned));
  EXPECT_TRUE(seqs.contains(previous));
  EXPECT_FALSE(seqs.contains(previous - 1));
  EXPECT_FALSE(seqs.contains(previous + 1));
  EXPECT_TRUE(seqs.erase(pinned));
  EXPECT_FALSE(seqs.erase(pinned));
}

// --- Differential test against a priority-queue model --------------------------------------------

// The specification, written the obvious way.
class ModelQueue {
 public:
  struct Event {
    Cycle when;
    unsigned priority;
    std::uint64_t seq;
    std::uint64_t payload;
  };

  std::uint64_t schedule(Cycle when, Priority priority, std::uint64_t payload) {
    const std::uint64_t seq = pending_.size();
    heap_.push({when, static_cast<unsigned>(priority), seq, payload});
    pending_.push_back(true);
    ++size_;
    return seq;
  }
  bool cancel(std::uint64_t seq) {
    if (!pending_[seq]) return false;
    pending_[seq] = false;
    --size_;
    return true;
  }
  Cycle next_cycle() {
    drop_cancelled();
    return heap_.empty() ? kNever : heap_.top().when;
  }
  std::optional<Event> pop() {
    drop_cancelled();
    if (heap_.empty()) return std::nullopt;
    Event e = heap_.top();
    heap_.pop();
    pending_[e.seq] = false;
    --size_;
    now_ = e.when;
    return e;
  }
  std::size_t size() const { return size_; }
  Cycle now() const { return now_; }

 private:
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return std::tie(a.when, a.priority, a.seq) > std::tie(b.when, b.priority, b.seq);
    }
  };
  void drop_cancelled() {
    while (!heap_.empty() && !pending_[heap_.top().seq]) heap_.pop();
  }

  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  std::vector<bool> pending_;
  std::size_t size_ = 0;
  Cycle now_ = 0;
};

// Applies the same random actions to both queues, from inside handlers and between fires.
class DifferentialDriver final : public EventTarget {
 public:
  /// Without `cancels`, the queue never keeps its pending set and stays on its fast paths.
  DifferentialDriver(CalendarQueue& queue, ModelQueue& model, bool cancels = true)
      : queue_(queue), model_(model), cancels_(cancels) {}

  void on_event(Cycle now, std::uint64_t payload) override {
    last_ = Fired{now, payload};
    act(now);
  }

  // A burst of schedules and cancels at time `now`, sized to keep ~1000 events pending.
  void act(Cycle now) {
    const std::size_t pending = model_.size();
    const unsigned schedules = pending < 500 ? 2 + static_cast<unsigned>(rng_() % 3)
                               : pending > 2000 ? static_cast<unsigned>(rng_() % 2)
                                                : static_cast<unsigned>(rng_() % 3);
    for (unsigned i = 0; i < schedules; ++i) schedule(now);
    if (cancels_ && rng_() % 8 == 0) cancel();
  }

  Fired last_fired() const { return last_; }
  std::uint64_t ops() const { return ops_; }
  std::uint64_t cancelled() const { return cancelled_; }
  std::uint64_t far() const { return far_; }

 private:
  void schedule(Cycle now) {
    const unsigned kind = static_cast<unsigned>(rng_() % 100);
    Cycle delay;
    if (kind < 15) {
      delay = 0;  // same cycle: a completion waking its consumer
    } else if (kind < 55) {
      delay = 1 + rng_() % 16;  // pipeline steps
    } else if (kind < 85) {
      delay = 17 + rng_() % 600;  // memory latencies
    } else if (kind < 95) {
      delay = 600 + rng_() % 100'000;
    } else {
      delay = 100'000 + rng_() % 50'000'000;  // timeouts, far phases
      ++far_;
    }
    const auto priority = static_cast<Priority>(rng_() % kPriorityCount);
    const std::uint64_t payload = next_payload_++;
    const EventId id = queue_.schedule(now + delay, *this, payload, priority);
    ids_.emplace_back(id, model_.schedule(now + delay, priority, payload));
    ++ops_;
  }

  void cancel() {
    // Mostly recent ids (pending ones), sometimes old ones (fired or already cancelled).
    const std::size_t window = std::min<std::size_t>(ids_.size(), rng_() % 2 ? 64 : 8192);
    if (window == 0) return;
    const auto& [id, seq] = ids_[ids_.size() - 1 - rng_() % window];
    const bool expected = model_.cancel(seq);
    EXPECT_EQ(queue_.cancel(id), expected) << "seq " << seq;
    cancelled_ += expected ? 1 : 0;
    ++ops_;
  }

  CalendarQueue& queue_;
  ModelQueue& model_;
  bool cancels_;
  std::mt19937_64 rng_{0x5EEDF00Du};
  std::vector<std::pair<EventId, std::uint64_t>> ids_;
  std::uint64_t next_payload_ = 0;
  std::uint64_t ops_ = 0;
  std::uint64_t cancelled_ = 0;
  std::uint64_t far_ = 0;
  Fired last_{kNever, 0};
};

class CalendarQueueDifferential : public testing::TestWithParam<std::size_t> {};

// Drives both queues through 200,000 schedules, cancels and fires, checking each fire.
void run_differential(std::size_t wheel, bool cancels) {
  CalendarQueue queue(wheel);
  ModelQueue model;
  DifferentialDriver driver(queue, model, cancels);
  std::mt19937_64 rng(42);
  std::uint64_t fires = 0;
  while (driver.ops() + fires < 200'000) {
    if (rng() % 10 == 0) driver.act(queue.now());  // between fires, at now()
    // Peeking drops cancelled entries early; not peeking leaves them to fire_next().
    if (rng() % 2 == 0) {
      ASSERT_EQ(queue.next_cycle(), model.next_cycle());
    }
    const std::optional<ModelQueue::Event> expected = model.pop();
    ASSERT_EQ(queue.fire_next(), expected.has_value());
    ASSERT_EQ(queue.size(), model.size());
    ASSERT_EQ(queue.empty(), model.size() == 0);
    if (!expected) {
      driver.act(queue.now());
      continue;
    }
    ++fires;
    ASSERT_EQ(driver.last_fired(), (Fired{expected->when, expected->payload})) << "fire " << fires;
    ASSERT_EQ(queue.now(), model.now());
  }
  EXPECT_EQ(queue.fired(), fires);
  // The mix really exercised what it is meant to.
  EXPECT_GT(fires, 50'000U);
  if (cancels) {
    EXPECT_GT(driver.cancelled(), 2'000U);
  } else {
    EXPECT_EQ(driver.cancelled(), 0U);
  }
  EXPECT_GT(driver.far(), 2'000U);
}

TEST_P(CalendarQueueDifferential, FiresExactlyLikeAPriorityQueue) {
  run_differential(GetParam(), true);
}

// Without a cancel the queue takes its fast paths (fire_next() inline on the current cycle,
// schedule() within the period), which the cancels above leave after the first one.
TEST_P(CalendarQueueDifferential, FiresExactlyLikeAPriorityQueueWithoutCancels) {
  run_differential(GetParam(), false);
}

INSTANTIATE_TEST_SUITE_P(WheelSizes, CalendarQueueDifferential, testing::Values(1, 4, 64, 4096),
                         [](const testing::TestParamInfo<std::size_t>& wheel) {
                           return "Wheel" + std::to_string(wheel.param);
                         });

}  // namespace
}  // namespace simfa::kernel
