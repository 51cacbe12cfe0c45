#include "analytical/model.h"

#include "analytical/roofline.h"

namespace simfa::analytical {

std::string_view regime_name(Regime regime) {
  switch (regime) {
    case Regime::ideal: return "ideal";
    case Regime::partial: return "partial";
    case Regime::realistic: return "realistic";
  }
  return "";
}

Regime regime_of(double survival) {
  if (survival >= 1 - 1e-9) return Regime::ideal;
  if (survival <= 1e-9) return Regime::realistic;
  return Regime::partial;
}

double reuse_survival(double ideal, double wave, double predicted) {
  return wave > ideal ? (wave - predicted) / (wave - ideal) : 1.0;
}

std::string_view bound_name(Bound bound) {
  switch (bound) {
    case Bound::compute: return "compute";
    case Bound::llc: return "llc";
    case Bound::dram: return "dram";
  }
  return "";
}

void apply_roofline(AnalyticalResult& r, const AnalyticalGpu& gpu, double peak_flops) {
  r.peak_flops = peak_flops;
  r.time_compute_s = r.mma_flops / peak_flops;
  r.time_llc_s = gpu.l2_bandwidth > 0 ? r.llc_bytes() / gpu.l2_bandwidth : 0;
  r.time_dram_s = r.dram_bytes() / gpu.dram_bandwidth;
  r.time_s = r.time_compute_s;
  r.bound = Bound::compute;
  if (r.time_llc_s > r.time_s) {
    r.time_s = r.time_llc_s;
    r.bound = Bound::llc;
  }
  if (r.time_dram_s > r.time_s) {
    r.time_s = r.time_dram_s;
    r.bound = Bound::dram;
  }
  // GenZ's roofline: its own FLOPs at the same peak against its ideal-cache bytes over DRAM.
  const double genz_compute = r.genz_flops / peak_flops;
  const double genz_memory = r.genz_dram_bytes / gpu.dram_bandwidth;
  r.genz_bound = genz_memory > genz_compute ? Bound::dram : Bound::compute;
  r.genz_time_s = genz_memory > genz_compute ? genz_memory : genz_compute;
}

AnalyticalResult analyze(const AnalyticalGpu& gpu, const Workload& workload) {
  return workload.kind == WorkloadKind::fa3 ? analyze_fa3(gpu, workload.fa3)
                                            : analyze_gemm(gpu, workload.gemm);
}

}  // namespace simfa::analytical
