// SlicedCache: the cache core both L2 plugins are built on (l2.unified, l2.remote_copy). It owns
// the slices: a set-associative tag array each (its replacement policy a sub-slot,
// `replacement`, LRU unless the manifest names another), a request queue drained at the slice's
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

#include <bit>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "line_table.h"
#include "next_line.h"
#include "simfa/component.h"
#include "simfa/int_math.h"
#include "simfa/memory.h"
#include "simfa/ring_queue.h"
#include "simfa/slot_pool.h"
#include "simfa/tensor_map.h"
#include "simfa/xor_fold.h"

namespace simfa::memory_models {

/// Zeroed host memory for a table read at random, such as the L2's tag array (6 MB for the
/// H200's 60 MiB): on Linux it asks for 2 MiB pages (transparent huge pages, madvise), so that
/// a lookup needs one TLB entry per 2 MiB of the table instead of one per 4 KiB; elsewhere, or
/// where the kernel has none to give, ordinary pages. Aligned to 64 bytes.
class HostTable {
 public:
  HostTable() = default;
  explicit HostTable(std::size_t bytes);
  HostTable(HostTable&& other) noexcept { *this = std::move(other); }
  HostTable& operator=(HostTable&& other) noexcept;
  HostTable(const HostTable&) = delete;
  HostTable& operator=(const HostTable&) = delete;
  ~HostTable() { release(); }

  void* data() const { return data_; }

 private:
  void release();

  void* mapping_ = nullptr;
  std::size_t mapping_bytes_ = 0;
  void* data_ = nullptr;
};

class SlicedCache : public L2Cache, private EventTarget, private MemClient {
 public:
  /// The parameters, the slice_map slot and the statistics every sliced L2 has.
  static void describe(Schema& schema);

  void connect(const SliceMap& slice_map, MemoryPort& dram) override;
  void finish(Cycle end) override;
  std::optional<CacheUse> cache_use() const override {
    return CacheUse{hits_.value(), misses_.value()};
  }
  ByteTotals llc_bytes() const override {
    return {llc_read_bytes_.value(), llc_write_bytes_.value()};
  }

  std::uint32_t slices() const { return slice_count_; }
  std::uint32_t sets() const { return sets_; }
  std::uint32_t assoc() const { return assoc_; }
  /// Whether `slice` holds `line`, as a regular or a shadow line.
  bool holds(std::uint32_t slice, std::uint64_t line) const { return find(slice, line).found(); }
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

  // Where a line lies: its set's base (set_base), its home slice and, for a subclass, another
  // slice of its (kUnknown until computed). The slice map is a function of the line, so the
  // placement computed for an SM's predicted next line, kept beside the predictor's history,
  // serves that request when it comes (96-99% of them, docs/performance.md §15, §17).
  // 16 bytes: a block is below 2^26 (see Queued), a slice below 4096 (the schema's range).
  static constexpr std::uint16_t kUnknown = 0xffff;
  struct Placement {
    std::uint64_t line = ~std::uint64_t{0};  ///< no line (line_of never gives it)
    std::uint32_t base = 0;
    std::uint16_t home = 0;
    std::uint16_t other = kUnknown;
  };
  static_assert(sizeof(Placement) == 16);
  /// The placement of `line`, its other slice unknown.
  Placement place(std::uint64_t line) const {
    return Placement{line, static_cast<std::uint32_t>(set_base(line)),
                     static_cast<std::uint16_t>(slice_of(line, slice_count_)), kUnknown};
  }
  /// The placement SM `sm` keeps for its predicted next line: read it before count_arrival, set
  /// it after (the reference may move when an SM past gpu.sm_count arrives).
  Placement& predicted_placement(std::uint32_t sm) { return predictor_.extra(sm); }

  /// Counts the request's bytes into llc_read_bytes / llc_write_bytes: call once per request,
  /// first. Returns the line the requester will most likely request next, whose sets the
  /// subclass prefetches (prefetch_block): the host memory of a set is rarely cached, and that
  /// request comes after many others.
  std::uint64_t count_arrival(const MemRequest& request) {
    (request.write ? llc_write_bytes_ : llc_read_bytes_).add(request.bytes);
    return predictor_.next(request.sm, line_of(request.addr));
  }
  /// Queues `request` at `slice`; it is served once the slice gets to it.
  void enqueue(Cycle now, std::uint32_t slice, const MemRequest& request, Route route) {
    enqueue(now, slice, set_base(line_of(request.addr)) + slice, request, route);
  }

