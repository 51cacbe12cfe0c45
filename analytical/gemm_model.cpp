// Tiled GEMM C = A B (M x K times K x N): one CTA per BM x BN output tile, streaming its A row
// panel (BM x K) and B column panel (K x BN). Same structure as the FA3 model: LLC demand per
// CTA, compulsory DRAM traffic, and a wave model where the CTAs of one wave share panels and
// waves share them only while a wave's panels fit the effective LLC; with two CTAs per SM the
// CTAs drift out of step and the reads move toward the bound in which a wave shares nothing.
#include <algorithm>
#include <cmath>

#include "analytical/floor_sum.h"
#include "analytical/llc_survival.h"
#include "analytical/model.h"
#include "analytical/roofline.h"
#include "simfa/int_math.h"

namespace simfa::analytical {

namespace {

/// The operand panels the CTAs [a, b) of the launch order use.
struct WavePanels {
  std::int64_t rows = 0;  ///< distinct tile rows: A panels
  std::int64_t cols = 0;  ///< distinct tile columns: B panels
  bool last_row = false;  ///< holds the last, possibly partial, tile row
  bool last_col = false;
};

/// Launch order: groups of g tile rows (the last group may hold fewer, r rows); inside a group
/// CTA j computes tile (row j % r, column j / r). Row-major is g = 1. Rows of different groups
/// differ, so a wave's rows add up per group; its columns are the union of one interval per
/// group, and a group the wave covers whole covers them all.
WavePanels wave_panels(std::int64_t a, std::int64_t b, std::int64_t m_t, std::int64_t n_t,
                       std::int64_t g) {
  const std::int64_t group_ctas = g * n_t;
  const std::int64_t ga = a / group_ctas, gb = (b - 1) / group_ctas;
  const std::int64_t la = a - ga * group_ctas;  // first CTA, local to group ga
  const std::int64_t lb = b - gb * group_ctas;  // one past the last CTA, local to group gb
  const std::int64_t ra = std::min(g, m_t - ga * g), rb = std::min(g, m_t - gb * g);
  WavePanels p;
  if (ga == gb) {
    p.rows = std::min(lb - la, ra);
    const std::int64_t c0 = la / ra, c1 = (lb - 1) / ra;
    p.cols = c1 - c0 + 1;
    p.last_col = c1 == n_t - 1;
  } else {
    p.rows = std::min(group_ctas - la, ra) + (gb - ga - 1) * g + std::min(lb, rb);
    const std::int64_t c0 = la / ra;        // group ga: columns [c0, n_t - 1]
    const std::int64_t c1 = (lb - 1) / rb;  // group gb: columns [0, c1]
    p.cols = gb - ga >= 2 || c1 + 1 >= c0 ? n_t : (c1 + 1) + (n_t - c0);
    p.last_col = true;
  }
  // The last tile row is row rb - 1 of the last group: present when some local j in the wave's
  // part of that group has j % rb == rb - 1.
  if (gb == (m_t - 1) / g) {
    const std::int64_t start = ga == gb ? la : 0;
    p.last_row = lb / rb - start / rb > 0;
  }
  return p;
}

/// Bytes of a set of panels: whole panels less the clipped part of the last row and column.
struct PanelBytes {
  double a_panel, b_panel, a_clip, b_clip;
  double a(const WavePanels& p) const {
    return static_cast<double>(p.rows) * a_panel - (p.last_row ? a_clip : 0);
  }
  double b(const WavePanels& p) const {
    return static_cast<double>(p.cols) * b_panel - (p.last_col ? b_clip : 0);
  }
  double bytes(const WavePanels& p) const { return a(p) + b(p); }
  /// The LLC capacity the panels of the wave [first, end) take (llc_survival.h, near_copy_share):
  /// an A panel is read by the wave's CTAs of its tile row, a B panel by those of its column, on
  /// average the wave's CTAs over its rows (columns).
  double capacity(const WavePanels& p, std::int64_t ctas) const {
    const double n = static_cast<double>(ctas);
    return a(p) * near_copy_share(n / static_cast<double>(p.rows)) +
           b(p) * near_copy_share(n / static_cast<double>(p.cols));
  }
};

/// Shared memory of one CTA as Triton allocates it and the gemm frontend counts it: the stages'
/// A and B tiles with one 8-byte mbarrier each, the epilogue's C tile reusing them when it fits
/// (validation/h200/gemm_ncu.csv: 98328 B for 128x128x64 in 3 stages); a warp-specialized kernel
/// keeps the C tile beside its ring.
std::int64_t gemm_smem_bytes(const GemmShape& s) {
  constexpr std::int64_t kMbarrierBytes = 8;
  const std::int64_t ring = s.stages * (s.block_m + s.block_n) * s.block_k * s.elem_bytes;
  const std::int64_t c_tile = s.block_m * s.block_n * s.out_bytes;
  return s.warp_specialized ? ring + c_tile : std::max(ring + s.stages * kMbarrierBytes, c_tile);
}

/// DRAM reads when the CTAs are spread evenly over their lifetime instead of running in waves:
/// CTA i starts i / P' of a CTA's time after CTA 0. A panel's k-slice read by one CTA is read
/// next by the following CTA that uses the panel, and in between every CTA in flight advanced by
/// the same share, so the LLC took in every panel of the tile columns (rows) between the two once:
/// under the row-major raster consecutive CTAs share an A panel (distance: one C tile) and CTAs
/// n_t apart a B panel (distance: all of B, one A panel and n_t C tiles); under the grouped
/// raster the roles follow its columns of `rows` tiles.
double staggered_reads(std::int64_t m_t, std::int64_t n_t, std::int64_t g, const PanelBytes& panel,
                       double tile_bytes, double c_eff) {
  const double a_all = static_cast<double>(m_t) * panel.a_panel - panel.a_clip;
  const double b_all = static_cast<double>(n_t) * panel.b_panel - panel.b_clip;
  if (g == 1) {
    const double b_distance = b_all + panel.a_panel + static_cast<double>(n_t) * tile_bytes;
    const double b_reuses = static_cast<double>(m_t - 1) * b_all;
    return a_all + b_all + b_reuses * (1 - llc_survival(b_distance / c_eff));
  }
  // Grouped: inside a group of r rows, CTAs walk a column's r tiles, then the next column. A B
  // panel is shared by the r consecutive CTAs of its column (distance: a few C tiles) and read
  // again by every group; an A panel is read again by every column of its group, r CTAs later,
  // after the group's r A panels and one B panel.
  const double rows = static_cast<double>(std::min(g, m_t));
  const double a_group = rows * panel.a_panel;
  const double a_distance = a_group + panel.b_panel + rows * tile_bytes;
  const double groups = static_cast<double>(ceil_div(m_t, g));
  const double b_distance = b_all + a_group + static_cast<double>(n_t) * rows * tile_bytes;
  const double a_reuses = static_cast<double>(n_t - 1) * a_all;
  const double b_reuses = (groups - 1) * b_all;
  return a_all + b_all + a_reuses * (1 - llc_survival(a_distance / c_eff)) +
         b_reuses * (1 - llc_survival(b_distance / c_eff));
}

/// L2 bytes one SM receives per SM cycle while every SM streams TMA copies from the L2: 9.1 TB/s
/// over 132 SMs at 1980 MHz (validation/h200/bandwidth.csv, tma_bulk_l2, 16 and 64 KiB copies,
/// 8971-9114 GB/s at 1971-1972 MHz). Used when the GPU's l2_bandwidth is unknown (0); a manifest
/// that gives it sets this rate as l2_bandwidth / (sm_count x clock).
constexpr double kL2BytesPerSmCycle = 34.8;
/// How much wider, as a share of one CTA's duration, the start times of each wave spread than the
/// previous wave's while nothing holds the CTAs together: validation/h200/cta_stamps.csv, the three
/// kernels of more than one wave with two CTAs per SM (4096x4096x512 and x1024 at 128x128, 2048^3
/// at 64x128; the first wave starts within 32 ns, the later ones over 0.20, 0.39, 0.54 / 0.13,
/// 0.23, 0.38 / 0.05 of a CTA): the least-squares slope through the origin of those 7 windows
/// against the wave index, 0.151. Timing data, not the ncu targets. The drift below takes it as
/// the most that can leave step per wave.
constexpr double kStartWindowPerWave = 0.15;
/// The offset, in k-steps, beyond which CTAs that share a panel no longer pull each other back
/// into step (the barrier of the escape rate below): the one constant fitted to kernels, on the
/// fit half of gemm_ncu.csv (the held-out half and gemm_ncu_cliff.csv never saw it;
/// docs/analytical.md gives the scan). Refitted (60 before) when the DRAM's load joined the rate.
constexpr double kDriftKSteps = 76;

/// A k-step of one CTA, in SM cycles: the tensor core's time for its MMAs (2 BM BN BK FLOPs at the
/// SM's rate) and the L2's time for its TMA bytes ((BM + BN) BK e at the L2's rate per SM). CTAs
/// per SM cancel in every ratio below (they share both the tensor core and the SM's L2 port).
struct KStepCycles {
  double mma = 0;
  double tma = 0;
  /// Its pace: whichever of the two is longer.
  double pace() const { return std::max(mma, tma); }
  /// The share of a k-step whose pace the memory system sets rather than the tensor core,
  /// e = max(0, 1 - t_mma / t_tma). On the H200 128x128x64 reads 64 B per tensor-core cycle, so
  /// e = 1 - 34.8 / 64 = 0.46; 64x128x64 reads 96, e = 0.64.
  double memory_paced_share() const { return std::max(0.0, 1 - mma / tma); }
};

KStepCycles k_step_cycles(const AnalyticalGpu& gpu, const GemmShape& s) {
  const double l2_rate =
      gpu.l2_bandwidth > 0 ? gpu.l2_bandwidth / (static_cast<double>(gpu.sm_count) * gpu.clock_hz())
                           : kL2BytesPerSmCycle;
  const double flops_per_cycle =
      gpu.mma_flops_per_cycle_per_sm * (s.dtype == GemmDtype::fp8 ? 2 : 1);
  const double bm = static_cast<double>(s.block_m), bn = static_cast<double>(s.block_n);
  const double bk = static_cast<double>(s.block_k);
  return {2 * bm * bn * bk / flops_per_cycle,
          (bm + bn) * bk * static_cast<double>(s.elem_bytes) / l2_rate};
}

/// The drift's inputs: the lockstep reads and the out-of-step bound, and the DRAM's load per byte
/// read, rho = R / (dram_bandwidth x the time the launch's k-steps take at their pace).
struct DriftInputs {
  std::int64_t ctas = 0, per_wave = 0, k_steps = 0, ctas_per_sm = 1;
  double memory_paced = 0;
  double lockstep = 0, staggered = 0;
  double load_per_byte = 0;
};

/// The share of the way from the lockstep wave model to the out-of-step bound that drifting CTAs
/// take, averaged over the launch's CTAs. CTAs that share a panel hold each other in step: the
/// one behind finds the leader's slices in the L2 and catches up. What pushes them apart is the
/// variability of the memory-paced share e of their k-steps (the tensor core paces the rest alike
/// for all), a spread of order e k_t k-steps per CTA; a pair escapes once it is more than k*
/// k-steps apart, at a rate per wave boundary that the spread against that barrier sets, as for
/// escape over a barrier under noise: h = sigma exp(-(k* / (e k_t))^2 / v), sigma the start
/// window's widening per wave when nothing holds the CTAs (the most that can leave step per wave)
/// and v the variance of the memory time relative to an idle DRAM's. A pair that has escaped
/// fetches its panel each for itself and does not come back. Every CTA of the first wave starts
/// together (in step); a CTA of wave w has escaped with probability 1 - exp(-(h_1 + ... + h_w)).
/// Wave w holds P CTAs and the last the rest, so a 2-4-wave launch, most of whose CTAs run in the
/// lockstep first wave or in the partly empty last one, drifts less than its last wave alone.
///
/// The DRAM's load: a k-step's memory time waits behind the requests queued at the DRAM, on
/// average rho / (1 - rho) of them at load rho (M/M/1), each adding its own service time's noise,
/// so the variance grows as v = 1 + rho / (1 - rho) = 1 / (1 - rho): h = sigma exp(-(1 - rho)
/// (k* / (e k_t))^2), sigma itself once the DRAM is saturated (rho >= 1). rho is the DRAM time of
/// the reads at the share escaped so far against the time the k-steps take at their pace, so the
/// drift feeds itself: escaped CTAs re-fetch, load the DRAM and spread the rest faster. Where the
/// out-of-step bound outruns the DRAM (the tile's B traffic a large share of its L2 traffic:
/// 64x128 on the H200, rho 1.27 fully out of step, against 0.95-0.98 at 128x128) the escape runs
/// away; where it does not the feedback stays mild. One exp a wave; a launch whose rate cannot
/// move (the DRAM saturated throughout, or no drift to feed it) takes the geometric series, O(1).
/// One CTA per SM stays in step: its duration spread (0.05-0.25 in gemm_suite.csv, falling with
/// k_t like averaging noise) leaves every 128x256 point of gemm_ncu.csv and gemm_ncu_cliff.csv at
/// the lockstep reads to the MB, so it takes no drift.
double out_of_step_share(const DriftInputs& in) {
  const std::int64_t waves = ceil_div(in.ctas, in.per_wave);
  if (waves < 2 || in.ctas_per_sm < 2 || in.memory_paced <= 0) return 0;
  const double barrier = kDriftKSteps / (in.memory_paced * static_cast<double>(in.k_steps));
  const double barrier_sq = barrier * barrier;
  const double extra = std::max(0.0, in.staggered - in.lockstep);
  auto rate = [&](double escaped) {
    const double load = std::min(1.0, (in.lockstep + escaped * extra) * in.load_per_byte);
    return kStartWindowPerWave * std::exp(-(1 - load) * barrier_sq);
  };
  const std::int64_t last = waves - 1;
  const double last_ctas = static_cast<double>(in.ctas - last * in.per_wave);
  const double h0 = rate(0), h_max = rate(1);
  if (h_max <= 0) return 0;  // the exponential underflowed: nothing escapes
  // A rate that cannot move over the launch (the DRAM saturated from the start, or so little
  // escapes that its load stays put: the whole launch's escape below 1e-9) is the constant h0.
  if (h_max == h0 || static_cast<double>(last) * h_max < 1e-9) {
    if (h0 <= 0) return 0;  // underflowed at the lockstep load: nothing escapes
    // Escaped CTAs of the full waves 1 .. last - 1: sum of 1 - exp(-w h) = n - q (1 - q^n) / (1 -
    // q), q = exp(-h), n = last - 1; expm1 keeps the small-h case exact.
    const double n = static_cast<double>(last - 1);
    const double kept = std::exp(-h0) * std::expm1(-n * h0) / std::expm1(-h0);
    return (static_cast<double>(in.per_wave) * (n - kept) -
            last_ctas * std::expm1(-static_cast<double>(last) * h0)) /
           static_cast<double>(in.ctas);
  }
  double hazard = 0, escaped = 0, sum = 0;
  for (std::int64_t w = 1; w <= last; ++w) {
    hazard += rate(escaped);  // the load of the waves in flight: wave w - 1's escaped share
    escaped = -std::expm1(-hazard);
    sum += (w < last ? static_cast<double>(in.per_wave) : last_ctas) * escaped;
  }
  return sum / static_cast<double>(in.ctas);
}

}  // namespace

AnalyticalResult analyze_gemm(const AnalyticalGpu& gpu, const GemmShape& s) {
  AnalyticalResult r;
  r.kind = WorkloadKind::gemm;
  const double M = static_cast<double>(s.m), N = static_cast<double>(s.n),
               K = static_cast<double>(s.k);
  const double e = static_cast<double>(s.elem_bytes), ce = static_cast<double>(s.out_bytes);
  const std::int64_t m_t = ceil_div(s.m, s.block_m), n_t = ceil_div(s.n, s.block_n);
  const std::int64_t k_t = ceil_div(s.k, s.block_k);

  r.flops = 2 * M * N * K;
  r.mma_flops = 2 * static_cast<double>(m_t * s.block_m) * static_cast<double>(n_t * s.block_n) *
                static_cast<double>(k_t * s.block_k);

  // LLC demand: each of the n_t CTAs of a tile row reads that row's A panel, each of the m_t of
  // a tile column its B panel (clipped at the matrix edges), and each writes its C tile.
  r.llc_read_bytes = (static_cast<double>(n_t) * M * K + static_cast<double>(m_t) * K * N) * e;
  r.llc_write_bytes = M * N * ce;
  r.gemm.a_bytes = M * K * e;
  r.gemm.b_bytes = K * N * e;
  r.dram_ideal_read_bytes = r.gemm.a_bytes + r.gemm.b_bytes;
  r.dram_ideal_write_bytes = M * N * ce;

  // CTAs per SM: as many as the SM's shared memory holds (one when the GPU's is unknown), each
  // taking the runtime's 1 KiB reservation beside its own (CUDA C++ Programming Guide, "Shared
  // Memory", compute capability 9.0). With two 98 KiB CTAs an H200 SM runs 264 tiles at once, as
  // ncu's launch__occupancy_limit_shared_mem reports for every 128x128 and 64x128 point of
  // validation/h200/gemm_ncu.csv (and 1 for 128x256).
  r.gemm.smem_bytes = gemm_smem_bytes(s);
  constexpr double kReservedSmemPerCta = 1024;
  r.gemm.ctas_per_sm = gpu.smem_per_sm > 0
                           ? std::max<std::int64_t>(
                                 1, static_cast<std::int64_t>(
                                        gpu.smem_per_sm / (static_cast<double>(r.gemm.smem_bytes) +
                                                           kReservedSmemPerCta)))
                           : 1;

  // Wave model: every wave of P consecutive CTAs fetches each distinct panel it uses once.
  const std::int64_t P = gpu.sm_count * r.gemm.ctas_per_sm;
  const std::int64_t g = s.raster == Raster::grouped ? kGroupedRasterRows : 1;
  r.ctas = m_t * n_t;
  r.ctas_per_wave = std::min(P, r.ctas);
  r.waves = ceil_div(r.ctas, P);
  r.gemm.tiles_m = m_t;
  r.gemm.tiles_n = n_t;
  r.effective_llc_bytes = gpu.effective_llc_bytes();
  const PanelBytes panel{static_cast<double>(s.block_m) * K * e,
                         static_cast<double>(s.block_n) * K * e,
                         static_cast<double>(m_t * s.block_m - s.m) * K * e,
                         static_cast<double>(n_t * s.block_n - s.n) * K * e};
  const double tile_bytes = static_cast<double>(s.block_m * s.block_n) * ce;
  auto panels = [&](std::int64_t a, std::int64_t b) { return wave_panels(a, b, m_t, n_t, g); };

  // VIII-B2 made continuous (issue 18). Wave w+1's panels are new (no earlier wave used them:
  // compulsory), shared with wave w, or last used before w. A shared panel's k-slice at share u of
  // the traversal was read by wave w, after which the LLC took in the rest (1 - u) of w's panels,
  // w's C tiles and the first share u of w+1's panels: an LRU stack distance running linearly from
  // F_w + T_w to F_{w+1} + T_w; an older one has one wave more in between. The panels count by the
  // capacity their copies take (F_w: PanelBytes::capacity), the C tiles whole. Each part survives
  // by that distance (analytical/llc_survival.h); the inclusion-exclusion over the launch order's
  // contiguous ranges keeps every count exact, clipped panels included.
  std::int64_t panel_fetches = 0;
  double prev_bytes = 0, prev_capacity = 0, prev_tiles = 0, distance_sum = 0, seen_bytes = 0;
  std::int64_t seen_end = -1;  // the launch-order prefix seen_bytes covers
  std::int64_t prev_start = 0;
  for (std::int64_t a = 0; a < r.ctas; a += P) {
    const std::int64_t b = std::min(a + P, r.ctas);
    const WavePanels p = panels(a, b);
    const double a_bytes = panel.a(p), b_bytes = panel.b(p);
    const double bytes = a_bytes + b_bytes;
    const double capacity = panel.capacity(p, b - a);
    const double tiles = static_cast<double>(b - a) * tile_bytes;
    if (a == 0) {
      r.gemm.wave_a_panels = p.rows;
      r.gemm.wave_b_panels = p.cols;
      r.working_set_operand_bytes = bytes;
      r.dram_read_bytes = bytes;
      seen_bytes = bytes;
      seen_end = b;
    } else {
      const double d0 = prev_capacity + prev_tiles, d1 = capacity + prev_tiles;
      const double c_eff = r.effective_llc_bytes;
      if (a == P) distance_sum = (d0 + d1) / 2;
      if (std::min(d0, d1) >= (kSurvivalOnset + kSurvivalWidth) * c_eff) {
        r.dram_read_bytes +=
            bytes;  // nothing survives: new, shared and older panels alike are fetched
      } else {
        // panels(0, a) is the previous wave's panels(0, b) when that was needed.
        const double before = seen_end == a ? seen_bytes : panel.bytes(panels(0, a));
        seen_bytes = panel.bytes(panels(0, b));
        seen_end = b;
        const double fresh = seen_bytes - before;
        r.dram_read_bytes += fresh;
        if (std::max(d0, d1) + prev_capacity >
            kSurvivalOnset * c_eff) {  // else every re-use survives
          const double shared = prev_bytes + bytes - panel.bytes(panels(prev_start, b));
          const double older = std::max(0.0, bytes - shared - fresh);
          r.dram_read_bytes +=
              shared * (1 - mean_llc_survival(d0, d1, c_eff)) +
              older * (1 - mean_llc_survival(d0 + prev_capacity, d1 + prev_capacity, c_eff));
        }
      }
    }
    r.gemm.a_wave_read_bytes += a_bytes;
    r.gemm.b_wave_read_bytes += b_bytes;
    panel_fetches += p.rows + p.cols;
    prev_bytes = bytes;
    prev_capacity = capacity;
    prev_tiles = tiles;
    prev_start = a;
  }
  r.wave_factor = static_cast<double>(panel_fetches) / static_cast<double>(m_t + n_t);
  r.dram_wave_read_bytes = r.gemm.a_wave_read_bytes + r.gemm.b_wave_read_bytes;
  r.reuse_distance_bytes = distance_sum;

  r.working_set_tile_bytes = static_cast<double>(r.ctas_per_wave) * tile_bytes;
  r.working_set_bytes = r.working_set_operand_bytes + r.working_set_tile_bytes;
  r.reuse_survival =
      reuse_survival(r.dram_ideal_read_bytes, r.dram_wave_read_bytes, r.dram_read_bytes);
  r.regime = regime_of(r.reuse_survival);
  r.dram_write_bytes = r.dram_ideal_write_bytes;
  r.gemm.staggered_read_bytes =
      staggered_reads(m_t, n_t, g, panel, tile_bytes, r.effective_llc_bytes);

  // Drift out of step (issue 18): the survival and regime above are the lockstep waves'; the CTAs
  // that lose step move the reads toward the out-of-step bound (never below the lockstep value).
  r.gemm.lockstep_read_bytes = r.dram_read_bytes;
  const KStepCycles k_step = k_step_cycles(gpu, s);
  r.gemm.memory_paced_share = k_step.memory_paced_share();
  // The DRAM's load per byte read: its time at dram_bandwidth against the launch's ctas x k_t
  // k-steps, each SM completing one every pace cycles (whatever its CTAs), per SM cycle.
  const double dram_per_sm_cycle =
      gpu.dram_bandwidth / (static_cast<double>(gpu.sm_count) * gpu.clock_hz());
  const double load_per_byte = 1 / (static_cast<double>(r.ctas) * static_cast<double>(k_t) *
                                    k_step.pace() * dram_per_sm_cycle);
  r.gemm.out_of_step_share =
      out_of_step_share({r.ctas, P, k_t, r.gemm.ctas_per_sm, r.gemm.memory_paced_share,
                         r.gemm.lockstep_read_bytes, r.gemm.staggered_read_bytes, load_per_byte});
  if (r.gemm.staggered_read_bytes > r.dram_read_bytes)
    r.dram_read_bytes +=
        r.gemm.out_of_step_share * (r.gemm.staggered_read_bytes - r.gemm.lockstep_read_bytes);
  r.gemm.dram_load = r.dram_read_bytes * load_per_byte;

  // GenZ's GEMM operator: A, B and C cross DRAM once.
  r.genz_flops = r.flops;
  r.genz_dram_bytes = r.dram_ideal_read_bytes + r.dram_ideal_write_bytes;

  // Hopper's tensor cores run FP8 at twice the FP16 rate (H100 datasheet: 1979 vs 989 dense
  // TFLOPS).
  apply_roofline(r, gpu, gpu.peak_flops() * (s.dtype == GemmDtype::fp8 ? 2 : 1));
  return r;
}

}  // namespace simfa::analytical
