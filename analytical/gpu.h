// The GPU as the analytical model sees it: SM count and clock, the L2 (its size and partitions),
// DRAM and L2 bandwidths, the tensor-core rate and the shared memory that sets how many GEMM CTAs
// an SM holds. Filled from a manifest's [gpu] table
// (keys of the same names; l2_size is l2_bytes) or from sweep parameters.
#pragma once

#include <array>
#include <string_view>

namespace simfa::analytical {

struct AnalyticalGpu {
  int sm_count = 0;
  double clock_mhz = 0;
  double l2_bytes = 0;
  int l2_partitions = 1;
  double dram_bandwidth = 0;              ///< bytes per second
  double l2_bandwidth = 0;                ///< bytes per second; 0 = unknown (no LLC bound)
  double mma_flops_per_cycle_per_sm = 0;  ///< dense FP16/BF16 tensor-core FLOPs
  double smem_per_sm = 0;                 ///< bytes; 0 = unknown: one CTA per SM

  /// The capacity a working set can rely on. A partitioned L2 (Hopper: two partitions linked by
  /// a channel) keeps data near the SMs that use it, so the paper (section VIII-B2) takes one
  /// partition, 25 MB of H800's 50 MB, as the capacity K/V reuse can count on.
  double effective_llc_bytes() const { return l2_bytes / l2_partitions; }
  double clock_hz() const { return clock_mhz * 1e6; }
  /// Dense FP16/BF16 tensor-core FLOPs per second of the whole GPU.
  double peak_flops() const { return sm_count * mma_flops_per_cycle_per_sm * clock_hz(); }
};

/// Throws simfa::InputError naming every out-of-range field ("where: error: ...").
void validate(const AnalyticalGpu& gpu, std::string_view where);

/// The GPU parameters a sweep can vary, by their manifest [gpu] key names.
enum class GpuKey : int {
  sm_count,
  clock_mhz,
  l2_size,
  l2_partitions,
  dram_bandwidth,
  l2_bandwidth,
  mma_flops_per_cycle_per_sm,
  smem_per_sm,
  count
};
/// How a GPU parameter's values are written: plain counts, or numbers with optional units
/// ("1.83GHz", "50MiB", "3.35TB/s", as in manifests).
enum class GpuUnit : int { count, frequency_mhz, size_bytes, bandwidth, number };

struct GpuParam {
  std::string_view name;
  GpuUnit unit;
  std::string_view doc;
};
const std::array<GpuParam, static_cast<int>(GpuKey::count)>& gpu_params();

/// Parses one value of `key` ("50MiB" for l2_size); false when it is not understood.
bool parse_gpu_value(GpuKey key, std::string_view text, double& value);
void set_gpu_value(AnalyticalGpu& gpu, GpuKey key, double value);
double gpu_value(const AnalyticalGpu& gpu, GpuKey key);

}  // namespace simfa::analytical
