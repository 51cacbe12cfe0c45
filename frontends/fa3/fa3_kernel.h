// The FlashAttention-3 forward kernel the fa3 frontends model (the paper's section VI; FA3's
// hopper/ sources): its launch geometry, tile scheduler order, causal KV ranges, TensorMaps,
// resources and the non-MMA work of one tile as bubble cycles. Generator and translator both
// take their structure from here.
#pragma once

#include <cstdint>
#include <vector>

#include "simfa/program.h"
#include "simfa/tensor_map.h"
#include "simfa/types.h"

namespace simfa::fa3 {

/// How work tiles (one Q tile of one head of one batch) reach CTAs.
enum class Fa3Scheduler : std::uint8_t {
  kNone,    ///< one CTA per work tile, in the tile order (the paper's model)
  kStatic,  ///< persistent grid; CTA c takes tiles c, c + grid, ... (StaticPersistentTileScheduler)
  kDynamic,  ///< persistent grid; each next tile to the CTA with the least work so far
};

/// The order in which a scheduler hands out work tiles (Fa3Kernel::tile_of).
enum class Fa3TileOrder : std::uint8_t {
  kFa3,        ///< FA3's: Q tile fastest; under the causal mask heads fastest in L2 sections,
               ///< longest Q tile first (DynamicPersistentTileScheduler)
  kAscending,  ///< Q tile fastest from the first, then head, then batch, causal or not (cuDNN)
};

/// Where a consumer's softmax rescales O and sums its row (softmax kPipes).
enum class Fa3ORescale : std::uint8_t {
  kAfterPv,  ///< FA3's softmax.hpp: row sum and P's conversion after the exp2s, O x scale after
             ///< the next P V (rescale_o)
  kWithExp,  ///< cuDNN's SASS: O x scale, the row sum and P's conversion interleaved with the
             ///< exp2s, one phase before P V, every KV step
};

/// How the softmax of a tile is charged.
enum class Fa3Softmax : std::uint8_t {
  kBubble,  ///< one private BUBBLE from the throughputs (the paper's section VI-B)
  kPipes,   ///< phases of compute BUBBLEs on the SM's shared pipes (docs/calibration.md §12)
};

/// What the consumers' ping-pong (the named turn barriers) orders.
enum class Fa3Turn : std::uint8_t {
  kGemms,  ///< FA3's warp_scheduler_barrier: S of one tile and P V of the previous one
  kExp2,   ///< cuDNN's SASS: the softmax's exp2s (BAR.SYNC before them, BAR.ARV after)
};

struct Fa3Shape {
  std::int64_t batch = 1;
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;
  std::int64_t seqlen_q = 0;
  std::int64_t seqlen_k = 0;
  std::int64_t head_dim = 128;
  std::int64_t block_m = 128;  ///< Q rows per CTA: 64 per consumer WarpGroup
  std::int64_t block_n = 176;  ///< K/V rows per pipeline step
  std::int64_t stages = 2;     ///< slots of the K ring and of the V ring
  bool causal = false;         ///< bottom-right aligned mask, as FA3 applies it
  Fa3Scheduler scheduler = Fa3Scheduler::kNone;
  std::int64_t grid = 0;  ///< persistent CTAs (scheduler kStatic / kDynamic); capped at the tiles
  Fa3Softmax softmax = Fa3Softmax::kBubble;
  bool intra_wg_overlap = true;    ///< FA3's IntraWGOverlap: softmax of S(n) overlaps P(n+1) V
  bool pingpong = true;            ///< FA3's UseSchedulerBarrier, where FA3 uses it
  Fa3Turn turn = Fa3Turn::kGemms;  ///< what a consumer's turn holds (kExp2: kPipes only)
  std::int64_t mask_ops = 0;       ///< ALU ops per score of a tile the mask cuts (diagonal tiles)
  std::int64_t scale_ops = 1;      ///< FP32 ops per score for S x scale - max (FFMA 1, FMUL+FADD 2)
  double reduce_cycles_per_element = 10;   ///< row-max latency per element a thread combines
  std::int64_t producer_issue_cycles = 0;  ///< BUBBLE after each producer TMA load
  std::int64_t first_wave_bubble = 0;      ///< BUBBLE first in every WarpGroup of a first-wave CTA
  Fa3TileOrder tile_order = Fa3TileOrder::kFa3;
  Fa3ORescale o_rescale = Fa3ORescale::kAfterPv;
  double exp_step_per_cycle = 0;  ///< scores a cycle one consumer's exp2 step reaches; 0: no floor
  bool sass_counts = false;       ///< charge the work cuDNN's SASS executes (kernel cudnn)
  /// A persistent CTA's tile hand-off through named barriers: the consumers meet the producer at
  /// each tile's end for the next tile's index, and each other after Q's wait (kernel cudnn).
  bool tile_barrier = false;
  /// A persistent CTA's first tile index from the atomic counter: the producer's BUBBLE before
  /// its first load (kernel cudnn).
  std::int64_t first_index_cycles = 0;
  std::int64_t q_stages = 1;  ///< slots of the Q ring (persistent grids: the next tile's Q)
  bool o_buffer = false;      ///< O staged in a buffer of its own, not the mainloop's space
  /// Each tile's code of a consumer besides its waits and GEMMs (kernel cudnn, its SASS): before
  /// Q's wait (the accumulators zeroed, the tile index decoded) a BUBBLE, and the epilogue's
  /// latency floor (kPipes).
  std::int64_t tile_start_cycles = 0;
  std::int64_t epilogue_cycles = 0;
};

/// Per-SM-per-cycle throughputs of the units the softmax runs on. Defaults: the paper's
/// section VI-B estimate for H800.
struct Fa3Throughputs {
  std::int64_t exp2 = 16;   ///< MUFU.EX2 results (16 per SM per cycle on Hopper)
  std::int64_t fp32 = 128;  ///< FP32 compares, adds, multiply-adds (4 x 32 threads of a WG)
  std::int64_t cvt = 256;   ///< FP32 -> FP16 conversions (packed, two per instruction)
};

/// Rows of one consumer WarpGroup: one m64 WGMMA instruction (T_M of the paper).
inline constexpr std::int64_t kRowsPerConsumer = 64;
/// K of one 16-bit WGMMA instruction (m64nNk16).
inline constexpr std::int64_t kWgmmaK = 16;
inline constexpr std::uint32_t kElementBytes = 2;  ///< FP16 / BF16 Q, K, V, O

/// TensorMap ids.
inline constexpr std::uint16_t kMapQ = 0;
inline constexpr std::uint16_t kMapK = 1;
inline constexpr std::uint16_t kMapV = 2;
inline constexpr std::uint16_t kMapO = 3;

class Fa3Kernel {
 public:
  /// `shape` must be valid (read_fa3_config checks it).
  Fa3Kernel(const Fa3Shape& shape, const Fa3Throughputs& throughputs);