  // The same with the set given: the blocks (sets of slices) are numbered set-major, so the set
  // `line` maps to in slice s is block set_base(line) + s. A request looks its line up in up to
  // three slices (home, shadow copy, a write's invalidation) and each computed the set again, two
  // multiply-high divisions and a fold; a subclass computes the base once (docs/performance.md
  // §17).
  std::size_t set_base(std::uint64_t line) const {
    return static_cast<std::size_t>(set_of(line)) * slice_count_;
  }
  /// Starts fetching the keys of block `b`. Defined out of line: in this header GCC 12 found
  /// it "looping pure" (a prefetch is no side effect to it) and deleted its calls from
  /// RemoteCopyL2::send (-fdump-tree-local-pure-const1; objdump).
  void prefetch_block(std::size_t b) const;
  /// Queues `request`, whose line's set in `slice` is block `b`, at `slice`.
  void enqueue(Cycle now, std::uint32_t slice, std::size_t b, const MemRequest& request,
               Route route);
  /// Whether block `b` holds `line`, as a regular or a shadow line.
  bool holds_in_block(std::size_t b, std::uint64_t line) const {
    return find_in(block(b), line) != kNone;
  }
  /// Shadow lines in block `b`.
  std::uint32_t shadow_ways_in_block(std::size_t b) const {
    return static_cast<std::uint32_t>(std::popcount(shadow_mask(block(b))));
  }

  /// A read or write was served by `slice`, which now holds `line` (a hit, or the fill it
  /// waited for); `base` is set_base(line). Called before its response is scheduled; it may
  /// change other slices' lines (insert_shadow), never `slice`'s.
  virtual void on_served(Cycle /*now*/, std::uint32_t /*slice*/, std::uint64_t /*line*/,
                         std::size_t /*base*/, const MemRequest& /*request*/, Route /*route*/) {}
  /// A Route::shadow request found no shadow copy at its slice (evicted while it waited); the
  /// subclass sends it on. The request counts as neither hit nor miss at this slice.
  virtual void on_shadow_miss(Cycle /*now*/, const MemRequest& /*request*/) {}

  /// Puts a clean shadow copy of `line` into block `b` (its set in the slice that takes it),
  /// evicting as a fill does.
  void insert_shadow(Cycle now, std::size_t b, std::uint64_t line);
  /// Drops the copy of `line` in block `b`, if any (shadow copies only: they are never dirty).
  void invalidate_shadow(std::size_t b, std::uint64_t line);

  std::uint32_t slice_of(std::uint64_t line, std::uint32_t slices) const {
    return slice_map_->slice_of(line, slices);
  }
  std::uint64_t line_of(Addr addr) const {
    return line_shift_ >= 0 ? addr >> line_shift_ : addr / line_bytes_;
  }
  /// The set `line` maps to within its slice.
  std::uint32_t set_of(std::uint64_t line) const {
    std::uint64_t q = slice_divisor_.divide(line);
    if (fold_sets_) q = set_fold_(q);
    return static_cast<std::uint32_t>(q - set_divisor_.divide(q) * sets_);
  }

 private:
  /// Exact division of 64-bit values by a divisor fixed at construction, with a multiply and
  /// shifts instead of a divide instruction (Granlund and Montgomery, "Division by Invariant
  /// Integers using Multiplication", PLDI 1994, figure 4.1): the set of every request divides
  /// its line by the slice and set counts, which are rarely powers of two (160 slices).
  class Divisor {
   public:
    explicit Divisor(std::uint64_t d = 1);
    std::uint64_t divide(std::uint64_t n) const {
      const auto t = static_cast<std::uint64_t>((Uint128{multiplier_} * n) >> 64);
      return (t + ((n - t) >> shift1_)) >> shift2_;
    }

   private:
    std::uint64_t multiplier_;
    int shift1_, shift2_;
  };

  static constexpr std::uint32_t kNone = ~std::uint32_t{0};
  static constexpr int kRateShift = 16;  ///< slice bandwidth bookkeeping in 1/2^16 cycles

