// The time bounds both models end with: the roofline max(FLOPs / peak, LLC bytes / L2 bandwidth,
// DRAM bytes / DRAM bandwidth) with its bound named, and GenZ's compute-or-DRAM time.
#pragma once

#include "analytical/gpu.h"
#include "analytical/model.h"

namespace simfa::analytical {

/// Fills the roofline and GenZ time fields of `r` from its FLOPs and bytes.
void apply_roofline(AnalyticalResult& r, const AnalyticalGpu& gpu, double peak_flops);

}  // namespace simfa::analytical
