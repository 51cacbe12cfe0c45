#include "kernel/event_queue.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>
#include <vector>

#include "simfa/error.h"

namespace simfa::kernel {

namespace {

// Sequence numbers get 62 bits next to the priority; 2^62 events is centuries of simulation.
static_assert(kPriorityCount <= 4, "Entry::seq_prio keeps the priority in 2 bits");
constexpr unsigned kPriorityBits = 2;

constexpr std::uint64_t seq_of(std::uint64_t seq_prio) { return seq_prio >> kPriorityBits; }
constexpr unsigned priority_of(std::uint64_t seq_prio) {
  return static_cast<unsigned>(seq_prio & ((1U << kPriorityBits) - 1));
}

[[noreturn]] void throw_bad_schedule(Cycle when, unsigned priority, Cycle now) {
  throw Error("event queue: cannot schedule at cycle " +
              (when == kNever ? std::string("kNever") : std::to_string(when)) + " with priority " +
              std::to_string(priority) + " (now is cycle " + std::to_string(now) +
              ", priorities are 0.." + std::to_string(kPriorityCount - 1) + ")");
}

}  // namespace

// --- PendingSeqs ---------------------------------------------------------------------------------

PendingSeqs::PendingSeqs() : ring_(1) {}

std::size_t PendingSeqs::chunks_allocated() const { return owned_.size(); }

void PendingSeqs::open_chunk(std::uint64_t chunk) {
  if (chunk - first_ + 1 > ring_.size()) {
    std::vector<RingSlot> grown(ring_.size() * 2);
    for (std::uint64_t k = first_; k <= last_; ++k) {
      grown[k & (grown.size() - 1)] = ring_[k & (ring_.size() - 1)];
    }
    ring_.swap(grown);
  }
  Chunk* bits;
  if (spare_.empty()) {
    owned_.push_back(std::make_unique<Chunk>());
    bits = owned_.back().get();
  } else {
    bits = spare_.back();
    spare_.pop_back();
  }
  bits->fill(0);
  tail_ = &ring_[chunk & (ring_.size() - 1)];
  *tail_ = RingSlot{bits, 0};
  const std::uint64_t previous = last_;
  last_ = chunk;
  // The previous chunk was not released when it emptied because it was still being filled.
  if (chunk != 0 && ring_[previous & (ring_.size() - 1)].count == 0) release(previous);
}

void PendingSeqs::release(std::uint64_t chunk) {
  const std::size_t mask = ring_.size() - 1;
  spare_.push_back(ring_[chunk & mask].bits);
  ring_[chunk & mask].bits = nullptr;
  while (first_ < last_ && ring_[first_ & mask].bits == nullptr) ++first_;
}

// --- SlotBitmap ----------------------------------------------------------------------------------

SlotBitmap::SlotBitmap(std::size_t slots)
    : slots_(slots), words_((slots + 63) / 64, 0), summary_((words_.size() + 63) / 64, 0) {}

std::size_t SlotBitmap::find_after_word(std::size_t word) const {
  const std::size_t next = word + 1;
  std::size_t s = next / 64;
  if (s >= summary_.size()) return slots_;
  std::uint64_t bits = summary_[s] & (~std::uint64_t{0} << (next % 64));
  while (bits == 0) {
    if (++s == summary_.size()) return slots_;
    bits = summary_[s];
  }
  const std::size_t w = s * 64 + static_cast<std::size_t>(std::countr_zero(bits));
  return w * 64 + static_cast<std::size_t>(std::countr_zero(words_[w]));
}

// --- CalendarQueue -------------------------------------------------------------------------------

std::size_t CalendarQueue::find_slot(std::size_t from) const {
  // Eight slots a load: a period of 4096 cycles is 512 words, so an idle stretch costs a load per
  // eight cycles of the period it ends in at most, and a busy cycle's search usually stops in the
  // word it starts in.
  static_assert(std::endian::native == std::endian::little, "find_slot() reads bytes as words");
  const std::uint8_t* bytes = slot_priorities_.data();
  const std::size_t end = slot_priorities_.size();
  std::size_t word = from / 8 * 8;
  if (word >= end) return mask_ + 1;
  std::uint64_t bits;
  std::memcpy(&bits, bytes + word, 8);
  bits &= ~std::uint64_t{0} << (8 * (from % 8));
  while (bits == 0) {
    word += 8;
    if (word >= end) return mask_ + 1;
    std::memcpy(&bits, bytes + word, 8);
  }
  return word + static_cast<std::size_t>(std::countr_zero(bits)) / 8;
}

CalendarQueue::CalendarQueue(std::size_t wheel_cycles)
    : period_shift_(static_cast<unsigned>(std::countr_zero(wheel_cycles))),
      mask_(wheel_cycles - 1),
      period_end_(wheel_cycles),
      slots_(wheel_cycles),
      // Whole 8-byte words, for find_slot(); the bytes past the wheel stay 0.
      slot_priorities_((wheel_cycles + 7) / 8 * 8, 0),
      buckets_(kPeriodBuckets),
      bucket_min_(kPeriodBuckets, kNever),
      busy_buckets_(kPeriodBuckets) {
  if (!std::has_single_bit(wheel_cycles)) {
    throw Error("event queue: wheel_cycles must be a power of two, got " +
                std::to_string(wheel_cycles));
  }
}


std::uint32_t CalendarQueue::take_node() {
  const std::uint32_t n = free_nodes_;
  if (n != kNil) {
    free_nodes_ = nodes_[n].next;
    return n;
  }
  if (nodes_.size() == kNil) throw Error("event queue: more than 2^32 - 1 events in one period");
  nodes_.emplace_back();
  return static_cast<std::uint32_t>(nodes_.size() - 1);
}

inline void CalendarQueue::add_to_slot(std::size_t slot, const Entry& e, std::uint32_t node) {
  const unsigned p = priority_of(e.seq_prio);
  Fifo& fifo = slots_[slot].events[p];
  // The node whose `next` becomes the new node: the tail, or the new node itself (a FIFO of one).
  const std::uint32_t prev = fifo.empty() ? node : fifo.tail;
  nodes_[node] = Node{e, nodes_[prev].next};
  nodes_[prev].next = node;
  fifo.tail = node;
  slot_priorities_[slot] |= static_cast<std::uint8_t>(1U << p);
}

void CalendarQueue::place(Cycle when, const Entry& e) {
  if (when < period_end_) {
    add_to_slot(when & mask_, e, take_node());
  } else {
    place_after_period(when, e);
  }
}

void CalendarQueue::place_after_period(Cycle when, const Entry& e) {
  const Cycle period = when >> period_shift_;
  if (period - (now_ >> period_shift_) < kPeriodBuckets) {
    const std::size_t bucket = period % kPeriodBuckets;
    std::vector<TimedEntry>& v = buckets_[bucket];
    if (v.empty()) {
      busy_buckets_.set(bucket);
      if (v.capacity() == 0 && !spare_buckets_.empty()) {
        v.swap(spare_buckets_.back());
        spare_buckets_.pop_back();
      }
    }
    v.push_back(TimedEntry{when, e});
    bucket_min_[bucket] = std::min(bucket_min_[bucket], when);
  } else {
    far_.push_back(TimedEntry{when, e});
    std::push_heap(far_.begin(), far_.end(), FiresAfter{});
  }
}

EventId CalendarQueue::schedule(Cycle when, EventTarget& target, std::uint64_t payload,
                                Priority priority) {
  const auto p = static_cast<unsigned>(priority);
  const std::uint32_t node = free_nodes_;
  // The common case, handled here: a slot of this period (one unsigned comparison also sends
  // `when` < now_ and kNever to schedule_any(), which throws), a pooled node and no pending set
  // to keep. A fast path with few live values saves the register spills of a general one: 30%
  // of this function's instructions (docs/performance.md §12).
  if (when - now_ >= period_end_ - now_ || node == kNil || p >= kPriorityCount || tracking_)
    [[unlikely]]
    return schedule_any(when, target, payload, p);
  free_nodes_ = nodes_[node].next;
  const std::uint64_t seq = issued_++;
  add_to_slot(when & mask_, Entry{&target, payload, seq << kPriorityBits | p}, node);
  return EventId{seq};
}

EventId CalendarQueue::schedule_any(Cycle when, EventTarget& target, std::uint64_t payload,
                                    unsigned priority) {
  if (when < now_ || when == kNever || priority >= kPriorityCount)
    throw_bad_schedule(when, priority, now_);
  const std::uint64_t seq = next_seq();
  place(when, Entry{&target, payload, seq << kPriorityBits | priority});
  return EventId{seq};
}

bool CalendarQueue::cancel(EventId id) {
  // The entry stays where it is and is skipped when reached; finding it now would need an index
  // updated on every schedule.
  if (!tracking_) start_tracking();
  if (!pending_.erase(id.seq)) return false;
  ++cancelled_;
  ++cancelled_stored_;
  return true;
}

void CalendarQueue::start_tracking() {
  // Nothing was cancelled yet, so the stored entries are exactly the pending events.
  std::vector<std::uint64_t> stored;
  for (const Slot& slot : slots_) {
    for (const Fifo& fifo : slot.events) {
      if (fifo.empty()) continue;
      for (std::uint32_t n = nodes_[fifo.tail].next;; n = nodes_[n].next) {
        stored.push_back(seq_of(nodes_[n].entry.seq_prio));
        if (n == fifo.tail) break;
      }
    }
  }
  for (const auto& bucket : buckets_)
    for (const TimedEntry& t : bucket) stored.push_back(seq_of(t.entry.seq_prio));
  for (const TimedEntry& t : far_) stored.push_back(seq_of(t.entry.seq_prio));
  std::sort(stored.begin(), stored.end());
  // PendingSeqs issues its numbers in order: replay them, unmarking those that fired.
  std::size_t k = 0;
  for (std::uint64_t seq = 0; seq < issued_; ++seq) {
    pending_.add();
    if (k < stored.size() && stored[k] == seq)
      ++k;
    else
      pending_.erase(seq);
  }
  tracking_ = true;
}

bool CalendarQueue::drop_cancelled_in_slot(std::size_t index) const {
  std::uint8_t& priorities = slot_priorities_[index];
  for (unsigned m = priorities; m != 0; m &= m - 1) {
    Fifo& fifo = slots_[index].events[std::countr_zero(m)];
    while (!fifo.empty() && !pending_.contains(seq_of(front(fifo).seq_prio))) {
      pop_front(fifo);
      --cancelled_stored_;
    }
    if (fifo.empty()) priorities &= static_cast<std::uint8_t>(~(1U << std::countr_zero(m)));
  }
  return priorities != 0;
}

bool CalendarQueue::drop_cancelled_in_bucket(std::size_t bucket) const {
  std::vector<TimedEntry>& v = buckets_[bucket];
  cancelled_stored_ -= std::erase_if(
      v, [this](const TimedEntry& t) { return !pending_.contains(seq_of(t.entry.seq_prio)); });
  Cycle earliest = kNever;
  for (const TimedEntry& t : v) earliest = std::min(earliest, t.when);
  bucket_min_[bucket] = earliest;
  if (!v.empty()) return true;
  busy_buckets_.reset(bucket);
  return false;
}

template <bool kDropCancelled>
Cycle CalendarQueue::settle() const {
  // Slots hold only cycles from now_ on within its period: no wrap-around.
  for (std::size_t slot = find_slot(now_ & mask_); slot <= mask_; slot = find_slot(slot + 1)) {
    if (!kDropCancelled || drop_cancelled_in_slot(slot)) return (now_ & ~Cycle{mask_}) | slot;
  }
  // Buckets hold the periods after now_'s, and now_'s own bucket is empty, so one circular scan
  // from the next period visits them in order.
  const std::size_t next = ((now_ >> period_shift_) + 1) % kPeriodBuckets;
  for (std::size_t b = busy_buckets_.find_from(next); b < kPeriodBuckets;
       b = busy_buckets_.find_from(b + 1)) {
    if (!kDropCancelled || drop_cancelled_in_bucket(b)) return bucket_min_[b];
  }
  for (std::size_t b = busy_buckets_.find_from(0); b < next; b = busy_buckets_.find_from(b + 1)) {
    if (!kDropCancelled || drop_cancelled_in_bucket(b)) return bucket_min_[b];
  }
  if constexpr (kDropCancelled) {
    while (!far_.empty() && !pending_.contains(seq_of(far_.front().entry.seq_prio))) {
      std::pop_heap(far_.begin(), far_.end(), FiresAfter{});
      far_.pop_back();
      --cancelled_stored_;
    }
  }
  return far_.empty() ? kNever : far_.front().when;
}

void CalendarQueue::enter_period(Cycle t) {
  // The slots are empty (t is the earliest event). The new period's bucket spreads over them,
  // then the heap hands down what is now within kPeriodBuckets periods. Entries keep their
  // sequence order per cycle: the level an event is placed at depends only on its distance from
  // now_, so everything that comes down for a cycle was scheduled before anything placed there
  // directly.
  now_ = t;
  const Cycle period = t >> period_shift_;
  period_end_ = (period + 1) << period_shift_;
  if (period_end_ == 0) period_end_ = kNever;  // the last period ends with time itself
  std::vector<TimedEntry>& bucket = buckets_[period % kPeriodBuckets];
  if (!bucket.empty()) {
    for (const TimedEntry& e : bucket) place(e.when, e.entry);
    bucket.clear();
    // Its storage goes to the spares, or back to the allocator: a bucket kept its capacity once,
    // and the 1024 of them, each as large as the most it ever held, made most of FA3 70B
    // s4096's peak memory (52 of 96 MiB, docs/performance.md).
    if (spare_buckets_.size() < kSpareBuckets) spare_buckets_.push_back(std::move(bucket));
    bucket = std::vector<TimedEntry>();
    bucket_min_[period % kPeriodBuckets] = kNever;
    busy_buckets_.reset(period % kPeriodBuckets);
  }
  while (!far_.empty() && (far_.front().when >> period_shift_) - period < kPeriodBuckets) {
    std::pop_heap(far_.begin(), far_.end(), FiresAfter{});
    place(far_.back().when, far_.back().entry);
    far_.pop_back();
  }
}

Cycle CalendarQueue::next_cycle() const {
  return cancelled_stored_ == 0 ? settle<false>() : settle<true>();
}

bool CalendarQueue::fire_next_slow(Cycle limit) {
  // Usually the next event is in a slot of the current period, a few slots on, and nothing is
  // cancelled: a word or two of slot_priorities_ find it.
  std::size_t slot = cancelled_stored_ == 0 ? find_slot(now_ & mask_) : mask_ + 1;
  if (slot <= mask_) {
    const Cycle t = (now_ & ~Cycle{mask_}) | slot;
    if (t > limit) return false;
    now_ = t;
  } else {
    const Cycle t = next_cycle();
    if (t == kNever || t > limit) return false;
    if (t >= period_end_) {
      enter_period(t);
    } else {
      now_ = t;
    }
    slot = t & mask_;
  }
  // The slot holds a pending event; cancelled entries may still precede it in a FIFO of lower
  // priority.
  Entry e;
  for (;;) {
    std::uint8_t& priorities = slot_priorities_[slot];
    const auto p = static_cast<unsigned>(std::countr_zero(priorities));
    Fifo& fifo = slots_[slot].events[p];
    e = pop_front(fifo);
    // Without a branch on whether the FIFO emptied: it is a coin toss on the simulator's mix.
    priorities &= static_cast<std::uint8_t>(~(unsigned{fifo.empty()} << p));
    if (!tracking_ || pending_.erase(seq_of(e.seq_prio))) break;
    --cancelled_stored_;
  }
  ++fired_;
  e.target->on_event(now_, e.payload);
  return true;
}

}  // namespace simfa::kernel
