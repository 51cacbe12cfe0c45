// IssueArbiter: each cycle's issue phase steps the SMs that asked for it once each, in index
// order, after every other event of the cycle; a request made during a phase for an SM the phase
// has passed waits for the next cycle; requests far ahead are served at their cycle; reference
// stepping sees the same requests. Checked against a model of the contract (a sorted set of
// (cycle, SM) requests) on random traffic.
#include "kernel/issue_arbiter.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "kernel/event_queue.h"

namespace simfa::kernel {
namespace {

using Step = std::pair<Cycle, int>;

// An SM that records its steps and runs `on_step` in each.
class StepRecorder final : public SmCore {
 public:
  StepRecorder(int index, std::vector<Step>& log) : index_(index), log_(&log) {}
  void connect(const SmWiring&) override {}
  bool can_accept(const CtaProgram&) const override { return false; }
  bool fits_empty(const CtaProgram&, std::string&) const override { return false; }
  void accept(Cycle, std::unique_ptr<CtaProgram>) override {}
  void step(Cycle now) override {
    log_->emplace_back(now, index_);
    if (on_step) on_step(now, index_);
  }
  std::size_t resident_ctas() const override { return 0; }
  void report_blocked(std::vector<BlockedThread>&) const override {}
  std::function<void(Cycle, int)> on_step;

 private:
  int index_;
  std::vector<Step>* log_;
};

// Runs functions as events.
class Calls final : public EventTarget {
 public:
  explicit Calls(EventQueue& events) : events_(events) {}
  void call(Cycle at, Priority priority, std::function<void(Cycle)> f) {
    calls_.push_back(std::move(f));
    events_.schedule(at, *this, calls_.size() - 1, priority);
  }
  void on_event(Cycle now, std::uint64_t payload) override { calls_[payload](now); }

 private:
  EventQueue& events_;
  std::vector<std::function<void(Cycle)>> calls_;
};

struct Gpu {
  explicit Gpu(int sms, Stepping stepping = Stepping::kEvent) {
    for (int i = 0; i < sms; ++i) cores.push_back(std::make_unique<StepRecorder>(i, log));
    std::vector<SmCore*> raw;
    for (auto& c : cores) raw.push_back(c.get());
    arbiter = std::make_unique<IssueArbiter>(events, raw, stepping);
  }
  void call(Cycle at, std::function<void(Cycle)> f) {
    calls.call(at, Priority::kEngine, std::move(f));
  }
  void run() {
    while (!events.empty()) events.fire_next(kNever);
  }
  CalendarQueue events;
  Calls calls{events};
  std::vector<Step> log;
  std::vector<std::unique_ptr<StepRecorder>> cores;
  std::unique_ptr<IssueArbiter> arbiter;
};

TEST(IssueArbiter, PhasesStepEachAskingSmOnceInIndexOrder) {
  Gpu gpu(300);  // five words of SMs a cycle
  gpu.call(10, [&](Cycle) {
    for (int sm : {250, 3, 3, 70}) gpu.arbiter->request_issue(sm, 10);
    gpu.arbiter->request_issue(5, 10 + 100000);  // far past the buckets' window
    gpu.arbiter->request_issue(299, 10 + 100000);
  });
  gpu.cores[3]->on_step = [&](Cycle now, int) {
    if (now != 10) return;
    gpu.arbiter->request_issue(200, now);  // further on: this phase
    gpu.arbiter->request_issue(1, now);    // passed: the next cycle
    gpu.arbiter->request_issue(3, now);    // itself: the next cycle
  };
  gpu.run();
  const std::vector<Step> expected = {{10, 3}, {10, 70}, {10, 200},   {10, 250},
                                      {11, 1}, {11, 3},  {100010, 5}, {100010, 299}};
  EXPECT_EQ(gpu.log, expected);
  EXPECT_FALSE(gpu.arbiter->any_request());
}

TEST(IssueArbiter, ReferenceSteppingSeesTheRequests) {
  Gpu gpu(70, Stepping::kReference);
  gpu.arbiter->request_issue(69, 2);
  gpu.arbiter->request_issue(4, 5000);  // past the window
  EXPECT_TRUE(gpu.arbiter->any_request());
  EXPECT_FALSE(gpu.arbiter->requested(1));
  EXPECT_TRUE(gpu.arbiter->requested(2));
  gpu.arbiter->step_all(2);
  EXPECT_FALSE(gpu.arbiter->requested(2));
  EXPECT_TRUE(gpu.arbiter->any_request());
  EXPECT_TRUE(gpu.arbiter->requested(5000));
  gpu.arbiter->step_all(5000);
  EXPECT_FALSE(gpu.arbiter->any_request());
  EXPECT_EQ(gpu.log.size(), 140u);  // every SM at both cycles
}

// Random requests from events and from inside phases, near and far, against the contract's
// model: a phase at cycle c steps, in index order, every SM with a request at c, and a request
// made during the phase of its own cycle for an SM at or before the one being stepped moves to
// c + 1.
TEST(IssueArbiter, RandomTrafficFollowsTheContract) {
  for (int sms : {7, 132, 1000}) {
    SCOPED_TRACE(sms);
    Gpu gpu(sms);
    std::mt19937_64 rng(static_cast<std::uint64_t>(sms));
    std::set<Step> model;  // pending requests
    std::vector<Step> expected;
    Cycle phase = kNever;
    int stepping = -1;
    auto ask = [&](int sm, Cycle at) {
      if (at == phase && sm <= stepping) at = phase + 1;
      model.insert({at, sm});
      gpu.arbiter->request_issue(sm, at);
    };
    auto draw_ahead = [&](Cycle now) {
      const std::uint64_t r = rng() % 100;
      return now + (r < 40 ? 0 : r < 90 ? rng() % 50 : 3000 + rng() % 20000);
    };
    for (auto& core : gpu.cores)
      core->on_step = [&](Cycle now, int sm) {
        phase = now;
        stepping = sm;
        if (rng() % 4 == 0)
          ask(static_cast<int>(rng() % static_cast<std::uint64_t>(sms)), draw_ahead(now));
      };
    for (int i = 0; i < 400; ++i) {
      const Cycle at = rng() % 30000;
      gpu.call(at, [&](Cycle now) {
        for (int k = 0; k < 3; ++k)
          ask(static_cast<int>(rng() % static_cast<std::uint64_t>(sms)), draw_ahead(now));
      });
    }
    // Each logged step must be the model's earliest request.
    std::size_t checked = 0;
    while (!gpu.events.empty()) {
      gpu.events.fire_next(kNever);
      for (; checked < gpu.log.size(); ++checked) {
        ASSERT_FALSE(model.empty());
        EXPECT_EQ(gpu.log[checked], *model.begin());
        model.erase(model.begin());
      }
    }
    EXPECT_TRUE(model.empty());
    EXPECT_FALSE(gpu.arbiter->any_request());
    EXPECT_GT(gpu.log.size(), 1000u);
  }
}

}  // namespace
}  // namespace simfa::kernel
