// The TMA + WGMMA GEMM of the paper's section V-B as per-CTA programs: C = A x B with one CTA
// per block_m x block_n tile of C, a `stages`-deep ring of A and B k-tiles, and real global
// addresses (section V-C), so CTAs that share an A row-block or a B column-block load the same
// lines. Without warp specialization the program is the one Triton's TMA matmul runs, as the
// static TTGIR route lowers it (tests/frontends/gemm_ttgir_equivalence_test.cpp compares them);
// docs/workloads.md describes the programs instruction by instruction.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "simfa/program.h"
#include "simfa/program_builder.h"
#include "simfa/tensor_map.h"
#include "simfa/types.h"

namespace simfa::gemm {

enum class Raster : std::uint8_t {
  kRowMajor,  ///< CTA i computes tile (i / tiles_n, i % tiles_n)
  kGrouped,   ///< Triton's grouped order: group_m tile rows, column by column inside a group
};
/// Tile rows per group of the grouped raster by default: GROUP_SIZE_M = 8 of Triton's matmul
/// tutorial (python/tutorials/03-matrix-multiplication.py).
inline constexpr std::int64_t kDefaultGroupRows = 8;

enum class Dtype : std::uint8_t { kFp16, kBf16, kFp8 };
/// Bytes per A and B element.
std::uint32_t element_bytes(Dtype dtype);
/// K of one WGMMA instruction (m64nNk16 for 16-bit types, m64nNk32 for 8-bit ones; PTX ISA,
/// "wgmma.mma_async" shapes).
std::uint32_t wgmma_k(Dtype dtype);
/// Bytes per C element: FP16/BF16 out, FP16 also for FP8 inputs (as the analytical model).
inline constexpr std::uint32_t kOutputBytes = 2;
/// Bytes per accumulator element: FP32, whatever the inputs.
inline constexpr std::uint32_t kAccumulatorBytes = 4;

/// How B is stored: N x K (K contiguous, "nk": what WGMMA reads without a transpose, and the
/// only layout 8-bit WGMMA accepts) or K x N (N contiguous, "kn").
enum class BLayout : std::uint8_t { kNK, kKN };

/// One WGMMA instruction covers 64 rows (m64nNk).
inline constexpr std::int64_t kWgmmaM = 64;
/// A warp of the MMA layout covers 16 rows (Triton's nvidia_mma v3 instrShape [16, n, k]); a
/// WarpGroup is kWarpsPerWarpGroup of them (simfa/isa.h).
inline constexpr std::int64_t kRowsPerWarp = 16;

/// Triton's split of a non-warp-specialized kernel's warps over the accumulator tile
/// (warpsPerTileV3, lib/Dialect/TritonGPU/Transforms/AccelerateMatmul.cpp): from [4, 1], double
/// the warps along M while block_m exceeds 16 rows a warp, else along N, until all are placed.
/// 8 warps give [8, 1] (two WarpGroups of block_m / 2 rows) for block_m >= 128 and [4, 2] (two
/// WarpGroups of 64 rows and block_n / 2 columns each) for block_m = 64; the TTGIRs Triton
/// dumped on the H200 (validation/h200/rank/ttgir.tgz) show both.
struct WarpsPerCta {
  std::int64_t m = 4;
  std::int64_t n = 1;
};
WarpsPerCta triton_warps_per_cta(std::int64_t block_m, std::int64_t warps);

struct GemmShape {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  std::int64_t block_m = 128;
  std::int64_t block_n = 128;
  std::int64_t block_k = 64;
  std::int64_t stages = 3;
  bool warp_specialized = false;
  /// Warps of the non-warp-specialized kernel (Triton's num_warps): warps / 4 WarpGroups.
  std::int64_t warps = 4;
  Raster raster = Raster::kRowMajor;
  std::int64_t group_m = kDefaultGroupRows;  ///< tile rows per group of the grouped raster
  Dtype dtype = Dtype::kFp16;
  BLayout b_layout = BLayout::kNK;
  Addr a_base = 0;  ///< global byte addresses of the tensors (multiples of 16)
  Addr b_base = 0;
  Addr c_base = 0;
  std::uint32_t prologue_bubble = 0;       ///< cycles at the start of every WarpGroup
  std::uint32_t per_iteration_bubble = 0;  ///< cycles at the start of every k-tile iteration
  /// Triton's kernel: cycles every WarpGroup waits at each of its `stages` mbarrier inits
  std::uint32_t mbarrier_init_cycles = 0;
  /// Triton's kernel: the rate at which the C store's wait drains the tile (0: free)
  double tma_store_wait_bytes_per_cycle = 0;
  /// auto, true or false: whether each WGMMA is a group of its own, waited for before the next
  /// (ptxas's serialization, simfa/wgmma_codegen.h).
  std::string wgmma_serialization = "auto";
};

/// Registers per thread beyond the accumulators: CUTLASS's producer WarpGroup keeps 40
/// (LoadRegisterRequirement of sm90_gemm_tma_warpspecialized_cooperative.hpp), the floor for
/// addressing, loop state and descriptors.
inline constexpr std::uint32_t kBaseRegistersPerThread = 40;
/// Registers per thread of a warp-specialized consumer WarpGroup: CUTLASS's setmaxnreg value
/// (MmaRegisterRequirement = 232, same file).
inline constexpr std::uint32_t kConsumerRegistersPerThread = 232;
/// Bytes of one mbarrier: Triton allocates one per stage in shared memory (3 x 8 of the 98328
/// bytes Triton reported for its 128x128x64, 3-stage GEMM on the H200; docs/ttgir.md §4).
inline constexpr std::int64_t kMbarrierBytes = 8;
/// ALU work of the epilogue per accumulator element, as the TTGIR route prices Triton's
/// arith.truncf (0.5: one F2FP packs two) and the ttg.local_alloc that writes C to shared memory
/// for its TMA store (1) (docs/ttgir.md §4): one compute BUBBLE.
inline constexpr double kEpilogueAluPerElement = 1.5;

class GemmKernel {
 public:
  /// `shape` must be valid (GemmSource checks every key against docs/workloads.md's limits).
  explicit GemmKernel(const GemmShape& shape);

