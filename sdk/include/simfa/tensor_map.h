// TensorMap descriptors and real global-address generation (DESIGN.md §4; the paper's
// section V-C). Dimension 0 is the innermost (contiguous) one, as in cuTensorMapEncodeTiled.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

#include "simfa/int_math.h"
#include "simfa/types.h"

namespace simfa {

inline constexpr int kMaxTensorRank = 5;

/// Where a frontend puts the tensors a workload gives no base address: the first at
/// kFirstTensorBase, each next one at the following multiple of kTensorAlignment, as consecutive
/// cudaMalloc calls place them (2 MiB: the CUDA driver's allocation granularity for device
/// memory).
inline constexpr Addr kFirstTensorBase = 0x7f0000000000;
inline constexpr Addr kTensorAlignment = Addr{2} << 20;

/// The base of the tensor allocated after one of `bytes` bytes at `base`.
constexpr Addr next_tensor_base(Addr base, std::uint64_t bytes) {
  return round_up(base + bytes, kTensorAlignment);
}

struct TensorMap {
  std::string name;
  Addr base = 0;
  std::uint32_t elem_bytes = 2;
  std::uint32_t rank = 2;
  std::array<std::uint64_t, kMaxTensorRank> shape{};   ///< elements per dimension
  std::array<std::uint64_t, kMaxTensorRank> stride{};  ///< bytes between consecutive indices
  std::array<std::uint32_t, kMaxTensorRank> box{};     ///< box elements per dimension

  /// Bytes the box delivers to shared memory (out-of-bounds elements are zero-filled, so they
  /// count towards the mbarrier's transaction bytes).
  std::uint64_t box_bytes() const {
    std::uint64_t n = elem_bytes;
    for (std::uint32_t d = 0; d < rank; ++d) n *= box[d];
    return n;
  }

  /// Calls `segment(addr, bytes)` for each contiguous run of in-bounds bytes of the box whose
  /// origin is `coords` (element indices, may be negative or past the edge: those elements are
  /// not fetched, as on hardware). Runs are visited in row order, dimension 1 fastest.
  template <typename F>
  void for_each_row(const std::int32_t* coords, F&& segment) const {
    std::int64_t lo0 = std::max<std::int64_t>(coords[0], 0);
    std::int64_t hi0 = std::min<std::int64_t>(std::int64_t{coords[0]} + box[0],
                                              static_cast<std::int64_t>(shape[0]));
    if (hi0 <= lo0) return;
    const std::uint64_t row_bytes = static_cast<std::uint64_t>(hi0 - lo0) * elem_bytes;
    std::array<std::uint32_t, kMaxTensorRank> i{};  // index within the box, dims 1..rank-1
    for (;;) {
      bool inside = true;
      Addr addr = base + static_cast<Addr>(lo0) * elem_bytes;
      for (std::uint32_t d = 1; d < rank; ++d) {
        std::int64_t c = std::int64_t{coords[d]} + i[d];
        if (c < 0 || c >= static_cast<std::int64_t>(shape[d])) inside = false;
        addr += static_cast<Addr>(c) * stride[d];
      }
      if (inside) segment(addr, row_bytes);
      std::uint32_t d = 1;
      for (; d < rank; ++d) {
        if (++i[d] < box[d]) break;
        i[d] = 0;
      }
      if (d >= rank) return;
    }
  }

  /// Rows of the box (runs along dimension 0, one per index of dimensions 1..rank-1) that hold no
  /// element inside the tensor: the rows for_each_row does not visit.
  std::uint64_t rows_outside(const std::int32_t* coords) const {
    auto overlap = [&](std::uint32_t d) -> std::uint64_t {
      const std::int64_t lo = std::max<std::int64_t>(coords[d], 0);
      const std::int64_t hi = std::min<std::int64_t>(std::int64_t{coords[d]} + box[d],
                                                     static_cast<std::int64_t>(shape[d]));
      return hi > lo ? static_cast<std::uint64_t>(hi - lo) : 0;
    };
    std::uint64_t rows = 1, inside = overlap(0) > 0 ? 1 : 0;
    for (std::uint32_t d = 1; d < rank; ++d) {
      rows *= box[d];
      inside *= overlap(d);
    }
    return rows - inside;
  }

  /// Bytes of the box that lie inside the tensor (what global memory actually serves).
  std::uint64_t bytes_in_bounds(const std::int32_t* coords) const {
    std::uint64_t total = 0;
    for_each_row(coords, [&](Addr, std::uint64_t bytes) { total += bytes; });
    return total;
  }
};

}  // namespace simfa