  // A request inside the cache: queued at a slice, waiting on an MSHR, or awaiting its response
  // event. Pooled; `next` links the waiters of one MSHR. The first waiter of an MSHR stands for
  // it: the MSHR is its `shared` word (see below) and the fill's token names it, so a fill reads
  // the entry it answers and nothing else. Packed (48 bytes): thousands are in flight and each
  // response reads its entry long after it was written.
  struct Pending {
    Addr addr = 0;
    std::uint64_t token = 0;
    MemClient* client = nullptr;
    // Queued: its arrival cycle (high and low halves). Once it owns an MSHR: the MSHR's last
    // waiter and its link in the slice's mshr_lines.
    std::uint32_t shared_low = 0, shared_high = 0;
    std::uint32_t bytes = 0;
    std::uint32_t next = kNone;
    std::uint32_t extra_latency = 0;  ///< Route::extra_latency
    std::uint16_t sm = 0;
    bool write = false;
    std::uint8_t route_flags = 0;  ///< kFar | kShadow

    static constexpr std::uint8_t kFar = 1, kShadow = 2, kFilled = 4;  ///< kFilled: from_dram
    MemRequest request() const {
      return MemRequest{addr, bytes, sm, write, (route_flags & kFilled) != 0, token, client};
    }
    Route route() const {
      return Route{extra_latency, (route_flags & kFar) != 0, (route_flags & kShadow) != 0};
    }
    Cycle arrival() const { return Cycle{shared_high} << 32 | shared_low; }
    std::uint32_t& last_waiter() { return shared_low; }
    std::uint32_t& mshr_link() { return shared_high; }
  };

  using RequestQueue = RingQueue<std::uint32_t>;  ///< pending-request indices
  // A request queued at a slice: its pending entry, its line and the set it looks up (block_of,
  // below 2^26: size is at most 1 GiB, a line at least 16 bytes), known without reading the
  // entry, so that the drain before its own can start fetching what it reads.
  struct Queued {
    std::uint64_t line;
    std::uint32_t p;
    std::uint32_t block;
  };

  struct SliceStats {
    Counter* hits;
    Counter* misses;
    Counter* mshr_merges;
    Counter* queue_wait_cycles;
    Histogram* mshr_occupancy;
  };

  struct Slice {
    RingQueue<Queued> queue;
    std::uint64_t next_free = 0;  ///< when the slice takes its next request, in 1/2^16 cycles
    bool wake_pending = false;    ///< a drain event is scheduled
    bool blocked = false;         ///< the queue's head waits for an MSHR
    bool draining = false;        ///< drain() of this slice is on the stack
    std::uint32_t mshrs_busy = 0;
    LineChains mshr_lines;        ///< line -> the pending request owning its MSHR, for merging
    Cycle occupancy_since = 0;    ///< last change of the MSHR occupancy
    SliceStats stats;
  };

  // Event payloads: the kind in the top bit, an index below it (a response batch: its latency
  // class; a drain: the slice).
  static constexpr std::uint64_t kRespond = std::uint64_t{1} << 63;
  // The responses scheduled at one route latency fire in the order they were scheduled (now +
  // hit_latency + extra, with now never decreasing), so the entries they will read are known
  // ahead: each response prefetches the entry of the one kPrefetchAhead places behind it, and
  // hands the one kHintAhead places behind it, whose entry is cached by then, to its client's
  // prefetch_response (the coalescer's entry and merge window, docs/performance.md §11).
  static constexpr std::uint32_t kPrefetchAhead = 16;
  static constexpr std::uint32_t kHintAhead = 8;
  // The responses of one class due in one cycle are one event, a batch, scheduled with the
  // first of them. They were all scheduled in one cycle (when - hit_latency - extra), so they
  // were consecutive in the queue's order but for events of other components scheduled in
  // between for the same cycle and priority, which touch no state a response reads (docs/
  // performance.md §4); tools/stats_identity.sh checks that the results stay the same.
  struct ResponseClass {
    std::uint32_t extra_latency;
    RequestQueue scheduled;  ///< pending requests with a response due, in firing order
    RequestQueue batches;    ///< responses per scheduled batch event, in firing order
    Cycle last_batch = kNever;  ///< the cycle of the batch scheduled last
  };
  // DRAM tokens: slice << 32 | the pending request owning the MSHR, or this for write-backs
  // (nothing waits on them).
  static constexpr std::uint64_t kWritebackToken = ~std::uint64_t{0};

