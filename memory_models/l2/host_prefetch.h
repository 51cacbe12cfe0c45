// prefetch_object: starts fetching every host cache line an object of the memory hierarchy's
// pools occupies. The pools' entries are packed, not aligned (the L2's 48-byte pending requests,
// the coalescer's 40-byte entries), so half of them straddle two 64-byte lines, and a prefetch of
// the first byte alone leaves the fields past the boundary to miss when they are read
// (docs/performance.md §14).
#pragma once

namespace simfa::memory_models {

template <typename T>
inline void prefetch_object(const T* object) {
  static_assert(sizeof(T) <= 64, "an object of at most one host cache line spans at most two");
  __builtin_prefetch(object);
  __builtin_prefetch(reinterpret_cast<const char*>(object) + sizeof(T) - 1);
}

}  // namespace simfa::memory_models
