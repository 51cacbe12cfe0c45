#include "analytical/gpu.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "analytical/errors.h"
#include "simfa/units.h"

namespace simfa::analytical {

const std::array<GpuParam, static_cast<int>(GpuKey::count)>& gpu_params() {
  static constexpr std::array<GpuParam, static_cast<int>(GpuKey::count)> kParams = {{
      {"sm_count", GpuUnit::count, "SMs; also the CTAs of one wave (one CTA per SM)"},
      {"clock_mhz", GpuUnit::frequency_mhz, "SM clock"},
      {"l2_size", GpuUnit::size_bytes, "nominal L2 capacity"},
      {"l2_partitions", GpuUnit::count, "L2 partitions; the effective LLC is l2_size / l2_partitions"},
      {"dram_bandwidth", GpuUnit::bandwidth, "DRAM bandwidth"},
      {"l2_bandwidth", GpuUnit::bandwidth, "L2 bandwidth; optional, 0 = unknown: no LLC term in the roofline"},
      {"mma_flops_per_cycle_per_sm", GpuUnit::number,
       "dense FP16/BF16 tensor-core FLOPs per cycle per SM (H800: 4096)"},
      {"smem_per_sm", GpuUnit::size_bytes,
       "shared memory per SM; sets a GEMM's CTAs per SM (optional, 0 = unknown: one per SM)"},
  }};
  return kParams;
}

namespace {
bool parse_plain_number(std::string_view text, double& value) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  return ec == std::errc() && ptr == end && std::isfinite(value);
}
}  // namespace

bool parse_gpu_value(GpuKey key, std::string_view text, double& value) {
  switch (gpu_params()[static_cast<int>(key)].unit) {
    case GpuUnit::count: {
      std::int64_t v = 0;
      const char* end = text.data() + text.size();
      auto [ptr, ec] = std::from_chars(text.data(), end, v);
      if (ec != std::errc() || ptr != end || v < 0 || v > (1 << 30)) return false;
      value = static_cast<double>(v);
      return true;
    }
    case GpuUnit::frequency_mhz:
      return parse_plain_number(text, value) || units::parse_frequency_mhz(text, value);
    case GpuUnit::size_bytes: {
      std::int64_t bytes = 0;
      if (!units::parse_size(text, bytes)) return false;
      value = static_cast<double>(bytes);
      return true;
    }
    case GpuUnit::bandwidth:
      return parse_plain_number(text, value) || units::parse_bandwidth(text, value);
    case GpuUnit::number:
      return parse_plain_number(text, value);
  }
  return false;
}

void set_gpu_value(AnalyticalGpu& gpu, GpuKey key, double value) {
  switch (key) {
    case GpuKey::sm_count: gpu.sm_count = static_cast<int>(value); break;
    case GpuKey::clock_mhz: gpu.clock_mhz = value; break;
    case GpuKey::l2_size: gpu.l2_bytes = value; break;
    case GpuKey::l2_partitions: gpu.l2_partitions = static_cast<int>(value); break;
    case GpuKey::dram_bandwidth: gpu.dram_bandwidth = value; break;
    case GpuKey::l2_bandwidth: gpu.l2_bandwidth = value; break;
    case GpuKey::mma_flops_per_cycle_per_sm: gpu.mma_flops_per_cycle_per_sm = value; break;
    case GpuKey::smem_per_sm: gpu.smem_per_sm = value; break;
    case GpuKey::count: break;
  }
}

double gpu_value(const AnalyticalGpu& gpu, GpuKey key) {
  switch (key) {
    case GpuKey::sm_count: return gpu.sm_count;
    case GpuKey::clock_mhz: return gpu.clock_mhz;
    case GpuKey::l2_size: return gpu.l2_bytes;
    case GpuKey::l2_partitions: return gpu.l2_partitions;
    case GpuKey::dram_bandwidth: return gpu.dram_bandwidth;
    case GpuKey::l2_bandwidth: return gpu.l2_bandwidth;
    case GpuKey::mma_flops_per_cycle_per_sm: return gpu.mma_flops_per_cycle_per_sm;
    case GpuKey::smem_per_sm: return gpu.smem_per_sm;
    case GpuKey::count: break;
  }
  return 0;
}

void validate(const AnalyticalGpu& gpu, std::string_view where) {
  std::vector<std::string> errors;
  auto positive = [&](GpuKey key) {
    const double v = gpu_value(gpu, key);
    if (!(v > 0))
      errors.push_back("gpu " + std::string(gpu_params()[static_cast<int>(key)].name) +
                       " must be positive (got " + format_number(v) + ")");
  };
  positive(GpuKey::sm_count);
  positive(GpuKey::clock_mhz);
  positive(GpuKey::l2_size);
  positive(GpuKey::l2_partitions);
  positive(GpuKey::dram_bandwidth);
  positive(GpuKey::mma_flops_per_cycle_per_sm);
  if (!(gpu.smem_per_sm >= 0))
    errors.push_back("gpu smem_per_sm must be positive, or 0 for unknown (got " +
                     format_number(gpu.smem_per_sm) + ")");
  if (!(gpu.l2_bandwidth >= 0))
    errors.push_back("gpu l2_bandwidth must be positive, or 0 for unknown (got " +
                     format_number(gpu.l2_bandwidth) + ")");
  throw_if_errors(where, errors);
}

}  // namespace simfa::analytical
