// LineTable: which slot holds a line, for the in-flight lookups of the memory hierarchy (the L2's
// MSHR files, the coalescer's merge windows). Open addressing with linear probing and
// backward-shift deletion (no tombstones to accumulate); it doubles when half full, so once a
// run has reached its peak occupancy no lookup, insertion or erasure allocates.
#pragma once

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

}  // namespace simfa::memory_models
