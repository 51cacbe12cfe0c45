#include "ranking/gemm_ranking.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

#include "simfa/int_math.h"
#include "simfa/isa.h"

namespace simfa::ranking {

namespace {

/// The p-norm of the bounds: the largest when one dominates, more when several are close (a
/// loop bound by two resources at once hides neither completely).
template <std::size_t N>
double smooth_max(const std::array<double, N>& terms, double p) {
  double sum = 0;
  for (double t : terms) sum += std::pow(t, p);
  return std::pow(sum, 1.0 / p);
}

constexpr std::array<int, 3> kTileSizes = {64, 128, 256};
constexpr std::array<int, 3> kBlockK = {32, 64, 128};
constexpr std::array<int, 4> kStages = {2, 3, 4, 5};
constexpr std::array<int, 2> kWarps = {4, 8};

constexpr std::array<std::string_view, 4> kLoopBounds = {"wgmma", "issue", "latency", "tma"};

}  // namespace

std::string TritonGemmConfig::name() const {
  return fmt::format("bm{}_bn{}_bk{}_s{}_w{}", block_m, block_n, block_k, stages, warps);
}

std::vector<TritonGemmConfig> triton_gemm_space() {
  std::vector<TritonGemmConfig> space;
  for (int bm : kTileSizes)
    for (int bn : kTileSizes)
      for (int bk : kBlockK)
        for (int s : kStages)
          for (int w : kWarps) space.push_back({bm, bn, bk, s, w});
  return space;
}

Validity triton_validity(const TritonGemmConfig& c, const RankGpu& gpu) {
  Validity v;
  const std::int64_t ring =
      static_cast<std::int64_t>(c.stages) * (c.block_m + c.block_n) * c.block_k * kElementBytes +
      c.stages * kMbarrierBytes;
  v.smem_bytes = std::max(ring, static_cast<std::int64_t>(c.block_m) * c.block_n * kElementBytes);
  v.smem_limit = gpu.smem_per_sm_bytes - kReservedSmemPerCta;
  v.accumulator_registers = static_cast<std::uint32_t>(c.block_m * c.block_n / (32 * c.warps));
  v.spill_risk = v.accumulator_registers + kBaseRegisters > kMaxRegisters;
  v.registers = std::min(kMaxRegisters, v.accumulator_registers + kBaseRegisters);
  v.valid = v.smem_bytes <= v.smem_limit;
  if (!v.valid)
    v.reason = fmt::format(
        "shared memory: {} B of stages, mbarriers and C tile above the {} B a "
        "CTA may opt in to",
        v.smem_bytes, v.smem_limit);
  return v;
}

GemmFeatures gemm_features(const GemmProblem& p, const TritonGemmConfig& c, const RankGpu& gpu,
                           const RankConstants& k) {
  GemmFeatures f;
  const Validity v = triton_validity(c, gpu);
  const std::int64_t sms = gpu.sm_count;
  const double clock_hz = gpu.clock_mhz * 1e6;
  const double e = kElementBytes;
  const auto M = static_cast<double>(p.m), N = static_cast<double>(p.n),
             K = static_cast<double>(p.k);

  f.tiles_m = ceil_div(p.m, c.block_m);
  f.tiles_n = ceil_div(p.n, c.block_n);
  f.tiles = f.tiles_m * f.tiles_n;
  f.edge_waste = 1 - M * N /
                         (static_cast<double>(f.tiles_m * c.block_m) *
                          static_cast<double>(f.tiles_n * c.block_n));
  f.k_tiles = ceil_div(p.k, c.block_k);

  f.smem_bytes = v.smem_bytes;
  f.registers = v.registers;
  f.spill_risk = v.spill_risk;
  f.residency_smem = static_cast<int>(gpu.smem_per_sm_bytes / (v.smem_bytes + kReservedSmemPerCta));
  const std::int64_t regs_per_cta =
      static_cast<std::int64_t>(round_up(v.registers, kRegisterAllocationUnit)) * kThreadsPerWarp *
      c.warps;
  f.residency_regs = static_cast<int>(gpu.regs_per_sm / regs_per_cta);
  f.residency_threads = gpu.max_warpgroups_per_sm / (c.warps / int{kWarpsPerWarpGroup});
  f.residency = std::max(
      1, std::min({f.residency_smem, f.residency_regs, f.residency_threads, gpu.max_ctas_per_sm}));
  const std::int64_t slots = sms * f.residency;
  f.waves = static_cast<double>(f.tiles) / static_cast<double>(slots);
  f.wave_efficiency =
      static_cast<double>(f.tiles) / static_cast<double>(ceil_div(f.tiles, slots) * slots);
  f.active_sms = std::min(sms, f.tiles);

  f.bytes_per_stage = static_cast<std::int64_t>(c.block_m + c.block_n) * c.block_k * kElementBytes;
  f.tile_intensity = static_cast<double>(c.block_m) * c.block_n / (c.block_m + c.block_n);
  const double tiles_m = static_cast<double>(f.tiles_m), tiles_n = static_cast<double>(f.tiles_n);
  f.llc_bytes = (tiles_n * M * K + tiles_m * N * K) * e + M * N * e;
  const double compulsory = (M * K + N * K) * e + M * N * e;
  // Re-streaming: the first wave's CTAs cover `rows` tile rows; when their A and B panels
  // exceed the L2 a partition can keep, every later band of rows streams B again.
  const std::int64_t concurrent = std::min(f.tiles, slots);
  const std::int64_t rows = std::min(f.tiles_m, ceil_div(concurrent, f.tiles_n));
  const double panels = static_cast<double>(rows) * c.block_m * K * e +
                        static_cast<double>(std::min(f.tiles_n, concurrent)) * c.block_n * K * e;
  const bool restream = panels > gpu.l2_bytes / gpu.l2_partitions && f.tiles_m > rows;
  f.dram_bytes =
      compulsory + (restream ? (tiles_m / static_cast<double>(rows) - 1) * N * K * e : 0.0);
  f.restream_factor = f.dram_bytes / compulsory;
  f.l2_miss_fraction = std::min(1.0, f.dram_bytes / f.llc_bytes);

  // Pipeline balance, cycles per k-tile of one CTA.
  const double sm_bytes_per_cycle = std::min(
      k.sm_l2_bytes_per_cycle, k.l2_bandwidth / (static_cast<double>(f.active_sms) * clock_hz));
  f.tma_cycles = static_cast<double>(f.bytes_per_stage) / sm_bytes_per_cycle;
  f.load_latency_cycles = k.tma_l2_latency +
                          f.l2_miss_fraction * (k.tma_dram_latency - k.tma_l2_latency) +
                          f.tma_cycles;
  const double efficiency = c.warps > 4 ? k.two_warpgroup_efficiency : 1.0;
  f.wgmma_cycles =
      2.0 * c.block_m * c.block_n * c.block_k / gpu.mma_flops_per_cycle_per_sm / efficiency;
  f.producer_consumer_ratio = f.tma_cycles / f.wgmma_cycles;
  f.fill_cycles = f.load_latency_cycles / (c.stages - 1);
  f.pipeline_fill =
      std::min(1.0, static_cast<double>(c.stages - 1) / static_cast<double>(f.k_tiles));

  // The busiest SM runs ceil(tiles / SMs) CTAs, `residency` at a time; r co-resident CTAs share
  // the tensor core and the SM's L2 bandwidth, each waits on its own loads and barriers.
  std::size_t bound = 0;
  auto k_tile = [&](std::int64_t r) {
    const double rr = static_cast<double>(r);
    const std::array<double, 4> terms = {rr * f.wgmma_cycles, k.min_k_tile_cycles, f.fill_cycles,
                                         rr * f.tma_cycles};
    bound = static_cast<std::size_t>(std::max_element(terms.begin(), terms.end()) - terms.begin());
    double t = smooth_max(terms, k.bound_exponent) + rr * k.k_tile_issue_cycles;
    if (f.spill_risk) t *= k.spill_factor;
    return t;
  };
  auto round = [&](std::int64_t r) {
    return f.load_latency_cycles + static_cast<double>(f.k_tiles) * k_tile(r) +
           static_cast<double>(c.block_m) * c.block_n * e / k.sm_l2_bytes_per_cycle;
  };
  const std::int64_t per_sm = ceil_div(f.tiles, sms);
  const std::int64_t full = per_sm / f.residency, rest = per_sm % f.residency;
  double cycles = static_cast<double>(full) * (full > 0 ? round(f.residency) : 0.0);
  if (rest > 0) cycles += round(rest);
  f.k_tile_cycles = k_tile(std::min<std::int64_t>(f.residency, per_sm));  // also sets `bound`
  f.compute_us = cycles / clock_hz * 1e6;
  f.dram_us = f.dram_bytes / (gpu.dram_bandwidth * k.dram_efficiency) * 1e6;
  f.predicted_us = smooth_max(std::array<double, 2>{f.compute_us, f.dram_us}, k.bound_exponent);
  f.bound = f.dram_us > f.compute_us ? std::string_view("dram") : kLoopBounds[bound];
  return f;
}

const std::vector<std::string_view>& feature_names() {
  static const std::vector<std::string_view> names = {"features_us",
                                                      "simulated_us",
                                                      "bound",
                                                      "tiles_m",
                                                      "tiles_n",
                                                      "tiles",
                                                      "edge_waste",
                                                      "k_tiles",
                                                      "waves",
                                                      "wave_efficiency",
                                                      "active_sms",
                                                      "residency",
                                                      "residency_smem",
                                                      "residency_regs",
                                                      "residency_threads",
                                                      "smem_bytes",
                                                      "bytes_per_stage",
                                                      "registers",
                                                      "spill_risk",
                                                      "tile_intensity",
                                                      "llc_bytes",
                                                      "dram_bytes",
                                                      "restream_factor",
                                                      "l2_miss_fraction",
                                                      "load_latency_cycles",
                                                      "tma_cycles",
                                                      "wgmma_cycles",
                                                      "producer_consumer_ratio",
                                                      "fill_cycles",
                                                      "pipeline_fill",
                                                      "k_tile_cycles",
                                                      "compute_us",
                                                      "dram_us"};
  return names;
}

std::vector<std::string> feature_values(const GemmFeatures& f) {
  auto g = [](double x) { return fmt::format("{:.6g}", x); };
  return {g(f.predicted_us),
          "",
          std::string(f.bound),
          g(static_cast<double>(f.tiles_m)),
          g(static_cast<double>(f.tiles_n)),
          g(static_cast<double>(f.tiles)),
          g(f.edge_waste),
          g(static_cast<double>(f.k_tiles)),
          g(f.waves),
          g(f.wave_efficiency),
          g(static_cast<double>(f.active_sms)),
          g(f.residency),
          g(f.residency_smem),
          g(f.residency_regs),
          g(f.residency_threads),
          g(static_cast<double>(f.smem_bytes)),
          g(static_cast<double>(f.bytes_per_stage)),
          g(f.registers),
          f.spill_risk ? "1" : "0",
          g(f.tile_intensity),
          g(f.llc_bytes),
          g(f.dram_bytes),
          g(f.restream_factor),
          g(f.l2_miss_fraction),
          g(f.load_latency_cycles),
          g(f.tma_cycles),
          g(f.wgmma_cycles),
          g(f.producer_consumer_ratio),
          g(f.fill_cycles),
          g(f.pipeline_fill),
          g(f.k_tile_cycles),
          g(f.compute_us),
          g(f.dram_us)};
}

std::string_view ranker_name(Ranker ranker) {
  switch (ranker) {
    case Ranker::kFeatures:
      return "features";
    case Ranker::kSimulate:
      return "simulate";
    case Ranker::kHybrid:
      return "hybrid";
  }
  return "?";
}

std::vector<RankedConfig> rank_gemm(const GemmProblem& problem, const RankGpu& gpu,
                                    const RankOptions& options, const SimulateFn& simulate) {
  std::vector<RankedConfig> out;
  for (const TritonGemmConfig& c : triton_gemm_space()) {
    RankedConfig r;
    r.config = c;
    r.validity = triton_validity(c, gpu);
    if (!r.validity.valid) continue;
    r.features = gemm_features(problem, c, gpu, options.constants);
    r.predicted_us = r.features.predicted_us;
    out.push_back(std::move(r));
  }
  auto by_features = [](const RankedConfig& a, const RankedConfig& b) {
    return a.features.predicted_us < b.features.predicted_us;
  };
  std::stable_sort(out.begin(), out.end(), by_features);
  if (options.ranker != Ranker::kFeatures && simulate) {
    const std::size_t n =
        options.ranker == Ranker::kSimulate
            ? out.size()
            : std::min(out.size(), static_cast<std::size_t>(std::max(1, options.shortlist)));
    for (std::size_t i = 0; i < n; ++i) {
      out[i].simulated_us = simulate(problem, out[i].config);
      if (out[i].simulated_us >= 0) out[i].predicted_us = out[i].simulated_us;
    }
    // Simulated configs first, by simulated time; then the rest in the features' order.
    std::stable_sort(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(n),
                     [](const RankedConfig& a, const RankedConfig& b) {
                       const bool sa = a.simulated_us >= 0, sb = b.simulated_us >= 0;
                       if (sa != sb) return sa;
                       return sa ? a.simulated_us < b.simulated_us
                                 : a.features.predicted_us < b.features.predicted_us;
                     });
  }
  for (std::size_t i = 0; i < out.size(); ++i) out[i].rank = static_cast<int>(i) + 1;
  return out;
}

std::string explain(const RankedConfig& r) {
  const GemmFeatures& f = r.features;
  const int res = f.residency;
  std::string_view limit = res == f.residency_smem      ? "smem"
                           : res == f.residency_regs    ? "registers"
                           : res == f.residency_threads ? "threads"
                                                        : "CTA limit";
  return fmt::format(
      "{}-bound, {:.2f} waves ({:.0f}%), {} CTA{}/SM ({}), TMA/WGMMA {:.2f}, fill "
      "{:.0f}%{}{}",
      f.bound, f.waves, 100 * f.wave_efficiency, res, res == 1 ? "" : "s", limit,
      f.producer_consumer_ratio, 100 * f.pipeline_fill,
      f.restream_factor > 1.001 ? fmt::format(", DRAM {:.2f}x compulsory", f.restream_factor) : "",
      f.spill_risk ? ", SPILLS" : "");
}

}  // namespace simfa::ranking
