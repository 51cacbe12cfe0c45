// Which entry holds a line, for the in-flight lookups of the memory hierarchy (the L2's MSHR
// files, the coalescer's merge windows, the DRAM channels' open-row lists).
//
// LineTable: open addressing with linear probing and backward-shift deletion (no tombstones to
// accumulate); it doubles when half full, so once a run has reached its peak occupancy no lookup,
// insertion or erasure allocates.
//
// LineChains: for entries that live in the caller's pool and carry their own line and a link:
// an array of 4-byte bucket heads, chained through the entries. Thousands of such tables are hot
// at once (one per SM group, per L2 slice, per DRAM channel); at 4 bytes a bucket they stay in
// the host's caches, and an entry is read only when its bucket holds one, where a table of
// (line, value) slots costs a cache miss on nearly every lookup.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace simfa::memory_models {

class LineTable {
 public:
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};

  /// Room for `expected` entries before the first growth.
  explicit LineTable(std::size_t expected = 8) { rebuild(std::bit_ceil(expected * 2 < 8 ? 8 : expected * 2)); }

  /// The value stored for `line`, or kNone.
  std::uint32_t find(std::uint64_t line) const {
    for (std::size_t i = home(line);; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.value == kNone) return kNone;
      if (s.line == line) return s.value;
    }
  }

  /// Stores `value` (not kNone) for `line`, which must be absent.
  void insert(std::uint64_t line, std::uint32_t value) {
    if ((size_ + 1) * 2 > slots_.size()) grow();
    place(line, value);
    ++size_;
  }

  /// Removes `line`, which must be present.
  void erase(std::uint64_t line) {
    std::size_t hole = home(line);
    while (slots_[hole].line != line || slots_[hole].value == kNone) hole = (hole + 1) & mask_;
    // Shift back each later entry of the probe run whose home is not in (hole, j]: it was pushed
    // past the hole and would become unreachable.
    for (std::size_t j = (hole + 1) & mask_; slots_[j].value != kNone; j = (j + 1) & mask_) {
      if (((j - home(slots_[j].line)) & mask_) >= ((j - hole) & mask_)) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole].value = kNone;
    --size_;
  }

  std::size_t size() const { return size_; }

 private:
  struct Slot {
    std::uint64_t line = 0;
    std::uint32_t value = kNone;  ///< kNone: empty
  };

  // Fibonacci hashing: the top bits of line * 2^64/phi, so consecutive and strided lines spread.
  std::size_t home(std::uint64_t line) const {
    return static_cast<std::size_t>((line * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  void place(std::uint64_t line, std::uint32_t value) {
    std::size_t i = home(line);
    while (slots_[i].value != kNone) i = (i + 1) & mask_;
    slots_[i] = {line, value};
  }
  void rebuild(std::size_t capacity) {
    slots_.assign(capacity, Slot{});
    mask_ = capacity - 1;
    shift_ = 64 - std::countr_zero(capacity);
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    rebuild(old.size() * 2);
    for (const Slot& s : old)
      if (s.value != kNone) place(s.line, s.value);
  }

  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  int shift_ = 64;
  std::size_t size_ = 0;
};

/// Buckets of entry indices chained through the entries. The callers pass `line_of(i)`, the line
/// entry i holds, and `link(i)`, a reference to its 32-bit link, which the chains own while it is
/// indexed. A line is indexed at most once. The bucket count doubles when the entries times
/// `load` outnumber it, so a run's peak occupancy sets the size and then nothing allocates.
class LineChains {
 public:
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};

  /// Room for `expected` entries before the first growth, with `buckets_per_entry` (a power of
  /// two) buckets per entry at most: more make a lookup that finds nothing likelier to read no
  /// entry at all.
  explicit LineChains(std::size_t expected = 8, std::size_t buckets_per_entry = 1)
      : load_shift_(std::countr_zero(buckets_per_entry)) {
    reset(std::bit_ceil(std::max<std::size_t>(expected << load_shift_, 8)));
  }

  /// The entry indexed under `line`, or kNone.
  template <typename LineOf, typename Link>
  std::uint32_t find(std::uint64_t line, LineOf line_of, Link link) const {
    std::uint32_t i = buckets_[home(line)];
    while (i != kNone && line_of(i) != line) i = link(i);
    return i;
  }

  /// Indexes entry `i`, which holds `line`, at the end of its bucket's chain. The callers' entries
  /// mostly leave in the order they came (requests answered in about the order they were sent),
  /// so erase() mostly finds its entry at the chain's head and reads no other entry, where
  /// indexing at the head made it read the entries indexed after it, long since gone from the
  /// host's cache (docs/performance.md §14); the chain insert() walks was mostly just walked by
  /// the find() before it.
  template <typename LineOf, typename Link>
  void insert(std::uint64_t line, std::uint32_t i, LineOf line_of, Link link) {
    if ((size_ + 1) << load_shift_ > buckets_.size()) grow(line_of, link);
    std::uint32_t* at = &buckets_[home(line)];
    while (*at != kNone) at = &link(*at);
    *at = i;
    link(i) = kNone;
    ++size_;
  }

  /// find(line), and where it finds nothing, insert(line, i): one walk of the chain instead of
  /// two. Returns the entry found, or kNone once `i` is indexed.
  template <typename LineOf, typename Link>
  std::uint32_t find_or_insert(std::uint64_t line, std::uint32_t i, LineOf line_of, Link link) {
    std::uint32_t* at = &buckets_[home(line)];
    for (; *at != kNone; at = &link(*at))
      if (line_of(*at) == line) return *at;
    if ((size_ + 1) << load_shift_ > buckets_.size()) [[unlikely]] {
      insert(line, i, line_of, link);
      return kNone;
    }
    *at = i;
    link(i) = kNone;
    ++size_;
    return kNone;
  }

  /// Drops entry `i`, indexed under `line`.
  template <typename Link>
  void erase(std::uint64_t line, std::uint32_t i, Link link) {
    std::uint32_t* at = &buckets_[home(line)];
    while (*at != i) at = &link(*at);
    *at = link(i);
    --size_;
  }

  std::size_t size() const { return size_; }

  /// Starts fetching the bucket of `line` into the host's cache.
  void prefetch(std::uint64_t line) const { __builtin_prefetch(&buckets_[home(line)]); }
  /// The entry heading the bucket of `line` (kNone: an empty bucket), which a lookup of `line`
  /// reads first: for the caller to start fetching it.
  std::uint32_t head(std::uint64_t line) const { return buckets_[home(line)]; }

 private:
  // Fibonacci hashing: the top bits of line * 2^64/phi, so consecutive and strided lines spread.
  std::size_t home(std::uint64_t line) const {
    return static_cast<std::size_t>((line * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  void reset(std::size_t buckets) {
    buckets_.assign(buckets, kNone);
    shift_ = 64 - std::countr_zero(buckets);
  }
  template <typename LineOf, typename Link>
  void grow(LineOf line_of, Link link) {
    std::vector<std::uint32_t> old = std::move(buckets_);
    reset(old.size() * 2);
    for (std::uint32_t head : old) {
      for (std::uint32_t i = head; i != kNone;) {
        const std::uint32_t next = link(i);
        std::uint32_t* at = &buckets_[home(line_of(i))];
        while (*at != kNone) at = &link(*at);  // each chain keeps its order
        *at = i;
        link(i) = kNone;
        i = next;
      }
    }
  }

  std::vector<std::uint32_t> buckets_;
  int shift_ = 64;
  int load_shift_;
  std::size_t size_ = 0;
};

}  // namespace simfa::memory_models
