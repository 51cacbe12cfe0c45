// SlicedCache: the cache core both L2 plugins are built on (l2.unified, l2.remote_copy). It owns
// the slices: a set-associative LRU tag array each, a request queue drained at the slice's
// request bandwidth, an MSHR file that merges misses to one line and stalls the queue when full,
// and the DRAM path (fills, write-backs). Subclasses pick the slice a request goes to (send) and
// react to what a slice served (on_served).
//
// Timing of one request at a slice (docs/memory-hierarchy.md has the whole model):
//   accepted at cycle a: the first cycle the slice's bandwidth allows and, for a miss, an MSHR
//                        is free; queue_wait_cycles += a - arrival
//   hit:                 response at a + hit_latency (+ the route's extra latency)
//   miss:                DRAM read sent at a; fill at a + D; response at a + D + hit_latency
//   merged miss:         answered with the fill it merged into
// Write policy: write-back, write-allocate. A write covering the whole line allocates without a
// fetch; a partial write fetches the line first (fetch-on-write). Dirty state is kept per sector,
// so an eviction writes back only the dirty sectors (sector_bytes each).
#pragma once

#include <cstdint>
#include <vector>

#include "line_table.h"
#include "simfa/component.h"
#include "simfa/memory.h"

namespace simfa::memory_models {

class SlicedCache : public L2Cache, private EventTarget, private MemClient {
 public:
  /// The parameters, the slice_map slot and the statistics every sliced L2 has.
  static void describe(Schema& schema);

  void connect(const SliceMap& slice_map, MemoryPort& dram) override;
  void finish(Cycle end) override;

  std::uint32_t slices() const { return slice_count_; }
  std::uint32_t sets() const { return sets_; }
  std::uint32_t assoc() const { return assoc_; }
  /// Whether `slice` holds `line`, as a regular or a shadow line.
  bool holds(std::uint32_t slice, std::uint64_t line) const { return find(slice, line) != kNoWay; }
  /// Shadow lines in the set of `slice` that `line` maps to.
  std::uint32_t shadow_ways(std::uint32_t slice, std::uint64_t line) const;

 protected:
  explicit SlicedCache(const BuildContext& context);
  ~SlicedCache() override = default;

  /// How a request travels to its slice, beyond the slice itself.
  struct Route {
    Cycle extra_latency = 0;  ///< added to the response time (e.g. a cross-partition crossing)
    bool far = false;         ///< for the subclass: the requester is far from the slice
    bool shadow = false;      ///< look for a shadow copy only; on_shadow_miss when there is none
  };

  /// Counts the request's bytes into llc_read_bytes / llc_write_bytes: call once per request.
  void count_arrival(const MemRequest& request);
  /// Queues `request` at `slice`; it is served once the slice gets to it.
  void enqueue(Cycle now, std::uint32_t slice, const MemRequest& request, Route route);

  /// A read or write was served by `slice`, which now holds `line` (a hit, or the fill it
  /// waited for). Called before its response is scheduled; it may change other slices' lines
  /// (insert_shadow), never `slice`'s.
  virtual void on_served(Cycle /*now*/, std::uint32_t /*slice*/, std::uint64_t /*line*/,
                         const MemRequest& /*request*/, Route /*route*/) {}
  /// A Route::shadow request found no shadow copy at its slice (evicted while it waited); the
  /// subclass sends it on. The request counts as neither hit nor miss at this slice.
  virtual void on_shadow_miss(Cycle /*now*/, const MemRequest& /*request*/) {}

  /// Puts a clean shadow copy of `line` into `slice`, evicting its set's LRU line.
  void insert_shadow(Cycle now, std::uint32_t slice, std::uint64_t line);
  /// Drops `slice`'s copy of `line`, if any (shadow copies only: they are never dirty).
  void invalidate_shadow(std::uint32_t slice, std::uint64_t line);

  std::uint32_t slice_of(std::uint64_t line, std::uint32_t slices) const {
    return slice_map_->slice_of(line, slices);
  }
  std::uint64_t line_of(Addr addr) const { return addr / line_bytes_; }

 private:
  static constexpr std::size_t kNoWay = ~std::size_t{0};
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};
  static constexpr std::uint64_t kInvalid = ~std::uint64_t{0};  ///< the tag of an empty way
  static constexpr int kRateShift = 16;  ///< slice bandwidth bookkeeping in 1/2^16 cycles

  // A request inside the cache: queued at a slice, waiting on an MSHR, or awaiting its response
  // event. Pooled; `next` links the waiters of one MSHR.
  struct Pending {
    MemRequest request;
    Cycle arrival = 0;
    Route route;
    std::uint32_t next = kNone;
  };