  void on_event(Cycle now, std::uint64_t payload) override;
  void on_response(Cycle now, const MemRequest& request) override;

  void drain(std::uint32_t slice, Cycle now);
  /// Serves the queue head `q` at `slice`; false when it needs an MSHR and none is free.
  bool access(std::uint32_t slice, Queued q, Cycle now);
  void respond(std::uint32_t p, Cycle when);
  // In the header, as count_arrival: both run once a request and were calls of their own.
  std::uint32_t allocate_pending(const MemRequest& request, Cycle now, Route route) {
    if (route.extra_latency > ~std::uint32_t{0}) [[unlikely]]
      throw_extra_latency(route.extra_latency);
    const Pending entry{request.addr,
                        request.token,
                        request.client,
                        static_cast<std::uint32_t>(now),
                        static_cast<std::uint32_t>(now >> 32),
                        request.bytes,
                        kNone,
                        static_cast<std::uint32_t>(route.extra_latency),
                        request.sm,
                        request.write,
                        static_cast<std::uint8_t>((route.far ? Pending::kFar : 0) |
                                                  (route.shadow ? Pending::kShadow : 0))};
    return pending_.add(entry);
  }
  [[noreturn, gnu::cold]] static void throw_extra_latency(Cycle extra_latency);

  // The set of `slice` that `line` maps to, numbered set-major: a stream of consecutive lines
  // (one set index, every slice) reads one contiguous stretch of the tag array.
  std::size_t block_of(std::uint32_t slice, std::uint64_t line) const {
    return set_base(line) + slice;
  }

  // One set of one slice is a block of block_words_ 64-bit words on the host's 64-byte cache
  // lines: first the ways' keys, which a lookup reads (with 16 ways, one line), then what a hit
  // or a fill updates (with up to 40 ways, one line):
  //   per way, a 32-bit key: 0 for an empty way, else key_of(line), exact for the lines of a
  //   window of 2^32 - 2 (512 GiB of addresses with 128-byte lines) centred on the first line
  //   installed; the lines outside it share kWideKey and are kept apart in wide_lines_;
  //   per way a byte of replacement state, then a word of replacement state for the set
  //   (ReplacementPolicy::Set: for replacement.lru, each way's stamp and the set's clock), and
  //   masks of the ways holding shadow copies and of the dirty ways (whose dirty sectors, bit
  //   i = sector i, live apart in dirty_).
  // A lookup reads the key line; a hit then the state line, which the lookup prefetches.
  // A way is a global index block * assoc + way-in-set.
  static constexpr std::uint32_t kWideKey = ~std::uint32_t{0};
  std::uint32_t key_of(std::uint64_t line) const {
    const std::uint64_t offset = line - key_base_;  // wraps below the window
    return offset < kWideKey - 1 ? static_cast<std::uint32_t>(offset + 1) : kWideKey;
  }
  std::uint64_t* block(std::size_t b) { return block_base_ + b * block_words_; }
  const std::uint64_t* block(std::size_t b) const { return block_base_ + b * block_words_; }
  std::uint32_t* keys(std::uint64_t* set) { return reinterpret_cast<std::uint32_t*>(set); }
  const std::uint32_t* keys(const std::uint64_t* set) const {
    return reinterpret_cast<const std::uint32_t*>(set);
  }
  std::uint64_t* state(std::uint64_t* set) { return set + state_word_; }
  const std::uint64_t* state(const std::uint64_t* set) const { return set + state_word_; }
  ReplacementPolicy::Set replacement_state(std::uint64_t* set) const {
    return {reinterpret_cast<unsigned char*>(set + state_word_), &set[mask_word_], assoc_};
  }
  std::uint64_t shadow_mask(const std::uint64_t* set) const { return set[mask_word_ + 1]; }
  std::uint64_t& shadow_mask(std::uint64_t* set) { return set[mask_word_ + 1]; }
  std::uint64_t& dirty_mask(std::uint64_t* set) { return set[mask_word_ + 2]; }
  /// The ways of `set` whose key is `key` (bit w: way w).
  std::uint64_t ways_keyed(const std::uint64_t* set, std::uint32_t key) const;
  /// The line way `w` of block `b` holds (the way is valid).
  std::uint64_t line_in(std::size_t b, const std::uint64_t* set, std::uint32_t w) const {
    const std::uint32_t key = keys(set)[w];
    return key != kWideKey ? key_base_ + key - 1 : wide_lines_[b * assoc_ + w];
  }
  /// The way-in-set of `set` holding `line`, or kNone.
  std::uint32_t find_in(const std::uint64_t* set, std::uint64_t line) const;
  /// A way: its set (block) and its index in the set.
  struct Way {
    std::size_t block;
    std::uint32_t way;  ///< kNone: not found
    bool found() const { return way != kNone; }
  };
  /// The way of `slice` holding `line` (way kNone: none).
  Way find(std::uint32_t slice, std::uint64_t line) const;
  /// Installs `line` in `slice` over its set's first empty way, else the replacement policy's
  /// victim (writing that way back when dirty).
  Way install(Cycle now, std::uint32_t slice, std::uint64_t line, bool shadow) {
    return install_in_block(now, block_of(slice, line), line, shadow);
  }
  /// The same, with the line's set in the slice given (block `b`).
  Way install_in_block(Cycle now, std::size_t b, std::uint64_t line, bool shadow);
  void touch(Way w) { replacement_->on_hit(replacement_state(block(w.block)), w.way); }
  /// Adds `sectors` to the dirty sectors of `w`.
  void mark_dirty(Way w, std::uint32_t sectors);
  /// Fills every way with a line of the flush buffer, start_dirty_ of them dirty.
  void fill_dirty();
  /// Where start_dirty's buffer lies: 1 GiB below the frontends' first tensor (kFirstTensorBase).
  static constexpr Addr kFlushBufferBase = kFirstTensorBase - (Addr{1} << 30);
  void free_pending(std::uint32_t p) { pending_.release(p); }
  std::uint32_t sector_mask(const MemRequest& request) const;
  void occupancy_changed(Slice& s, Cycle now);
  // mshr_lines' view of the pending requests owning MSHRs.
  auto mshr_line() const {
    return [this](std::uint32_t p) { return line_of(pending_[p].addr); };
  }
  auto mshr_link() {
    return [this](std::uint32_t p) -> std::uint32_t& { return pending_[p].mshr_link(); };
  }

