// The kernel's discrete-event queue (DESIGN §2): a two-level timing wheel (per-cycle buckets for
// the current period of `wheel_cycles` cycles, per-period buckets for the periods after it) plus a
// min-heap for events beyond that, which move down the levels as time reaches them. Events fire
// in the total order (cycle, priority, insertion sequence).
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "simfa/event_queue.h"
#include "simfa/types.h"

namespace simfa::kernel {

/// The set of pending (scheduled, neither fired nor cancelled) sequence numbers. Sequence numbers
/// are issued in order, so the set is a bitmap over them, cut into chunks of 4096 that are
/// recycled once they hold nothing: memory follows the pending events, not the events ever
/// scheduled, even when one far-future event stays pending for billions of others.
class PendingSeqs {
 public:
  PendingSeqs();
  /// Issues the next sequence number and marks it pending.
  std::uint64_t add();
  /// Sequence numbers issued so far.
  std::uint64_t issued() const;
  /// Unmarks `seq`; false when it was not pending (fired, cancelled or never issued).
  bool erase(std::uint64_t seq);
  bool contains(std::uint64_t seq) const;
  /// Chunks ever allocated: bounded by the chunks holding pending seqs at any one time.
  std::size_t chunks_allocated() const;

 private:
  static constexpr unsigned kChunkShift = 12;
  static constexpr std::size_t kChunkWords = (std::size_t{1} << kChunkShift) / 64;
  using Chunk = std::array<std::uint64_t, kChunkWords>;
  // The counts sit in the ring rather than in the chunks, so keeping them costs no cache miss.
  struct RingSlot {
    Chunk* bits = nullptr;  // null: no pending seq in this chunk
    std::uint32_t count = 0;
  };

  static constexpr std::uint64_t bit(std::uint64_t seq) { return std::uint64_t{1} << (seq & 63); }
  static constexpr std::size_t word(std::uint64_t seq) { return (seq >> 6) % kChunkWords; }
  void open_chunk(std::uint64_t chunk);
  void release(std::uint64_t chunk);

  // Chunk k is ring_[k & (ring_.size() - 1)] for k in [first_, last_].
  std::vector<RingSlot> ring_;
  std::uint64_t first_ = 0;
  std::uint64_t last_ = 0;     // the chunk new sequence numbers go to; never released
  RingSlot* tail_ = nullptr;   // ring_'s slot of last_
  std::uint64_t next_ = 0;     // the next sequence number
  std::vector<std::unique_ptr<Chunk>> owned_;
  std::vector<Chunk*> spare_;
};

/// One bit per slot, with a summary bit per 64-slot word, so finding the next busy slot after a
/// long idle stretch costs a few word scans rather than one test per slot.
class SlotBitmap {
 public:
  explicit SlotBitmap(std::size_t slots);
  void set(std::size_t slot);
  void reset(std::size_t slot);
  /// reset(slot) if `condition`, without a branch on it.
  void reset_if(std::size_t slot, bool condition);
  /// The first set slot >= `from`, or the slot count when there is none.
  std::size_t find_from(std::size_t from) const;

 private:
  std::size_t find_after_word(std::size_t word) const;

  std::size_t slots_;
  std::vector<std::uint64_t> words_;
  std::vector<std::uint64_t> summary_;  // bit w set iff words_[w] != 0
};

class CalendarQueue final : public simfa::EventQueue {
 public:
  /// `wheel_cycles` (a power of two) is the period covered by per-cycle buckets; the next
  /// kPeriodBuckets - 1 periods are held in one bucket each, later events in the overflow heap.
  explicit CalendarQueue(std::size_t wheel_cycles = 4096);

  /// With the default wheel, 1024 x 4096 cycles = 4M cycles ahead: past the far events of the
  /// simulator's mix (up to 1M cycles, benches/event_queue_bench.cpp), which so never reach the
  /// heap.
  static constexpr std::size_t kPeriodBuckets = 1024;

  Cycle now() const override;
  /// Throws simfa::Error when `when` < now(), `when` is kNever or `priority` is out of range.
  EventId schedule(Cycle when, EventTarget& target, std::uint64_t payload = 0,
                   Priority priority = Priority::kMemory) override;
  bool cancel(EventId id) override;
  std::uint64_t scheduled() const override { return issued_; }

  bool empty() const;
  /// Pending events, cancelled ones excluded.
  std::size_t size() const;
  /// The cycle of the earliest pending event; kNever when empty.
  Cycle next_cycle() const;
  /// Fires the earliest pending event (setting now() to its cycle) if its cycle is at most
  /// `limit`; false when there is none (empty, or the next event is later than `limit`). Inline:
  /// the run loop fires every event through it.
  bool fire_next(Cycle limit = kNever);
  std::uint64_t fired() const;

