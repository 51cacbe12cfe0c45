// Kernel-configuration ranking without running (issue 12, DESIGN.md §14): the config space of
// Triton's TMA GEMM (the kernel of validation/h200: A row-major, B stored N x K, host-side TMA
// descriptors, one output tile per program, row-major raster), which configs Triton accepts,
// the second seed's hardware-aware features (its section 3) and the rankers that order the
// valid configs for one problem. docs/ranking.md derives every formula; the constants' sources
// are beside them in RankConstants.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "analytical/gpu.h"

namespace simfa::ranking {

/// What the ranking reads of the GPU: the analytical model's view of the manifest's [gpu]
/// table (l2_partitions: the capacity panels can count on is l2_bytes / l2_partitions) and the
/// residency limits.
struct RankGpu : analytical::AnalyticalGpu {
  std::int64_t smem_per_sm_bytes = 0;
  std::int64_t regs_per_sm = 0;
  int max_ctas_per_sm = 0;
  int max_warpgroups_per_sm = 0;  ///< threads per SM / 128
};

struct GemmProblem {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
};

/// One point of the space: Triton's BLOCK_M, BLOCK_N, BLOCK_K, num_stages, num_warps.
struct TritonGemmConfig {
  int block_m = 128;
  int block_n = 128;
  int block_k = 64;
  int stages = 3;
  int warps = 4;
  /// "bm128_bn128_bk64_s3_w4", the names of validation/h200/rank/.
  std::string name() const;
  bool operator==(const TritonGemmConfig&) const = default;
};

/// BLOCK_M, BLOCK_N in {64, 128, 256}, BLOCK_K in {32, 64, 128}, stages 2-5, warps 4 and 8:
/// 216 configs, in the order of validation/h200/rank/rank_compile.csv.
std::vector<TritonGemmConfig> triton_gemm_space();

/// Bytes per fp16 element of A, B and C.
inline constexpr std::int64_t kElementBytes = 2;
/// Shared memory the CUDA runtime reserves per CTA (CUDA C++ Programming Guide, "Shared
/// Memory", compute capability 9.0): the opt-in per-block limit is smem_per_sm - 1 KiB =
/// 232448 B, the "Hardware limit" of every rejection in validation/h200/rank/rank_compile.csv.
inline constexpr std::int64_t kReservedSmemPerCta = 1024;
/// One mbarrier per stage (8 B each), as Triton allocates them.
inline constexpr std::int64_t kMbarrierBytes = 8;
/// Registers per thread beyond the accumulators: 154 - 128, 90 - 64 and 42 - 16 in every
/// spill-free config of validation/h200/rank/rank_compile.csv.
inline constexpr std::uint32_t kBaseRegisters = 26;
/// The most registers a thread can hold (sm_90).
inline constexpr std::uint32_t kMaxRegisters = 255;

/// Which of Triton's decisions a config meets.
struct Validity {
  /// max(stages x (BM + BN) x BK x 2 + 8 x stages, BM x BN x 2): the stages' A and B tiles and
  /// mbarriers; the epilogue's C tile reuses their space and counts only when larger. Exactly
  /// the shared memory of all 216 configs in rank_compile.csv, compiled or rejected.
  std::int64_t smem_bytes = 0;
  std::int64_t smem_limit = 0;  ///< smem_per_sm - kReservedSmemPerCta
  /// BM x BN / (32 x warps) fp32 accumulators per thread.
  std::uint32_t accumulator_registers = 0;
  /// min(255, accumulators + kBaseRegisters).
  std::uint32_t registers = 0;
  /// accumulators + kBaseRegisters > 255: Triton compiles it but spills (128 to 692 registers
  /// in rank_compile.csv; the slowest configs of every measured shape).
  bool spill_risk = false;
  /// Triton rejects the config (OutOfResources) iff smem_bytes > smem_limit.
  bool valid = false;
  std::string reason;  ///< why not, when !valid
};
Validity triton_validity(const TritonGemmConfig& config, const RankGpu& gpu);

/// The constants of the features' time model. Each is a microbenchmark of validation/h200 or,
/// where marked fitted, chosen on validation/h200/rank/ and judged leave-one-shape-out by
/// tools/rank_eval.py (docs/ranking.md §4).
struct RankConstants {
  /// L2 -> SM bytes per cycle of one SM: one CTA of 128x128x64 moves 32 KiB per 513-cycle
  /// k-tile in wgmma_rate.csv (64 B/cycle at least).
  double sm_l2_bytes_per_cycle = 64;
  /// The whole L2's bandwidth (fitted; wgmma_rate.csv's 132 CTAs moved 13.4 TB/s of L2-hits).
  double l2_bandwidth = 16e12;
  /// TMA load latency, cycles: a 128-byte bulk copy that hits the L2 (383.8) and one from DRAM
  /// (799.0), tma_chase.csv at 1 MiB warm and cold.
  double tma_l2_latency = 384;
  double tma_dram_latency = 800;
  /// The least cycles one k-tile iteration of Triton's loop takes (fitted; 64x128x64 ran 329
  /// cycles a k-tile alone in wgmma_rate.csv, for 256 of WGMMA).
  double min_k_tile_cycles = 250;
  /// Cycles each resident CTA adds to every k-tile for its barrier wait, TMA issue and WGMMA
  /// wait (fitted).
  double k_tile_issue_cycles = 40;
  /// WGMMA efficiency of two WarpGroups sharing a tile: 1024 ideal against 1325 measured cycles
  /// a k-tile for 128x256x64 with 8 warps (wgmma_rate.csv).
  double two_warpgroup_efficiency = 0.77;
  /// The exponent of the smooth maximum that combines the bounds (fitted): p = 3 charges two
  /// equal bounds 26% more than one.
  double bound_exponent = 3;
  /// k-tile time factor for a config that spills its accumulators (not fitted: spilling
  /// configs measured 2-20x slower; any factor above 2 orders them last).
  double spill_factor = 4;
  /// Share of the DRAM bandwidth a GEMM's loads reach (not fitted).
  double dram_efficiency = 0.9;
};

/// The second seed's features (section 3) for one problem and config; docs/ranking.md §2.
struct GemmFeatures {
  // Work decomposition and waves (3.2.2).
  std::int64_t tiles_m = 0, tiles_n = 0, tiles = 0;
  double edge_waste = 0;  ///< share of the tiles' area outside C
  std::int64_t k_tiles = 0;
  int residency = 0;  ///< CTAs per SM: the least of the four limits below
  int residency_smem = 0;
  int residency_regs = 0;
  int residency_threads = 0;
  double waves = 0;            ///< tiles / (SMs x residency)
  double wave_efficiency = 0;  ///< tiles / (ceil(waves) x SMs x residency)
  std::int64_t active_sms = 0;
  // Memory behaviour (3.2.3).
  std::int64_t bytes_per_stage = 0;  ///< (BM + BN) x BK x 2
  std::int64_t smem_bytes = 0;
  std::uint32_t registers = 0;
  bool spill_risk = false;
  double tile_intensity = 0;    ///< FLOPs per loaded byte of a k-tile: BM BN / (BM + BN)
  double llc_bytes = 0;         ///< every byte the CTAs ask of the L2 (A, B panels; C)
  double dram_bytes = 0;        ///< compulsory, plus the panels re-streamed past the L2
  double restream_factor = 1;   ///< dram_bytes / compulsory
  double l2_miss_fraction = 0;  ///< dram / llc, capped at 1
  // Pipeline balance (3.2.5), cycles per k-tile of one CTA.
  double load_latency_cycles = 0;      ///< a k-tile's TMA latency: hit/miss mix + transfer
  double tma_cycles = 0;               ///< producer: bytes_per_stage / the SM's L2 share
  double wgmma_cycles = 0;             ///< consumer: 2 BM BN BK / the SM's tensor-core rate
  double producer_consumer_ratio = 0;  ///< tma_cycles / wgmma_cycles
  double fill_cycles = 0;              ///< load latency / (stages - 1): what the ring must hide
  double pipeline_fill = 0;            ///< (stages - 1) / k_tiles: the prologue's share of the loop
  double k_tile_cycles = 0;            ///< the model's k-tile period at full residency
  // The time model.
  double compute_us = 0;  ///< the busiest SM's CTAs, round after round
  double dram_us = 0;
  double predicted_us = 0;
  std::string_view bound;  ///< the largest term: "wgmma", "tma", "latency", "issue", "dram"
};

GemmFeatures gemm_features(const GemmProblem& problem, const TritonGemmConfig& config,
                           const RankGpu& gpu, const RankConstants& constants = {});

/// The feature columns of the CSV, after the fixed ones, and their values.
const std::vector<std::string_view>& feature_names();
std::vector<std::string> feature_values(const GemmFeatures& features);

enum class Ranker : std::uint8_t { kFeatures, kSimulate, kHybrid };
std::string_view ranker_name(Ranker ranker);

struct RankedConfig {
  TritonGemmConfig config;
  Validity validity;
  GemmFeatures features;
  double simulated_us = -1;  ///< < 0: not simulated
  double predicted_us = 0;   ///< the ranker's: simulated where it simulated, else the features'
  int rank = 0;              ///< 1 = best
};

/// Simulates one config; returns microseconds, or < 0 when the simulator cannot run it.
using SimulateFn = std::function<double(const GemmProblem&, const TritonGemmConfig&)>;

struct RankOptions {
  /// The features by default: they order the measured H200 spaces better than the simulator
  /// orders their short list (docs/ranking.md §4).
  Ranker ranker = Ranker::kFeatures;
  /// hybrid: the features' best `shortlist` configs go to the simulator.
  int shortlist = 8;
  RankConstants constants;
};

/// Orders the valid configs of the space for `problem`, best first (ties: the space's order).
/// kSimulate and kHybrid need `simulate`; configs it cannot run keep the features' time and
/// follow every simulated one.
std::vector<RankedConfig> rank_gemm(const GemmProblem& problem, const RankGpu& gpu,
                                    const RankOptions& options, const SimulateFn& simulate = {});

/// One line of why: "wgmma-bound, 1.03 waves (97%), 2 CTAs/SM (smem), TMA/WGMMA 0.62, fill 5%".
std::string explain(const RankedConfig& ranked);

}  // namespace simfa::ranking