  const Fa3Shape& shape() const { return shape_; }
  const Fa3Throughputs& throughputs() const { return throughputs_; }
  /// Q, K, V, O in BSHD layout (innermost first: head_dim, sequence, head, batch).
  const std::vector<TensorMap>& maps() const { return maps_; }

  std::int64_t m_blocks() const { return m_blocks_; }  ///< Q tiles per head
  std::int64_t n_blocks() const { return n_blocks_; }  ///< K/V tiles per KV head
  /// Work tiles: m_blocks x heads x batch.
  std::uint64_t tile_count() const;
  /// CTAs launched: the tiles (scheduler kNone), else min(grid, tiles).
  std::uint64_t cta_count() const;
  bool persistent() const { return shape_.scheduler != Fa3Scheduler::kNone; }

  struct Tile {
    std::int64_t m_block = 0;
    std::int64_t head = 0;
    std::int64_t batch = 0;
  };
  /// Work tile `index` in the order FA3's tile schedulers hand tiles out (docs/workloads.md); with
  /// scheduler kNone it is CTA `index`'s tile.
  Tile tile_of(std::uint64_t index) const;
  /// The work tiles CTA `cta` computes, in order (indices for tile_of).
  void tiles_of_cta(std::uint64_t cta, std::vector<std::uint64_t>& out) const;
  /// Whether consumer `c`'s rows of Q tile `m_block` need the mask on KV tile `n_block`: some
  /// key of it lies right of the causal diagonal, or past seqlen_k.
  bool masked(std::int64_t m_block, std::int64_t n_block, std::uint32_t c) const;
  std::int64_t kv_head(std::int64_t head) const { return head / (shape_.heads / shape_.kv_heads); }
  /// KV tiles [0, n_block_max) the Q tile attends (FA3's BlockMN::get_n_block_min_max).
  std::int64_t n_block_max(std::int64_t m_block) const;
  /// KV steps of the whole grid: n_block_max summed over the work tiles.
  std::uint64_t kv_steps() const;
  /// CTAs whose Q tile attends at least one KV tile (n_block_max > 0): all but, under the causal
  /// mask, the first Q tiles of a seqlen_q beyond seqlen_k.
  std::uint64_t ctas_attending_kv() const;

