// The limits of cuTensorMapEncodeTiled (CUDA driver API) for non-interleaved TensorMaps, checked
// in one place for every frontend whose user declares TensorMaps (the trace's `tensormap`
// statements, ttgir's descriptor arguments). Header-only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "simfa/tensor_map.h"

namespace simfa {

/// The first limit a TensorMap breaks: the part, its dimension (0 innermost) and the problem.
struct TensorMapFault {
  enum class Part : std::uint8_t { kBase, kShape, kStride, kBox };
  Part part;
  std::uint32_t dim = 0;  ///< kShape, kStride, kBox: the dimension
  std::string message;    ///< "box entries must be in 1..256, not 300"
};

/// What cuTensorMapEncodeTiled refuses in `map` (rank 1..kMaxTensorRank), in the order a
/// declaration lists it, or none: a base that is not a multiple of 16 bytes; a dimension of
/// 0 or more than 2^32 elements; an innermost stride other than the element (rows are read
/// contiguously); an outer stride that is not a multiple of 16 bytes below 2^40; a box
/// dimension of 0 or more than 256 elements, or an inner one that is not a multiple of 16
/// bytes.
inline std::optional<TensorMapFault> tensor_map_fault(const TensorMap& map) {
  using Part = TensorMapFault::Part;
  constexpr std::uint64_t kMaxDim = std::uint64_t{1} << 32;
  constexpr std::uint64_t kMaxStride = std::uint64_t{1} << 40;
  constexpr std::uint32_t kMaxBox = 256;
  if (map.base % 16 != 0)
    return TensorMapFault{Part::kBase, 0,
                          "base must be a multiple of 16 bytes, not " + std::to_string(map.base)};
  for (std::uint32_t d = 0; d < map.rank; ++d)
    if (map.shape[d] < 1 || map.shape[d] > kMaxDim)
      return TensorMapFault{
          Part::kShape, d, "shape entries must be in 1..2^32, not " + std::to_string(map.shape[d])};
  if (map.stride[0] != map.elem_bytes)
    return TensorMapFault{Part::kStride, 0,
                          "the innermost dimension's stride is " + std::to_string(map.stride[0]) +
                              " bytes; TMA reads rows contiguously (" +
                              std::to_string(map.elem_bytes) + " bytes, one element)"};
  for (std::uint32_t d = 1; d < map.rank; ++d)
    if (map.stride[d] < 16 || map.stride[d] >= kMaxStride || map.stride[d] % 16 != 0)
      return TensorMapFault{Part::kStride, d,
                            "a stride must be a multiple of 16 bytes below 2^40, not " +
                                std::to_string(map.stride[d])};
  for (std::uint32_t d = 0; d < map.rank; ++d)
    if (map.box[d] < 1 || map.box[d] > kMaxBox)
      return TensorMapFault{Part::kBox, d,
                            "box entries must be in 1..256, not " + std::to_string(map.box[d])};
  const std::uint64_t inner = std::uint64_t{map.box[0]} * map.elem_bytes;
  if (inner % 16 != 0)
    return TensorMapFault{Part::kBox, 0,
                          "the box's inner dimension is " + std::to_string(inner) +
                              " bytes; it must be a multiple of 16"};
  return std::nullopt;
}

}  // namespace simfa