 private:
  // seq_prio = seq << 2 | priority: ordering by it orders by sequence, and an entry fits 24 bytes.
  struct Entry {
    EventTarget* target;
    std::uint64_t payload;
    std::uint64_t seq_prio;
  };
  struct TimedEntry {
    Cycle when;
    Entry entry;
  };
  // std heap order for a min-heap on (when, seq_prio).
  struct FiresAfter {
    bool operator()(const TimedEntry& a, const TimedEntry& b) const {
      return a.when != b.when ? a.when > b.when : a.entry.seq_prio > b.entry.seq_prio;
    }
  };
  // Per-cycle events live in pooled nodes linked into FIFOs. A freed node is the next one reused,
  // so the few nodes in flight stay in cache, where a vector per slot would spread the slots'
  // storage over the whole wheel.
  static constexpr std::uint32_t kNil = ~std::uint32_t{0};
  struct Node {
    Entry entry;
    std::uint32_t next;
  };
  // A FIFO as a circular list known by its tail (whose `next` is the head). 4 bytes a FIFO keep a
  // slot at 16 bytes: time sweeps the wheel and each slot it reaches is likely a cache miss.
  struct Fifo {
    std::uint32_t tail = kNil;
    bool empty() const { return tail == kNil; }
  };
  // The events of one cycle, one FIFO per priority.
  struct Slot {
    std::array<Fifo, kPriorityCount> events;
  };

  // The first busy slot >= `from`, or mask_ + 1 when there is none in the period.
  std::size_t find_slot(std::size_t from) const;
  // fire_next() for every case but the common one: another event of the current cycle, nothing
  // cancelled, the pending set not kept.
  bool fire_next_slow(Cycle limit);
  // With kDropCancelled, drops the cancelled entries ahead of the earliest pending event (only
  // needed while some are stored). Returns that event's cycle, or kNever.
  template <bool kDropCancelled>
  Cycle settle() const;
  // Drops the cancelled entries at the front of each FIFO of a slot; false when that emptied it.
  bool drop_cancelled_in_slot(std::size_t slot) const;
  // Drops the cancelled entries of a period bucket and recomputes its minimum; false when that
  // emptied it.
  bool drop_cancelled_in_bucket(std::size_t bucket) const;
  // Stores an event of cycle `when` >= now_ at the level its distance from now_ selects.
  void place(Cycle when, const Entry& e);
  void place_after_period(Cycle when, const Entry& e);
  void add_to_slot(std::size_t slot, const Entry& e, std::uint32_t node);
  // schedule() for every case; schedule() handles the common one itself.
  [[gnu::noinline]] EventId schedule_any(Cycle when, EventTarget& target, std::uint64_t payload,
                                         unsigned priority);
  std::uint64_t next_seq() {
    if (tracking_) pending_.add();  // issues issued_ too: both count from 0
    return issued_++;
  }
  // Starts tracking_: marks exactly the stored entries pending. Once, in time linear in the
  // sequence numbers issued so far.
  void start_tracking();
  void enter_period(Cycle t);
  std::uint32_t take_node();
  const Entry& front(Fifo fifo) const;
  // Unlinks the front node and returns it to the pool; `fifo` must not be empty.
  Entry pop_front(Fifo& fifo) const;

  unsigned period_shift_;  // log2(wheel_cycles)
  std::size_t mask_;       // wheel_cycles - 1
  Cycle now_ = 0;
  Cycle period_end_;  // the first cycle after now_'s period (kNever for the last period)
  std::uint64_t fired_ = 0;
  std::uint64_t cancelled_ = 0;
  std::uint64_t issued_ = 0;  // sequence numbers issued
  // The pending sequence numbers, kept only from the first cancel() on (tracking_): nothing
  // else needs them, and keeping them costs every event (5% of a run's instructions,
  // docs/performance.md §7.6). Until then every stored entry is pending.
  bool tracking_ = false;
  PendingSeqs pending_;