  /// Consumer WarpGroups: block_m / 64.
  std::uint32_t consumers() const { return consumers_; }
  /// Whether the consumers take turns on the tensor core through named barriers (FA3's
  /// UseSchedulerBarrier: two or three consumers and head_dim <= 128 for 16-bit types; the
  /// `pingpong` key can turn it off).
  bool scheduler_barrier() const {
    return shape_.pingpong && consumers_ >= 2 && shape_.head_dim <= 128;
  }
  /// Named barrier consumer `c` waits on for its turn; it arrives on the next one's.
  static std::uint32_t turn_barrier(std::uint32_t c) { return 1 + c; }
  std::uint32_t next_consumer(std::uint32_t c) const { return (c + 1) % consumers_; }
  /// The tile hand-off's named barriers (shape().tile_barrier, docs/workloads.md): the producer
  /// arrives on tile_full_barrier once it has the next tile's index, the consumers wait on it
  /// after their O store and then arrive on tile_empty_barrier (the index read), which the
  /// producer waits on before it writes the next; the consumers wait on tile_start_barrier
  /// together after Q's wait. Ids past the turn barriers (1 .. consumers).
  static constexpr std::uint32_t tile_full_barrier() { return 5; }
  static constexpr std::uint32_t tile_empty_barrier() { return 6; }
  static constexpr std::uint32_t tile_start_barrier() { return 7; }
  /// Whether this kernel's programs hand tiles over through those barriers: a persistent grid
  /// with tile_barrier on.
  bool tile_barriers() const { return shape_.tile_barrier && persistent(); }

  /// Ring slots: the Q ring (the i-th tile of a CTA in slot i mod q_stages), then the K ring,
  /// then the V ring.
  std::uint8_t q_stage(std::uint64_t i) const;
  std::uint8_t k_stage(std::uint64_t i) const;
  std::uint8_t v_stage(std::uint64_t i) const;
  std::uint32_t stage_count() const {
    return static_cast<std::uint32_t>(shape_.q_stages + 2 * shape_.stages);
  }

  /// WGMMAs of S = Q K^T for one consumer: ceil(64/64) x ceil(block_n/block_n) x
  /// ceil(head_dim/16) m64n{block_n}k16 (8 for head dim 128, the paper's eight).
  std::uint32_t qk_wgmmas() const;
  /// WGMMAs of O += P V: ceil(64/64) x ceil(head_dim/head_dim) x ceil(block_n/16)
  /// m64n{head_dim}k16 (11 for block_n 176).
  std::uint32_t pv_wgmmas() const;

  /// Softmax of one 64 x block_n tile after S is computed (the paper's section VI-B):
  /// rowmax and rowsum (one FP32 op per score each), exp2 (one MUFU op per score), FP32 -> FP16
  /// of P, and the rescale of O (64 x head_dim multiply-adds). 988 cycles for 64 x 176 x 128
  /// with the H800 throughputs.
  std::uint32_t softmax_bubble() const;
  /// Epilogue of one consumer: O / rowsum (64 x head_dim FP32 multiplies) and FP32 -> FP16.
  std::uint32_t epilogue_bubble() const;

  /// Softmax kPipes: the phases of one consumer's online softmax of a 64 x block_n tile after S
  /// is complete, each a compute BUBBLE (docs/workloads.md): the mask (masked tiles only), the
  /// row max, S x scale - max with exp2, the row sum with P to FP16.
  struct Phase {
    std::uint32_t latency = 0;
    ComputeWork work;
    bool exp2 = false;  ///< the exp2 phase: a consumer's turn with Fa3Turn::kExp2
  };
  std::vector<Phase> softmax_phases(bool masked) const;
  /// Integer work a consumer issues with a GEMM (descriptors, mbarrier phases, the loop's
  /// counters), beside the GEMM's execution; op_counts = cudnn only (empty work otherwise).
  Phase gemm_issue_phase(bool qk) const;
  /// O x scores_scale after P V (FA3's rescale_o), kPipes.
  Phase rescale_phase() const;
  /// O / rowsum and its conversion, kPipes.
  Phase epilogue_phase() const;

  /// q_stages x Q tile + stages x (K tile + V tile), and an O tile with o_buffer; without it O
  /// is staged in the mainloop's space (FA3's union of mainloop and epilogue shared storage).
  std::int64_t smem_bytes() const;
  /// setmaxnreg values of FA3 (flash_fwd_kernel_sm90.h, Load/MmaRegisterRequirement) for 1, 2
  /// or 3 consumers.
  std::uint32_t producer_registers_per_thread() const;
  std::uint32_t consumer_registers_per_thread() const;

 private:
  Fa3Shape shape_;
  Fa3Throughputs throughputs_;
  std::vector<TensorMap> maps_;
  std::int64_t m_blocks_ = 0;
  std::int64_t n_blocks_ = 0;
  std::uint32_t consumers_ = 0;
  std::int64_t l2_swizzle_ = 1;  ///< causal: (head, batch) pairs per L2 section
  /// kDynamic: CTA c's tiles are cta_tiles_[cta_begin_[c] .. cta_begin_[c + 1]).
  std::vector<std::uint64_t> cta_begin_;
  std::vector<std::uint64_t> cta_tiles_;
};

}  // namespace simfa::fa3
