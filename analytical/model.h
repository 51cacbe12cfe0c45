// SimFA's analytical model (the paper's section III, validated in section VIII): FLOPs, LLC
// traffic at thread-block level, ideal and wave-model DRAM traffic, the share of re-used operands
// that survives in the effective LLC from one wave to the next (issue 18: a continuous curve in
// place of the paper's ideal/realistic switch), the ideal-cache (GenZ-style) baseline and a
// roofline time bound. Every quantity is closed-form arithmetic on the shape (GEMM: one step per
// wave); nothing allocates, so sweeps evaluate millions of design points per second.
// docs/analytical.md derives each formula.
#pragma once

#include <cstdint>
#include <string_view>

#include "analytical/gpu.h"
#include "analytical/workload.h"

namespace simfa::analytical {

/// Where the launch lies against the effective LLC (section VIII-B2), by the survival of what waves
/// re-use.
enum class Regime : std::uint8_t {
  ideal,      ///< everything re-used survives: every tensor crosses DRAM once
  partial,    ///< part of it survives: the traffic lies between the ideal and the wave model
  realistic,  ///< nothing survives: every wave fetches again what it re-uses (the wave model)
};
enum class Bound : std::uint8_t { compute, llc, dram };

std::string_view regime_name(Regime regime);
std::string_view bound_name(Bound bound);

struct Fa3Detail {
  std::int64_t kv_heads_total = 0;     ///< batch x kv_heads: K/V tensors of one head each
  std::int64_t ctas_per_kv_head = 0;   ///< (heads / kv_heads) x Q tiles, launched consecutively
  std::int64_t kv_heads_per_wave = 0;  ///< K/V heads the first wave streams
  double kv_head_bytes = 0;            ///< K and V of one KV head
  double kv_fetches = 0;               ///< sum over KV heads of the waves that touch it
  double causal_kv_fraction = 1;       ///< share of K/V rows the CTAs stream (1 without mask)
};

struct GemmDetail {
  std::int64_t tiles_m = 0;
  std::int64_t tiles_n = 0;
  std::int64_t ctas_per_sm = 1;    ///< residency by shared memory (1 when the GPU's is unknown)
  std::int64_t smem_bytes = 0;     ///< shared memory of one CTA: the stages' A and B tiles, or C
  std::int64_t wave_a_panels = 0;  ///< distinct A row panels in the first wave
  std::int64_t wave_b_panels = 0;  ///< distinct B column panels in the first wave
  double a_bytes = 0;              ///< A, once
  double b_bytes = 0;              ///< B, once
  double a_wave_read_bytes = 0;    ///< A bytes fetched when every wave fetches its own panels
  double b_wave_read_bytes = 0;
  /// DRAM reads if the CTAs of a wave drift fully out of step (each starts 1/P' of a CTA's time
  /// after the previous): a B panel is then re-used only across the whole of B (row-major) and
  /// the wave sharing the lockstep model counts is gone. An upper bound, not the prediction.
  double staggered_read_bytes = 0;
  /// DRAM reads of the lockstep wave model (every CTA of a wave in step), before the drift.
  double lockstep_read_bytes = 0;
  /// Share of a k-step whose pace the memory system sets: 1 - the tile's MMA time per k-step /
  /// the time its TMA bytes per k-step take at the L2's rate per SM (0 when the MMA is longer).
  double memory_paced_share = 0;
  /// Share of the way from the lockstep reads to staggered_read_bytes that the CTAs' drift out
  /// of step takes, averaged over the CTAs (gemm_model.cpp: out_of_step_share); 0 for one wave.
  double out_of_step_share = 0;
  /// The DRAM's load at dram_read_bytes: their time at dram_bandwidth against the time the
  /// launch's k-steps take at their pace (the tensor core's or the L2's); above 1 the DRAM sets it.
  double dram_load = 0;
};

struct AnalyticalResult {
  WorkloadKind kind = WorkloadKind::fa3;

  // Computation (III-B).
  double flops = 0;      ///< useful FLOPs: 2 per multiply-add of Q.K^T and P.V (of A.B)
  double mma_flops = 0;  ///< FLOPs the tensor cores execute: whole tiles, padding and masked parts included