  // A FIFO of pending-request indices that doubles when full (never shrinks).
  class RequestQueue {
   public:
    bool empty() const { return count_ == 0; }
    std::uint32_t front() const { return buffer_[head_]; }
    void pop_front() {
      head_ = (head_ + 1) & (static_cast<std::uint32_t>(buffer_.size()) - 1);
      --count_;
    }
    void push_back(std::uint32_t value);

   private:
    std::vector<std::uint32_t> buffer_ = std::vector<std::uint32_t>(16);
    std::uint32_t head_ = 0, count_ = 0;
  };

  struct Mshr {
    std::uint64_t line = 0;
    std::uint32_t head = kNone, tail = kNone;  ///< waiters, in arrival order
  };

  struct SliceStats {
    Counter* hits;
    Counter* misses;
    Counter* mshr_merges;
    Counter* queue_wait_cycles;
    Histogram* mshr_occupancy;
  };

  struct Slice {
    RequestQueue queue;
    std::uint64_t next_free = 0;  ///< when the slice takes its next request, in 1/2^16 cycles
    bool wake_pending = false;    ///< a drain event is scheduled
    bool blocked = false;         ///< the queue's head waits for an MSHR
    bool draining = false;        ///< drain() of this slice is on the stack
    std::vector<std::uint32_t> free_mshrs;  ///< a stack of free MSHR indices (slice-local)
    LineTable mshr_lines;                   ///< line -> MSHR index, for merging
    Cycle occupancy_since = 0;              ///< last change of the MSHR occupancy
    SliceStats stats;
  };

  // Event payloads: the kind in the top bit, an index below it.
  static constexpr std::uint64_t kRespond = std::uint64_t{1} << 63;
  // DRAM tokens: an MSHR's global index, or this for write-backs (nothing waits on them).
  static constexpr std::uint64_t kWritebackToken = ~std::uint64_t{0};

  void on_event(Cycle now, std::uint64_t payload) override;
  void on_response(Cycle now, const MemRequest& request) override;

  void drain(std::uint32_t slice, Cycle now);
  /// Serves the queue head `p` at `slice`; false when it needs an MSHR and none is free.
  bool access(std::uint32_t slice, std::uint32_t p, Cycle now);
  void respond(std::uint32_t p, Cycle when);
  std::uint32_t allocate_pending(const MemRequest& request, Cycle now, Route route);

  std::uint32_t set_of(std::uint64_t line) const {
    return static_cast<std::uint32_t>((line / slice_count_) % sets_);
  }
  // Set-major: a stream of consecutive lines (one set index, every slice) reads one
  // contiguous stretch of the tag array.
  std::size_t set_base(std::uint32_t slice, std::uint64_t line) const {
    return (static_cast<std::size_t>(set_of(line)) * slice_count_ + slice) * assoc_;
  }
  /// The way of `slice` holding `line` (a global tag-array index), or kNoWay.
  std::size_t find(std::uint32_t slice, std::uint64_t line) const;
  /// Installs `line` in `slice` over its set's LRU way (writing that way back when dirty).
  std::size_t install(Cycle now, std::uint32_t slice, std::uint64_t line, bool shadow);
  void touch(std::size_t way) { state_[way].stamp = ++tick_; }
  void free_pending(std::uint32_t p) { free_pending_.push_back(p); }
  std::uint32_t sector_mask(const MemRequest& request) const;
  void occupancy_changed(Slice& s, Cycle now);

  EventQueue& events_;
  const SliceMap* slice_map_ = nullptr;
  MemoryPort* dram_ = nullptr;

  std::uint32_t slice_count_, assoc_, sets_ = 0, line_bytes_, sector_bytes_, mshrs_;
  std::uint32_t full_mask_ = 0;  ///< every sector of a line
  Cycle hit_latency_;
  std::uint64_t interval_;  ///< cycles per request at one slice, in 1/2^16 cycles

  // What a way holds besides its tag.
  struct WayState {
    std::uint64_t stamp = 0;   ///< LRU: larger is more recent
    std::uint32_t dirty = 0;   ///< dirty sectors, bit i = sector i
    std::uint32_t shadow = 0;  ///< 1: a shadow copy (remote copy)
  };

  // The tag array, set-major then slice then way. Tags apart from the rest, so that the lookup
  // loop reads only tags_.
  std::vector<std::uint64_t> tags_;  ///< line index, or kInvalid
  std::vector<WayState> state_;
  std::uint64_t tick_ = 0;

  std::vector<Slice> slice_state_;
  std::vector<Mshr> mshr_entries_;  ///< slice s owns [s * mshrs_, (s + 1) * mshrs_)
  std::vector<Pending> pending_;
  std::vector<std::uint32_t> free_pending_;

  Counter& hits_;
  Counter& misses_;
  Counter& writebacks_;
  Counter& llc_read_bytes_;
  Counter& llc_write_bytes_;
};

}  // namespace simfa::memory_models
