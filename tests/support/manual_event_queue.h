// A manual event queue for testing components alone (STYLE.md, Tests): std::priority_queue with
// the kernel's total order (cycle, priority, insertion sequence), driven by the test either event
// by event (next_cycle, fire_next: the SM harness's run loops) or up to a cycle (run).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <queue>
#include <set>
#include <stdexcept>
#include <utility>
#include <vector>

#include "simfa/event_queue.h"

namespace simfa::test {

class ManualEventQueue final : public EventQueue {
 public:
  Cycle now() const override { return now_; }

  EventId schedule(Cycle when, EventTarget& target, std::uint64_t payload,
                   Priority priority) override {
    // An event must not land before the one being processed in the total order (the priority
    // half is checked for the events run() fires).
    if (when < now_ || (running_ && when == now_ && priority < priority_))
      throw std::logic_error("event scheduled into the past");
    const std::uint64_t seq = next_seq_++;
    heap_.push({when, priority, seq, &target, payload});
    pending_.insert(seq);
    return {seq};
  }

  bool cancel(EventId id) override { return pending_.erase(id.seq) > 0; }
  std::uint64_t scheduled() const override { return counts_ ? next_seq_ : kUncounted; }
  /// false: scheduled() answers kUncounted, as a queue that does not count its events.
  void count_scheduled(bool on) { counts_ = on; }

  bool empty() const { return pending_.empty(); }

  /// Cycle of the next pending event; the queue must not be empty.
  Cycle next_cycle() {
    drop_cancelled();
    return heap_.top().when;
  }

  /// Fires the next pending event and returns its target; the queue must not be empty.
  EventTarget* fire_next() { return fire(false); }

  /// Runs `fn(now)` as an event, e.g. an SM issue phase at Priority::kIssue.
  void call(Cycle when, Priority priority, std::function<void(Cycle)> fn) {
    calls_.push_back(std::make_unique<Call>(std::move(fn)));
    schedule(when, *calls_.back(), 0, priority);
  }

  /// Fires events in order until none is left or the next one is after `until`.
  void run(Cycle until = kNever) {
    while (!empty() && next_cycle() <= until) fire(true);
  }

  /// Events fired so far: a component that ticks while idle shows up here.
  std::uint64_t fired() const { return fired_; }

 private:
  struct Entry {
    Cycle when;
    Priority priority;
    std::uint64_t seq;
    EventTarget* target;
    std::uint64_t payload;
    bool operator>(const Entry& o) const {
      if (when != o.when) return when > o.when;
      if (priority != o.priority) return priority > o.priority;
      return seq > o.seq;
    }
  };
  class Call final : public EventTarget {
   public:
    explicit Call(std::function<void(Cycle)> fn) : fn_(std::move(fn)) {}
    void on_event(Cycle now, std::uint64_t) override { fn_(now); }

   private:
    std::function<void(Cycle)> fn_;
  };

  void drop_cancelled() {
    while (!heap_.empty() && !pending_.count(heap_.top().seq)) heap_.pop();
  }

  EventTarget* fire(bool check_priority) {
    drop_cancelled();
    const Entry e = heap_.top();
    heap_.pop();
    pending_.erase(e.seq);
    now_ = e.when;
    priority_ = e.priority;
    running_ = check_priority;
    ++fired_;
    e.target->on_event(e.when, e.payload);
    running_ = false;
    return e.target;
  }

  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap_;
  std::set<std::uint64_t> pending_;
  std::vector<std::unique_ptr<Call>> calls_;
  std::uint64_t next_seq_ = 0;
  bool counts_ = true;
  std::uint64_t fired_ = 0;
  Cycle now_ = 0;
  Priority priority_ = Priority::kMemory;
  bool running_ = false;
};

}  // namespace simfa::test
