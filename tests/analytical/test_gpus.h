// GPUs for the analytical tests.
#pragma once

#include "analytical/gpu.h"

namespace simfa::analytical::testing {

/// H800 SXM as the paper configures it: 132 SMs, 1830 MHz, 50 MiB of L2 in two partitions
/// (section IV-C), 3.35 TB/s HBM3, 4096 dense FP16 FLOPs per cycle per SM (989 TFLOPS / 132 SMs
/// / 1.83 GHz). The L2 bandwidth is left unknown.
inline AnalyticalGpu h800() {
  AnalyticalGpu gpu;
  gpu.sm_count = 132;
  gpu.clock_mhz = 1830;
  gpu.l2_bytes = 50.0 * 1024 * 1024;
  gpu.l2_partitions = 2;
  gpu.dram_bandwidth = 3.35e12;
  gpu.l2_bandwidth = 0;
  gpu.mma_flops_per_cycle_per_sm = 4096;
  return gpu;
}

/// A toy GPU small enough to work examples by hand.
inline AnalyticalGpu toy(int sm_count, double effective_llc_bytes) {
  AnalyticalGpu gpu;
  gpu.sm_count = sm_count;
  gpu.clock_mhz = 1000;
  gpu.l2_bytes = 2 * effective_llc_bytes;
  gpu.l2_partitions = 2;
  gpu.dram_bandwidth = 1e12;
  gpu.l2_bandwidth = 2e12;
  gpu.mma_flops_per_cycle_per_sm = 1000;
  return gpu;
}

}  // namespace simfa::analytical::testing