  const GemmShape& shape() const { return shape_; }
  /// A (id 0), B (id 1), C (id 2): the full tensors, box = one tile.
  const std::vector<TensorMap>& maps() const { return maps_; }
  std::int64_t tiles_m() const { return tiles_m_; }
  std::int64_t tiles_n() const { return tiles_n_; }
  std::int64_t k_tiles() const { return k_tiles_; }
  std::uint64_t cta_count() const { return static_cast<std::uint64_t>(tiles_m_ * tiles_n_); }

  struct Tile {
    std::int64_t m = 0;  ///< pid_m: tile row
    std::int64_t n = 0;  ///< pid_n: tile column
  };
  /// The tile CTA `cta` computes, in the raster order.
  Tile tile_of(std::uint64_t cta) const;

  /// WarpGroups that issue WGMMAs: warps / 4 without warp specialization, each owning
  /// rows_per_consumer() x cols_per_consumer() of the tile (triton_warps_per_cta); with it 2
  /// when block_m is a multiple of 128 (CUTLASS's cooperative kernel: each consumer owns half
  /// the rows), else 1.
  std::uint32_t consumers() const { return consumers_; }
  std::int64_t rows_per_consumer() const { return rows_per_consumer_; }
  std::int64_t cols_per_consumer() const { return cols_per_consumer_; }
  /// WGMMAs per k-tile of one consumer: (rows / 64) x 1 x (block_k / wgmma_k); N = the
  /// consumer's columns in one instruction since they are <= 256.
  std::uint32_t wgmmas_per_k_tile() const { return wgmmas_per_k_tile_; }
  /// Without warp specialization Triton's allocation: stages x (A tile + B tile) and the stages'
  /// mbarriers, whose space the C tile reuses for its TMA store once the K loop is done; with
  /// it stages x (A tile + B tile) plus a C tile of its own (CUTLASS's epilogue buffer).
  std::int64_t smem_bytes() const { return smem_bytes_; }
  /// Accumulator registers per thread of one consumer: rows x columns fp32 over 128 threads.
  std::uint32_t accumulator_registers() const { return accumulator_registers_; }
  /// The compute work of each consumer converting its accumulators and writing them to shared
  /// memory before the store: kEpilogueAluPerElement x rows x columns ALU elements.
  const ComputeWork& epilogue_work() const { return epilogue_work_; }
  /// Whether each WGMMA waits for the one before it: `wgmma_serialization`, whose auto is
  /// ptxas's rule on the consumer's instruction in Triton's kernel and false in CUTLASS's, whose
  /// consumers raise their registers with setmaxnreg.
  bool serialized_wgmma() const { return serialized_wgmma_; }

  void build(std::uint64_t cta, CtaProgram& out) const;

 private:
  class Stream;
  /// k-tile k's copies of A and B (`issue` false: a predicated-off copy, only its barriers).
  void load_k_tile(std::int64_t k, const Tile& tile, bool acquire, bool issue, Stream& code) const;
  void multiply_k_tile(std::int64_t k, Stream& code) const;
  void build_pipelined(const Tile& tile, CtaProgramBuilder& out) const;
  void build_warp_specialized(const Tile& tile, CtaProgramBuilder& out) const;

  GemmShape shape_;
  std::vector<TensorMap> maps_;
  std::int64_t tiles_m_ = 0;
  std::int64_t tiles_n_ = 0;
  std::int64_t k_tiles_ = 0;
  std::uint32_t consumers_ = 1;
  bool serialized_wgmma_ = false;
  std::int64_t rows_per_consumer_ = 0;
  std::int64_t cols_per_consumer_ = 0;
  std::uint32_t wgmmas_per_k_tile_ = 0;
  std::int64_t smem_bytes_ = 0;
  std::uint32_t accumulator_registers_ = 0;
  ComputeWork epilogue_work_;  ///< one WarpGroup's
};

}  // namespace simfa::gemm
