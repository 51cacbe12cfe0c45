// Values in flight addressed by a small index (an event payload, a list link). Freed slots are
// reused, most recently freed first, so once the pool has grown to the most ever in flight
// nothing more is allocated. Header-only, for plugins' own use: it never crosses a plugin
// boundary.
#pragma once

#include <cstdint>
#include <vector>

namespace simfa {

template <typename T>
class SlotPool {
 public:
  /// Stores `value` in a free slot and returns the slot.
  std::uint32_t add(const T& value) {
    if (free_.empty()) {
      values_.push_back(value);
      return static_cast<std::uint32_t>(values_.size() - 1);
    }
    const std::uint32_t slot = free_.back();
    free_.pop_back();
    values_[slot] = value;
    return slot;
  }
  void release(std::uint32_t slot) { free_.push_back(slot); }
  T& operator[](std::uint32_t slot) { return values_[slot]; }
  const T& operator[](std::uint32_t slot) const { return values_[slot]; }

 private:
  std::vector<T> values_;
  std::vector<std::uint32_t> free_;
};

}  // namespace simfa
