// A FIFO on a power-of-two ring buffer that grows by doubling and never shrinks, so steady-state
// push/pop allocate nothing (std::deque allocates and frees a node every few hundred elements).
// Header-only, for plugins' own use: it never crosses a plugin boundary.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace simfa {

template <typename T>
class RingQueue {
 public:
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  T& front() { return items_[head_]; }
  const T& front() const { return items_[head_]; }
  T& back() { return items_[(head_ + size_ - 1) & (items_.size() - 1)]; }
  /// The `i`th from the front (i < size()).
  T& at(std::size_t i) { return items_[(head_ + i) & (items_.size() - 1)]; }
  const T& at(std::size_t i) const { return items_[(head_ + i) & (items_.size() - 1)]; }

  void push(T value) {
    if (size_ == items_.size()) [[unlikely]]
      return grow_and_push(std::move(value));
    items_[(head_ + size_) & (items_.size() - 1)] = std::move(value);
    ++size_;
  }
  void pop() {
    head_ = (head_ + 1) & (items_.size() - 1);
    --size_;
  }

 private:
  // Out of line: inlined, the growth made every push copy its value to registers and save and
  // restore them (a fifth of memory.ideal's send, docs/performance.md §12).
  [[gnu::noinline]] void grow_and_push(T value) {
    grow();
    items_[(head_ + size_) & (items_.size() - 1)] = std::move(value);
    ++size_;
  }
  void grow() {
    std::vector<T> bigger(items_.empty() ? 16 : items_.size() * 2);
    for (std::size_t i = 0; i < size_; ++i)
      bigger[i] = std::move(items_[(head_ + i) & (items_.size() - 1)]);
    items_ = std::move(bigger);
    head_ = 0;
  }

  std::vector<T> items_;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace simfa