  // The storage below is mutable because next_cycle() drops the cancelled entries it has to look
  // past; that changes no observable state.
  mutable std::vector<Node> nodes_;
  mutable std::uint32_t free_nodes_ = kNil;
  // Events of the cycles of now_'s period from now_ on, in slot `cycle & mask_`.
  mutable std::vector<Slot> slots_;
  // Bit p of slot_priorities_[i] is set iff slots_[i].events[p] is not empty; a slot is busy iff
  // its byte is not 0, and find_slot() scans them. A bitmap of busy slots beside them (with a
  // summary word per 4096 slots) cost every event a read-modify-write of both, to set or clear
  // it: a fifth of schedule()'s and fire_next()'s instructions (docs/performance.md §12).
  mutable std::vector<std::uint8_t> slot_priorities_;
  // Events of the next kPeriodBuckets - 1 periods, in bucket `period % kPeriodBuckets`, in
  // sequence order; spread over the slots when their period begins.
  mutable std::vector<std::vector<TimedEntry>> buckets_;
  mutable std::vector<Cycle> bucket_min_;  // earliest cycle in each bucket; kNever when empty
  // Storage of emptied buckets, reused by the next buckets to fill: memory follows the buckets
  // in use, not every bucket's largest size.
  static constexpr std::size_t kSpareBuckets = 4;
  std::vector<std::vector<TimedEntry>> spare_buckets_;
  mutable SlotBitmap busy_buckets_;
  // Events of later periods: a min-heap on (when, seq_prio).
  mutable std::vector<TimedEntry> far_;
  // Cancelled entries still stored somewhere above; while 0, nothing needs a liveness check.
  mutable std::size_t cancelled_stored_ = 0;
};

// The per-event operations are defined here so that the queue's own code inlines them.

inline std::uint64_t PendingSeqs::issued() const { return next_; }

inline Cycle CalendarQueue::now() const { return now_; }
inline bool CalendarQueue::empty() const { return size() == 0; }
inline std::size_t CalendarQueue::size() const { return issued_ - fired_ - cancelled_; }
inline std::uint64_t CalendarQueue::fired() const { return fired_; }

inline const CalendarQueue::Entry& CalendarQueue::front(Fifo fifo) const {
  return nodes_[nodes_[fifo.tail].next].entry;
}

inline CalendarQueue::Entry CalendarQueue::pop_front(Fifo& fifo) const {
  Node& tail = nodes_[fifo.tail];
  const std::uint32_t n = tail.next;
  Node& node = nodes_[n];
  if (n == fifo.tail) {
    fifo.tail = kNil;
  } else {
    tail.next = node.next;
    // The FIFO's next front, read by the next pop of this cycle, was written when it was
    // scheduled, long ago, and so was the one after it: each pop reads the next front (fetched
    // by the pop before), and starts fetching the front after it and the next front's target,
    // whose vtable the next fire would otherwise stall on (the targets, SMs' engines taking
    // turns, are rarely in the host's cache).
    const Node& next = nodes_[node.next];
    __builtin_prefetch(&nodes_[next.next]);
    __builtin_prefetch(next.entry.target);
  }
  node.next = free_nodes_;
  free_nodes_ = n;
  return node.entry;
}

inline bool CalendarQueue::fire_next(Cycle limit) {
  // The common case: the current cycle has another event.
  const std::size_t slot = now_ & mask_;
  std::uint8_t& priorities = slot_priorities_[slot];
  if (priorities == 0 || now_ > limit || cancelled_stored_ != 0 || tracking_) [[unlikely]]
    return fire_next_slow(limit);
  const auto p = static_cast<unsigned>(std::countr_zero(priorities));
  Fifo& fifo = slots_[slot].events[p];
  const Entry e = pop_front(fifo);
  // Without a branch on whether the FIFO emptied: it is a coin toss on the simulator's mix.
  priorities &= static_cast<std::uint8_t>(~(unsigned{fifo.empty()} << p));
  ++fired_;
  e.target->on_event(now_, e.payload);
  return true;
}

inline std::uint64_t PendingSeqs::add() {
  const std::uint64_t seq = next_++;
  if (seq % (std::uint64_t{1} << kChunkShift) == 0) open_chunk(seq >> kChunkShift);
  (*tail_->bits)[word(seq)] |= bit(seq);
  ++tail_->count;
  return seq;
}

inline bool PendingSeqs::contains(std::uint64_t seq) const {
  const std::uint64_t chunk = seq >> kChunkShift;
  if (seq >= next_ || chunk < first_) return false;
  const RingSlot& slot = ring_[chunk & (ring_.size() - 1)];
  return slot.bits != nullptr && ((*slot.bits)[word(seq)] & bit(seq)) != 0;
}

inline bool PendingSeqs::erase(std::uint64_t seq) {
  const std::uint64_t chunk = seq >> kChunkShift;
  if (seq >= next_ || chunk < first_) return false;
  RingSlot& slot = ring_[chunk & (ring_.size() - 1)];
  if (slot.bits == nullptr || ((*slot.bits)[word(seq)] & bit(seq)) == 0) return false;
  (*slot.bits)[word(seq)] &= ~bit(seq);
  if (--slot.count == 0 && chunk != last_) release(chunk);
  return true;
}

inline void SlotBitmap::set(std::size_t slot) {
  words_[slot / 64] |= std::uint64_t{1} << (slot % 64);
  summary_[slot / 4096] |= std::uint64_t{1} << (slot / 64 % 64);
}

inline void SlotBitmap::reset_if(std::size_t slot, bool condition) {
  std::uint64_t& w = words_[slot / 64];
  w &= ~(std::uint64_t{condition} << (slot % 64));
  if (w == 0) summary_[slot / 4096] &= ~(std::uint64_t{1} << (slot / 64 % 64));
}

inline void SlotBitmap::reset(std::size_t slot) { reset_if(slot, true); }

inline std::size_t SlotBitmap::find_from(std::size_t from) const {
  if (from >= slots_) return slots_;
  const std::uint64_t bits = words_[from / 64] & (~std::uint64_t{0} << (from % 64));
  if (bits != 0) return from / 64 * 64 + static_cast<std::size_t>(std::countr_zero(bits));
  return find_after_word(from / 64);
}

}  // namespace simfa::kernel
