// Tiled GEMM C = A B (M x K times K x N): one CTA per BM x BN output tile, streaming its A row
// panel (BM x K) and B column panel (K x BN). Same structure as the FA3 model: LLC demand per
// CTA, compulsory DRAM traffic, and a wave model where the CTAs of one wave share panels and
// waves share them only while a wave's panels fit the effective LLC.
#include <algorithm>

#include "analytical/floor_sum.h"
#include "analytical/model.h"
#include "analytical/roofline.h"

namespace simfa::analytical {

namespace {

/// The operand panels the CTAs [a, b) of the launch order use.
struct WavePanels {
  std::int64_t rows = 0;   ///< distinct tile rows: A panels
  std::int64_t cols = 0;   ///< distinct tile columns: B panels
  bool last_row = false;   ///< holds the last, possibly partial, tile row
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

}  // namespace

AnalyticalResult analyze_gemm(const AnalyticalGpu& gpu, const GemmShape& s) {
  AnalyticalResult r;
  r.kind = WorkloadKind::gemm;
  const double M = static_cast<double>(s.m), N = static_cast<double>(s.n), K = static_cast<double>(s.k);
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

  // Wave model: every wave of P consecutive CTAs fetches each distinct panel it uses once.
  const std::int64_t P = gpu.sm_count;
  const std::int64_t g = s.raster == Raster::grouped ? kGroupedRasterRows : 1;
  r.ctas = m_t * n_t;
  r.ctas_per_wave = std::min(P, r.ctas);
  r.waves = ceil_div(r.ctas, P);
  r.gemm.tiles_m = m_t;
  r.gemm.tiles_n = n_t;
  const double a_panel = static_cast<double>(s.block_m) * K * e;
  const double b_panel = static_cast<double>(s.block_n) * K * e;
  const double a_clip = static_cast<double>(m_t * s.block_m - s.m) * K * e;
  const double b_clip = static_cast<double>(n_t * s.block_n - s.n) * K * e;
  std::int64_t panel_fetches = 0;
  for (std::int64_t a = 0; a < r.ctas; a += P) {
    const WavePanels p = wave_panels(a, std::min(a + P, r.ctas), m_t, n_t, g);
    const double a_bytes = static_cast<double>(p.rows) * a_panel - (p.last_row ? a_clip : 0);
    const double b_bytes = static_cast<double>(p.cols) * b_panel - (p.last_col ? b_clip : 0);
    if (a == 0) {
      r.gemm.wave_a_panels = p.rows;
      r.gemm.wave_b_panels = p.cols;
      r.working_set_operand_bytes = a_bytes + b_bytes;
    }
    r.gemm.a_wave_read_bytes += a_bytes;
    r.gemm.b_wave_read_bytes += b_bytes;
    panel_fetches += p.rows + p.cols;
  }
  r.wave_factor = static_cast<double>(panel_fetches) / static_cast<double>(m_t + n_t);
  r.dram_wave_read_bytes = r.gemm.a_wave_read_bytes + r.gemm.b_wave_read_bytes;

  // A panel used by one wave and the next is found again only if the wave's panels and the C
  // tiles it writes fit the effective LLC (the same stack-distance argument as FA3's K/V).
  r.working_set_tile_bytes = static_cast<double>(r.ctas_per_wave) *
                             static_cast<double>(s.block_m * s.block_n) * ce;
  r.working_set_bytes = r.working_set_operand_bytes + r.working_set_tile_bytes;
  r.effective_llc_bytes = gpu.effective_llc_bytes();
  r.regime = r.working_set_bytes <= r.effective_llc_bytes ? Regime::ideal : Regime::realistic;
  r.dram_read_bytes = r.regime == Regime::ideal ? r.dram_ideal_read_bytes : r.dram_wave_read_bytes;
  r.dram_write_bytes = r.dram_ideal_write_bytes;

  // GenZ's GEMM operator: A, B and C cross DRAM once.
  r.genz_flops = r.flops;
  r.genz_dram_bytes = r.dram_ideal_read_bytes + r.dram_ideal_write_bytes;

  // Hopper's tensor cores run FP8 at twice the FP16 rate (H100 datasheet: 1979 vs 989 dense TFLOPS).
  apply_roofline(r, gpu, gpu.peak_flops() * (s.dtype == GemmDtype::fp8 ? 2 : 1));
  return r;
}

}  // namespace simfa::analytical
