// BurstWheel: bursts (MemoryPort::send_burst) held until their lines' cycles, then sent to a port
// line by line, every line due in one cycle by one event for all engines (docs/performance.md
// §10). Header-only, for a memory port's own use: it never crosses a plugin boundary.
//
// A burst is a record (its request, its addresses, how many are sent); a cycle's bucket lists
// the bursts with lines due in it. Its event sends each listed burst's lines of the cycle and
// lists the burst again in the next cycle while it has lines left, so the buckets touched are
// the current cycle's and the next one's, and a line costs a read of its address, not a copy of
// its request.
//
// The lines of one cycle leave at Priority::kEngine, where a TMA engine stepping line by line
// sends them, burst by burst in the order the bursts were listed in the cycle's bucket: bursts
// starting in the cycle in booking order, then those continuing from the cycle before, in their
// order there. Line by line, a cycle's order is that of the engines' step events instead. That
// order, and where other engine-priority events of the cycle fall between the lines, is what
// bursts change.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "simfa/event_queue.h"
#include "simfa/memory.h"

namespace simfa {

class BurstWheel final : private EventTarget {
 public:
  BurstWheel(EventQueue& events, MemoryPort& port) : events_(events), port_(&port) {
    buckets_.resize(kInitialCycles);
  }
  BurstWheel(const BurstWheel&) = delete;
  BurstWheel& operator=(const BurstWheel&) = delete;

  /// Books the burst's lines at their cycles.
  void book(Cycle now, const MemoryPort::Burst& burst) {
    if (burst.count == 0) return;
    // A burst continuing its engine's latest, still pending, in the very next slot (while
    // max_outstanding binds, one line a response) joins it: the lines leave at the same cycles.
    if (burst.request.sm < latest_.size()) {
      const std::uint32_t last = latest_[burst.request.sm];
      if (last != kNone && extends(bursts_[last], burst)) {
        Record& r = bursts_[last];
        r.addrs.insert(r.addrs.end(), burst.addrs, burst.addrs + burst.count);
        end_after(r, burst.count);
        return;
      }
    } else {
      latest_.resize(std::size_t{burst.request.sm} + 1, kNone);
    }
    std::uint32_t id;
    if (free_.empty()) {
      id = static_cast<std::uint32_t>(bursts_.size());
      bursts_.emplace_back();
    } else {
      id = free_.back();
      free_.pop_back();
    }
    Record& r = bursts_[id];
    r.request = burst.request;
    r.addrs.assign(burst.addrs, burst.addrs + burst.count);  // keeps its capacity when reused
    r.sent = 0;
    r.slots = burst.first_slots;
    r.per_cycle = burst.per_cycle;
    r.end_cycle = burst.first;
    r.end_used = burst.per_cycle - burst.first_slots;
    end_after(r, burst.count);
    latest_[burst.request.sm] = id;
    list(now, burst.first, id);
  }

 private:
  static constexpr std::size_t kInitialCycles = 256;

  static constexpr std::uint32_t kNone = ~std::uint32_t{0};

  struct Record {
    MemRequest request;
    std::vector<Addr> addrs;
    std::uint32_t sent = 0;
    std::uint32_t slots = 0;  ///< lines it sends in the cycle it is listed in next
    std::uint32_t per_cycle = 1;
    Cycle end_cycle = 0;         ///< the cycle of its last line
    std::uint32_t end_used = 0;  ///< its lines in end_cycle
  };

  static void end_after(Record& r, std::uint32_t lines) {
    const std::uint64_t slots = std::uint64_t{r.end_used} + lines;
    r.end_cycle += (slots - 1) / r.per_cycle;
    r.end_used = static_cast<std::uint32_t>((slots - 1) % r.per_cycle + 1);
  }
  // Whether `burst`'s lines are the next of pending record `r`: the same request but for the
  // address, and its first line in the slot after r's last.
  static bool extends(const Record& r, const MemoryPort::Burst& burst) {
    if (r.sent == r.addrs.size() || r.per_cycle != burst.per_cycle) return false;
    const MemRequest& a = r.request;
    const MemRequest& b = burst.request;
    if (a.client != b.client || a.token != b.token || a.write != b.write || a.bytes != b.bytes)
      return false;
    return r.end_used == r.per_cycle
               ? burst.first == r.end_cycle + 1 && burst.first_slots == r.per_cycle
               : burst.first == r.end_cycle && burst.first_slots == r.per_cycle - r.end_used;
  }
  struct Bucket {
    Cycle cycle = 0;
    bool armed = false;  ///< its event is scheduled (it lists the bursts of `cycle`)
    std::vector<std::uint32_t> bursts;
  };

  Bucket& slot(Cycle at) { return buckets_[at & (buckets_.size() - 1)]; }

  // Lists burst `id` in cycle `at` (>= now), scheduling the cycle's event. Listed cycles lie in
  // [now, now + buckets_.size()), so no two share a bucket; a burst further ahead doubles the
  // ring.
  void list(Cycle now, Cycle at, std::uint32_t id) {
    while (at - now >= buckets_.size()) grow();
    Bucket& b = slot(at);
    if (!b.armed) {
      b.cycle = at;
      b.armed = true;
      events_.schedule(at, *this, 0, Priority::kEngine);
    }
    b.bursts.push_back(id);
  }

  void grow() {
    std::vector<Bucket> bigger(buckets_.size() * 2);
    for (Bucket& b : buckets_)
      if (b.armed) bigger[b.cycle & (bigger.size() - 1)] = std::move(b);
    buckets_ = std::move(bigger);
  }

  void on_event(Cycle now, std::uint64_t /*payload*/) override {
    // Take the cycle's list: listing in the next cycle may grow the ring and move the bucket.
    // Sending lists nothing in this cycle (a response comes a cycle later at the earliest).
    std::swap(due_, slot(now).bursts);
    slot(now).armed = false;
    for (const std::uint32_t id : due_) {
      Record& r = bursts_[id];
      const std::uint32_t end = std::min<std::uint32_t>(
          r.sent + r.slots, static_cast<std::uint32_t>(r.addrs.size()));
      MemRequest request = r.request;
      for (; r.sent < end; ++r.sent) {
        request.addr = r.addrs[r.sent];
        port_->send(now, request);
      }
      if (r.sent < r.addrs.size()) {
        r.slots = r.per_cycle;
        list(now, now + 1, id);
      } else {
        free_.push_back(id);
      }
    }
    due_.clear();
  }

  EventQueue& events_;
  MemoryPort* port_;
  std::vector<Bucket> buckets_;  ///< a ring over cycles, a power of two long
  std::vector<Record> bursts_;   ///< records, reused through free_
  std::vector<std::uint32_t> free_;
  std::vector<std::uint32_t> latest_;  ///< per SM: the record of its latest burst (kNone: none)
  std::vector<std::uint32_t> due_;  ///< the bursts of the cycle being sent
};

}  // namespace simfa
