// CalendarQueue against a std::priority_queue of the same events, on the simulator's mix: ~10k
// pending events, each fired event scheduling one more, 95% of them 1-500 cycles ahead (pipeline
// and memory latencies), 5% 10k-1M ahead (far phases, timeouts). One iteration is one
// schedule+pop pair. The last line printed is the calendar's speed relative to the heap.
//   event_queue_bench --benchmark_repetitions=5   (ratio of the medians)
#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <map>
#include <queue>
#include <random>
#include <string>
#include <vector>

#include "kernel/event_queue.h"

namespace {

using simfa::Cycle;
using simfa::EventTarget;
using simfa::Priority;
using simfa::kernel::CalendarQueue;

constexpr std::size_t kPending = 10'000;
constexpr std::uint32_t kNearMax = 500;
constexpr std::uint32_t kFarMin = 10'000;
constexpr std::uint32_t kFarMax = 1'000'000;

struct Draw {
  std::uint32_t delay;
  Priority priority;
};

// Pre-drawn delays, so both queues see the same stream and the PRNG is not what is measured.
class DrawTable {
 public:
  DrawTable() : draws_(std::size_t{1} << 16) {
    std::mt19937_64 rng(1);
    std::uniform_int_distribution<std::uint32_t> near(1, kNearMax);
    std::uniform_int_distribution<std::uint32_t> far(kFarMin, kFarMax);
    // An assumed class mix: half memory responses, the other classes sharing the rest.
    constexpr Priority kPriorities[] = {Priority::kMemory, Priority::kMemory, Priority::kMemory,
                                        Priority::kEngine, Priority::kWake,   Priority::kIssue};
    for (Draw& d : draws_) {
      d.delay = rng() % 100 < 95 ? near(rng) : far(rng);
      d.priority = kPriorities[rng() % std::size(kPriorities)];
    }
  }
  const Draw& take() { return draws_[next_++ & (draws_.size() - 1)]; }

 private:
  std::vector<Draw> draws_;
  std::size_t next_ = 0;
};

// The baseline: one binary heap ordered by (cycle, priority, sequence).
class HeapQueue {
 public:
  void schedule(Cycle when, EventTarget& target, std::uint64_t payload, Priority priority) {
    heap_.push(Event{when, priority, seq_++, &target, payload});
  }
  bool fire_next() {
    if (heap_.empty()) return false;
    const Event e = heap_.top();
    heap_.pop();
    now_ = e.when;
    e.target->on_event(now_, e.payload);
    return true;
  }
  Cycle now() const { return now_; }
  std::size_t size() const { return heap_.size(); }

 private:
  struct Event {
    Cycle when;
    Priority priority;
    std::uint64_t seq;
    EventTarget* target;
    std::uint64_t payload;
  };
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      if (a.when != b.when) return a.when > b.when;
      if (a.priority != b.priority) return a.priority > b.priority;
      return a.seq > b.seq;
    }
  };
  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  std::uint64_t seq_ = 0;
  Cycle now_ = 0;
};

// Every fired event schedules its successor, keeping the pending count constant.
template <class Queue>
class Rescheduler final : public EventTarget {
 public:
  Rescheduler(Queue& queue, DrawTable& draws) : queue_(queue), draws_(draws) {}
  void on_event(Cycle now, std::uint64_t payload) override {
    const Draw& d = draws_.take();
    queue_.schedule(now + d.delay, *this, payload, d.priority);
  }

 private:
  Queue& queue_;
  DrawTable& draws_;
};

template <class Queue>
void BM_ScheduleAndPop(benchmark::State& state) {
  Queue queue;
  DrawTable draws;
  Rescheduler<Queue> target(queue, draws);
  for (std::uint64_t i = 0; i < kPending; ++i) target.on_event(0, i);
  // Far events live ~2000x longer than near ones, so most pending events are far ones once the
  // mix settles; after 2 * kFarMax cycles nothing of the initial fill is left.
  while (queue.now() < 2 * kFarMax) queue.fire_next();
  for (auto _ : state) queue.fire_next();
  state.counters["pairs/s"] = benchmark::Counter(static_cast<double>(state.iterations()),
                                                 benchmark::Counter::kIsRate);
  state.counters["pending"] = static_cast<double>(queue.size());
}

BENCHMARK(BM_ScheduleAndPop<CalendarQueue>)->Name("calendar")->Unit(benchmark::kNanosecond);
BENCHMARK(BM_ScheduleAndPop<HeapQueue>)->Name("heap")->Unit(benchmark::kNanosecond);

// Reports through the reporter the command-line flags select, and keeps each benchmark's CPU time
// per pair for the ratio: the median over repetitions when there are several, else the best run.
class RatioReporter final : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context& context) override { return display_->ReportContext(context); }
  void ReportRuns(const std::vector<Run>& runs) override {
    display_->ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.error_occurred) continue;
      const double t = run.GetAdjustedCPUTime();
      if (run.run_type == Run::RT_Aggregate && run.aggregate_name == "median") {
        median_[run.run_name.function_name] = t;
      } else if (run.run_type == Run::RT_Iteration) {
        const auto [it, inserted] = best_.try_emplace(run.run_name.function_name, t);
        if (!inserted && t < it->second) it->second = t;
      }
    }
  }
  void Finalize() override { display_->Finalize(); }

  void print_ratio() const {
    const bool medians = median_.contains("calendar") && median_.contains("heap");
    const std::map<std::string, double>& times = medians ? median_ : best_;
    if (!times.contains("calendar") || !times.contains("heap")) return;
    const double calendar = times.at("calendar");
    const double heap = times.at("heap");
    std::printf("calendar vs heap: %.2fx faster (%s %.1f ns vs %.1f ns CPU per schedule+pop)\n",
                heap / calendar, medians ? "median" : "best", calendar, heap);
  }

 private:
  benchmark::BenchmarkReporter* display_ = benchmark::CreateDefaultDisplayReporter();
  std::map<std::string, double> best_;
  std::map<std::string, double> median_;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.print_ratio();
  benchmark::Shutdown();
  return 0;
}