  EventQueue& events_;
  const SliceMap* slice_map_ = nullptr;
  MemoryPort* dram_ = nullptr;
  ReplacementPolicy* replacement_;

  std::uint32_t slice_count_, assoc_, sets_ = 0, line_bytes_, sector_bytes_, mshrs_;
  int line_shift_ = -1;  ///< log2(line_bytes_) when a power of two
  std::uint32_t full_mask_ = 0;  ///< every sector of a line
  double start_dirty_;  ///< share of the lines dirty at the start (0: the L2 starts empty)
  Cycle hit_latency_;
  std::uint64_t interval_;  ///< cycles per request at one slice, in 1/2^16 cycles
  Divisor slice_divisor_, set_divisor_;
  bool fold_sets_ = false;  ///< set_index = "fold" (else modulo)
  XorFold set_fold_{1};     ///< xor_fold by the bits of sets_ - 1 (set_index = "fold")

  std::size_t block_words_ = 0;
  std::size_t state_word_ = 0;  ///< where a block's state starts: its replacement bytes
  std::size_t mask_word_ = 0;   ///< the replacement word; the shadow and dirty masks follow
  HostTable blocks_;            ///< the storage
  std::uint64_t* block_base_ = nullptr;    ///< the first block, on a 64-byte boundary
  std::vector<std::uint32_t> dirty_;       ///< per way: dirty sectors, valid where dirty_mask says
  std::uint64_t key_base_ = 0;             ///< the first line of key_of's window
  bool key_base_set_ = false;              ///< at the first install
  std::vector<std::uint64_t> wide_lines_;  ///< per way: its line where its key is kWideKey
                                           ///< (empty until such a line is installed)

  std::vector<Slice> slice_state_;
  std::vector<ResponseClass> response_classes_;  ///< one per route latency seen (usually 2)
  SlotPool<Pending> pending_;

  Counter& hits_;
  Counter& misses_;
  Counter& writebacks_;
  Counter& llc_read_bytes_;
  Counter& llc_write_bytes_;
  NextLinePredictor<Placement> predictor_;
};

}  // namespace simfa::memory_models
