// The shared stall-and-wakeup mechanism of the SM core: the paper's Asynchronous Event Queue
// (section IV-B). Every condition a WarpGroup can block on -- a stage's full or empty phase, a
// named barrier's generation, its own WGMMA groups, a free tensor-core buffer slot -- owns one
// WaitList. Whoever changes the condition calls wake_if(); nothing polls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace simfa::sm_warpgroup {

class WaitList {
 public:
  struct Waiter {
    std::uint32_t slot;  ///< the blocked WarpGroup's slot on its SM
    std::uint64_t key;   ///< the value its condition needs (a phase, a group count, ...)
  };

  void add(std::uint32_t slot, std::uint64_t key) { waiters_.push_back({slot, key}); }

  /// Removes every waiter for which `satisfied(waiter)` holds and passes it to `wake`, in the
  /// order they blocked. `wake` must not touch this list. The storage is kept, so once a list
  /// has held its largest crowd, blocking and waking allocate nothing.
  template <typename Satisfied, typename Wake>
  void wake_if(Satisfied&& satisfied, Wake&& wake) {
    std::size_t kept = 0;
    for (std::size_t i = 0; i < waiters_.size(); ++i) {
      if (satisfied(waiters_[i]))
        wake(waiters_[i]);
      else
        waiters_[kept++] = waiters_[i];
    }
    waiters_.resize(kept);
  }

  void clear() { waiters_.clear(); }

 private:
  std::vector<Waiter> waiters_;
};

}  // namespace simfa::sm_warpgroup