  // LLC demand at thread-block level (III-C): every byte a CTA requests from the L2.
  double llc_read_bytes = 0;
  double llc_write_bytes = 0;

  // Ideal cache (III-D): every tensor crosses DRAM exactly once.
  double dram_ideal_read_bytes = 0;
  double dram_ideal_write_bytes = 0;

  // Wave model (III-E): reuse only among the CTAs of one wave.
  double dram_wave_read_bytes = 0;
  std::int64_t ctas = 0;
  std::int64_t ctas_per_wave = 0;  ///< sm_count x CTAs per SM (FA3: one per SM)
  std::int64_t waves = 0;
  double wave_factor = 0;  ///< FA3: waves that touch a KV head; GEMM: waves that touch an operand panel (averages)

  // Survival across waves (VIII-B2, issue 18): what one wave re-uses of the previous one survives
  // in the effective LLC by its LRU stack distance (analytical/llc_survival.h).
  double working_set_bytes = 0;          ///< what must survive in the LLC from one wave to the next
  double working_set_operand_bytes = 0;  ///< its reusable part: K/V of the wave's heads, A/B panels
  double working_set_tile_bytes = 0;     ///< its streaming part: Q and O tiles, C tiles of one wave
  double effective_llc_bytes = 0;
  /// The re-used bytes' LRU stack distance from one wave's read to the next one's, averaged over
  /// the reuses (FA3: of a KV head inside one wave; GEMM: the first two waves).
  double reuse_distance_bytes = 0;
  /// Share of what waves re-fetch in the wave model that is found in the LLC instead:
  /// (wave - SimFA) / (wave - ideal); 1 when no operand is re-used across waves.
  double reuse_survival = 1;
  Regime regime = Regime::ideal;
  double dram_read_bytes =
      0;  ///< SimFA's prediction: ideal reads plus the re-fetches that do not survive
  double dram_write_bytes = 0;

  // Ideal-cache baseline as GenZ computes it: operand sizes, no mask, no LLC level.
  double genz_flops = 0;
  double genz_dram_bytes = 0;
  double genz_time_s = 0;
  Bound genz_bound = Bound::compute;

  // Roofline time bound.
  double peak_flops = 0;  ///< of this workload's data type
  double time_compute_s = 0;
  double time_llc_s = 0;  ///< 0 when the L2 bandwidth is unknown
  double time_dram_s = 0;
  double time_s = 0;
  Bound bound = Bound::compute;

  Fa3Detail fa3;
  GemmDetail gemm;

  double llc_bytes() const { return llc_read_bytes + llc_write_bytes; }
  double dram_ideal_bytes() const { return dram_ideal_read_bytes + dram_ideal_write_bytes; }
  double dram_wave_bytes() const { return dram_wave_read_bytes + dram_ideal_write_bytes; }
  double dram_bytes() const { return dram_read_bytes + dram_write_bytes; }

  // Traffic ratios (III-F).
  /// Reuse the LLC must deliver for the ideal-cache DRAM traffic to hold.
  double llc_to_dram_ideal() const { return llc_bytes() / dram_ideal_bytes(); }
  /// Reuse the LLC delivers under SimFA's prediction (1 / miss ratio).
  double llc_to_dram() const { return llc_bytes() / dram_bytes(); }
  /// How far the prediction lies above the compulsory traffic.
  double dram_to_ideal() const { return dram_bytes() / dram_ideal_bytes(); }
  double flops_per_dram_byte() const { return flops / dram_bytes(); }
  double flops_per_llc_byte() const { return flops / llc_bytes(); }
};

/// Evaluates a workload on a GPU. The GPU must be valid (validate()).
AnalyticalResult analyze(const AnalyticalGpu& gpu, const Workload& workload);
AnalyticalResult analyze_fa3(const AnalyticalGpu& gpu, const Fa3Shape& shape);
AnalyticalResult analyze_gemm(const AnalyticalGpu& gpu, const GemmShape& shape);

}  // namespace simfa::analytical
