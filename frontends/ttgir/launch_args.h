// A kernel launch as the workload spec gives it: the grid (`grid = "XxYxZ"`) and the kernel
// arguments (`args = "M=4096;N=4096;K=512;a_desc.shape=4096x512;..."`), checked against the
// kernel's signature, and the TensorMaps rebuilt from each tensor descriptor's base, shape,
// strides and block (the paper's section V-C), so that CTAs loading one tile load one address.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "cta_lowering.h"
#include "simfa/params.h"
#include "simfa/tensor_map.h"
#include "ttgir_kernel.h"

namespace simfa::ttgir {

/// "128", "32x8" or "4x32x1" -> {x, y, z}; false with `why` set when malformed.
bool parse_grid(const std::string& text, std::array<std::uint64_t, 3>& grid, std::string& why);

struct Launch {
  LaunchConfig config;
  std::vector<TensorMap> maps;  ///< one per descriptor argument, same ids
};

/// Reads `args` (key `args_key` of `params`, for error locations) against `kernel`'s arguments.
/// Every descriptor a TMA op uses needs NAME.shape; NAME.strides (elements, outermost first)
/// default to the contiguous row-major ones, NAME.base to the placement above.
Launch read_launch(const KernelProgram& kernel, const Params& params, const char* args_key,
                   const std::array<std::uint64_t, 3>& grid);

}  // namespace simfa::ttgir
