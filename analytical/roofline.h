// What both models end with: the regime of their survival share, and the time bounds: the
// roofline max(FLOPs / peak, LLC bytes / L2 bandwidth, DRAM bytes / DRAM bandwidth) with its bound
// named, and GenZ's compute-or-DRAM time.
#pragma once

#include "analytical/gpu.h"
#include "analytical/model.h"

namespace simfa::analytical {

/// The regime a survival share falls in (ideal at 1, realistic at 0, partial between).
Regime regime_of(double survival);
/// (wave - predicted) / (wave - ideal): the share of the wave model's re-fetches that survive; 1
/// when the wave model fetches nothing twice.
double reuse_survival(double ideal, double wave, double predicted);

/// Fills the roofline and GenZ time fields of `r` from its FLOPs and bytes.
void apply_roofline(AnalyticalResult& r, const AnalyticalGpu& gpu, double peak_flops);

}  // namespace simfa::analytical
