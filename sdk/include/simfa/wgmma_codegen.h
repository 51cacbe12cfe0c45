// What ptxas does to a WarpGroup's WGMMAs, for the frontends that build a program from a kernel's
// source (a TTGIR, a tile configuration) rather than from its SASS: the program simfa runs must
// be the SASS's. Header-only.
#pragma once

#include <cstdint>
#include <string_view>

namespace simfa {

/// Registers of each thread that the accumulator of one m64nNk WGMMA holds: 64 x N elements of
/// `accumulator_bytes` over the WarpGroup's 128 threads, in 4-byte registers.
constexpr std::uint32_t wgmma_accumulator_registers(std::uint32_t n,
                                                    std::uint32_t accumulator_bytes) {
  return 64 * n * accumulator_bytes / (128 * 4);
}

/// ptxas (CUDA 13, Triton 3.6's sm_90a kernels) serializes the WGMMAs of a WarpGroup whose one
/// instruction's accumulator holds this many registers of a thread or more: "wgmma.mma_async
/// instructions are serialized due to insufficient register resources for the wgmma pipeline"
/// (C7511), and each then waits for the one before it (`WARPGROUP.DEPBAR.LE gsb0, 0x0` after
/// every HGMMA). The SASS of Triton's GEMMs on the H200 (validation/h200/ttgir/gemm_bm*.sass):
/// the 128x256 8-warp kernel's m64n256k16 (128 registers) are serialized; the m64n128k16 (64) of
/// the 128x128 and 64x128 kernels keep a k-tile's WGMMAs in flight (docs/calibration.md §15).
constexpr std::uint32_t kPtxasSerializedWgmmaRegisters = 128;

/// A frontend's `wgmma_serialization` choice: "auto" follows ptxas's rule above, "true" and
/// "false" force it (a kernel built otherwise: CUTLASS's consumers raise their register budget
/// with setmaxnreg and keep m64n256 pipelined).
constexpr bool wgmma_serialized(std::string_view choice, std::uint32_t n,
                                std::uint32_t accumulator_bytes) {
  if (choice == "auto")
    return wgmma_accumulator_registers(n, accumulator_bytes) >= kPtxasSerializedWgmmaRegisters;
  return choice == "true";
}

}  // namespace simfa
