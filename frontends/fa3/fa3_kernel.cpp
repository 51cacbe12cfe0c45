#include "fa3_kernel.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <queue>
#include <utility>

#include "simfa/int_math.h"
#include "simfa/program_builder.h"

namespace simfa::fa3 {

namespace {

/// K and V bytes FA3's L2 swizzle budgets for (hopper/tile_scheduler.hpp: "32 MB for K & V").
constexpr std::int64_t kL2SwizzleBytes = std::int64_t{32} << 20;

struct Registers {
  std::uint32_t producer;
  std::uint32_t consumer;
};
// FA3's flash_fwd_kernel_sm90.h: Load/MmaRegisterRequirement for 1, 2, 3 consumer WarpGroups
// (TMA loads of K and V).
constexpr Registers kRegisters[] = {{56, 256}, {24, 240}, {32, 160}};

}  // namespace

Fa3Kernel::Fa3Kernel(const Fa3Shape& shape, const Fa3Throughputs& throughputs)
    : shape_(shape), throughputs_(throughputs) {
  const Fa3Shape& s = shape_;
  m_blocks_ = ceil_div(s.seqlen_q, s.block_m);
  n_blocks_ = ceil_div(s.seqlen_k, s.block_n);
  consumers_ = static_cast<std::uint32_t>(s.block_m / kRowsPerConsumer);

  Addr next = kFirstTensorBase;
  auto bshd = [&](const char* name, std::int64_t seqlen, std::int64_t heads,
                  std::int64_t box_rows) {
    const auto d = static_cast<std::uint64_t>(s.head_dim);
    const auto row = d * kElementBytes;  // one token of one head
    TensorMap map =
        tensor_map(name, next, kElementBytes,
                   {d, static_cast<std::uint64_t>(seqlen), static_cast<std::uint64_t>(heads),
                    static_cast<std::uint64_t>(s.batch)},
                   {kElementBytes, static_cast<std::uint64_t>(heads) * row, row,
                    static_cast<std::uint64_t>(seqlen * heads) * row},
                   {static_cast<std::uint32_t>(d), static_cast<std::uint32_t>(box_rows), 1, 1});
    const Addr bytes = map.stride[3] * map.shape[3];
    next = next_tensor_base(next, bytes);
    maps_.push_back(std::move(map));
  };
  bshd("Q", s.seqlen_q, s.heads, s.block_m);
  bshd("K", s.seqlen_k, s.kv_heads, s.block_n);
  bshd("V", s.seqlen_k, s.kv_heads, s.block_n);
  bshd("O", s.seqlen_q, s.heads, kRowsPerConsumer);  // each consumer stores its own rows

  // DynamicPersistentTileScheduler::to_underlying_arguments: a section holds as many KV heads as
  // fit kL2SwizzleBytes, rounded up to a power of 2 (cutlass::find_log2), times the query heads
  // per KV head; FA3 sizes one KV head as seqlen_k x (head_dim + head_dim_v) x 2 bytes x 2.
  const std::int64_t one_kv_head = s.seqlen_k * 2 * s.head_dim * kElementBytes * 2;
  const std::int64_t fit = kL2SwizzleBytes / one_kv_head;
  l2_swizzle_ = (kL2SwizzleBytes < one_kv_head
                     ? 1
                     : std::int64_t{1} << std::bit_width(static_cast<std::uint64_t>(fit - 1))) *
                (s.heads / s.kv_heads);

  if (s.scheduler == Fa3Scheduler::kDynamic) {
    // DynamicPersistentTileScheduler: CTA c starts on tile c; then an atomic counter hands the
    // next tile to whichever CTA asks first, i.e. the one that finishes first. Modelled as list
    // scheduling in the tile order: each next tile goes to the CTA with the least work so far
    // (ties: the lower CTA), a tile's work being its KV tiles plus one for its Q load and
    // epilogue.
    const std::uint64_t tiles = tile_count();
    const std::uint64_t ctas = cta_count();
    std::vector<std::vector<std::uint64_t>> per_cta(ctas);
    using Load = std::pair<std::int64_t, std::uint64_t>;  // (work so far, CTA)
    std::priority_queue<Load, std::vector<Load>, std::greater<>> queue;
    for (std::uint64_t t = 0; t < tiles; ++t) {
      const std::int64_t work = n_block_max(tile_of(t).m_block) + 1;
      if (t < ctas) {
        per_cta[t].push_back(t);
        queue.emplace(work, t);
        continue;
      }
      const auto [load, cta] = queue.top();
      queue.pop();
      per_cta[cta].push_back(t);
      queue.emplace(load + work, cta);
    }
    cta_begin_.reserve(ctas + 1);
    cta_tiles_.reserve(tiles);
    for (const auto& list : per_cta) {
      cta_begin_.push_back(cta_tiles_.size());
      cta_tiles_.insert(cta_tiles_.end(), list.begin(), list.end());
    }
    cta_begin_.push_back(cta_tiles_.size());
  }
}

std::uint64_t Fa3Kernel::tile_count() const {
  return static_cast<std::uint64_t>(m_blocks_ * shape_.heads * shape_.batch);
}

std::uint64_t Fa3Kernel::cta_count() const {
  if (!persistent()) return tile_count();
  return std::min(tile_count(), static_cast<std::uint64_t>(std::max<std::int64_t>(1, shape_.grid)));
}

void Fa3Kernel::tiles_of_cta(std::uint64_t cta, std::vector<std::uint64_t>& out) const {
  out.clear();
  switch (shape_.scheduler) {
    case Fa3Scheduler::kNone:
      out.push_back(cta);
      break;
    case Fa3Scheduler::kStatic:
      // StaticPersistentTileScheduler: tile_idx = blockIdx.x, then += gridDim.x.
      for (std::uint64_t t = cta; t < tile_count(); t += cta_count()) out.push_back(t);
      break;
    case Fa3Scheduler::kDynamic:
      out.assign(cta_tiles_.begin() + static_cast<std::ptrdiff_t>(cta_begin_[cta]),
                 cta_tiles_.begin() + static_cast<std::ptrdiff_t>(cta_begin_[cta + 1]));
      break;
  }
}

bool Fa3Kernel::masked(std::int64_t m_block, std::int64_t n_block, std::uint32_t c) const {
  const Fa3Shape& s = shape_;
  const std::int64_t last_key = (n_block + 1) * s.block_n - 1;
  if (last_key >= s.seqlen_k) return true;  // the tile runs past seqlen_k
  if (!s.causal) return false;
  // Bottom-right aligned: query row i sees keys up to i + seqlen_k - seqlen_q; the consumer's
  // first row sees the fewest.
  const std::int64_t first_row = m_block * s.block_m + std::int64_t{c} * kRowsPerConsumer;
  return last_key > first_row + s.seqlen_k - s.seqlen_q;
}

Fa3Kernel::Tile Fa3Kernel::tile_of(std::uint64_t cta) const {
  const auto t = static_cast<std::int64_t>(cta);
  const std::int64_t heads = shape_.heads;
  if (!shape_.causal || shape_.tile_order == Fa3TileOrder::kAscending) {
    // StaticPersistentTileScheduler: Q tile fastest, then head, then batch, so the
    // m_blocks x heads/kv_heads CTAs of one KV head are consecutive. cuDNN's kernel decodes its
    // tile index so with or without the mask (kAscending; docs/workloads.md).
    const std::int64_t hb = t / m_blocks_;
    return {t % m_blocks_, hb % heads, hb / heads};
  }
  // DynamicPersistentTileScheduler: sections of l2_swizzle_ (head, batch) pairs; inside one,
  // heads fastest, then Q tiles from the last (the longest under the causal mask) to the first.
  const std::int64_t hb_count = heads * shape_.batch;
  const std::int64_t section = t / (l2_swizzle_ * m_blocks_);
  const std::int64_t offset = t % (l2_swizzle_ * m_blocks_);
  const std::int64_t width =
      section < hb_count / l2_swizzle_ ? l2_swizzle_ : hb_count % l2_swizzle_;
  const std::int64_t hb = section * l2_swizzle_ + offset % width;
  return {m_blocks_ - 1 - offset / width, hb % heads, hb / heads};
}

std::int64_t Fa3Kernel::n_block_max(std::int64_t m_block) const {
  if (!shape_.causal) return n_blocks_;
  // Bottom-right aligned: query row i sees keys up to i + seqlen_k - seqlen_q.
  const std::int64_t keys = (m_block + 1) * shape_.block_m + shape_.seqlen_k - shape_.seqlen_q;
  return std::min(n_blocks_, ceil_div(std::max<std::int64_t>(0, keys), shape_.block_n));
}

std::uint64_t Fa3Kernel::kv_steps() const {
  std::uint64_t steps = 0;
  for (std::int64_t m = 0; m < m_blocks_; ++m) steps += static_cast<std::uint64_t>(n_block_max(m));
  return steps * static_cast<std::uint64_t>(shape_.heads * shape_.batch);
}

std::uint64_t Fa3Kernel::ctas_attending_kv() const {
  // n_block_max(m) = 0 exactly when (m + 1) block_m + seqlen_k - seqlen_q <= 0.
  const std::int64_t blind =
      shape_.causal ? std::clamp<std::int64_t>((shape_.seqlen_q - shape_.seqlen_k) / shape_.block_m,
                                               0, m_blocks_)
                    : 0;
  return static_cast<std::uint64_t>((m_blocks_ - blind) * shape_.heads * shape_.batch);
}

std::uint8_t Fa3Kernel::q_stage(std::uint64_t i) const {
  return static_cast<std::uint8_t>(i % static_cast<std::uint64_t>(shape_.q_stages));
}

std::uint8_t Fa3Kernel::k_stage(std::uint64_t i) const {
  return static_cast<std::uint8_t>(shape_.q_stages + i % static_cast<std::uint64_t>(shape_.stages));
}

std::uint8_t Fa3Kernel::v_stage(std::uint64_t i) const {
  return static_cast<std::uint8_t>(shape_.q_stages + shape_.stages +
                                   i % static_cast<std::uint64_t>(shape_.stages));
}

std::uint32_t Fa3Kernel::qk_wgmmas() const {
  return static_cast<std::uint32_t>(ceil_div(kRowsPerConsumer, 64) * 1 *
                                    ceil_div(shape_.head_dim, kWgmmaK));
}

std::uint32_t Fa3Kernel::pv_wgmmas() const {
  return static_cast<std::uint32_t>(ceil_div(kRowsPerConsumer, 64) * 1 *
                                    ceil_div(shape_.block_n, kWgmmaK));
}

std::uint32_t Fa3Kernel::softmax_bubble() const {
  const Fa3Throughputs& u = throughputs_;
  const std::int64_t scores = kRowsPerConsumer * shape_.block_n;
  const std::int64_t rowmax = ceil_div(scores, u.fp32);
  const std::int64_t exp = ceil_div(scores, u.exp2);
  const std::int64_t rowsum = ceil_div(scores, u.fp32);
  const std::int64_t convert = ceil_div(scores, u.cvt);
  const std::int64_t rescale = ceil_div(kRowsPerConsumer * shape_.head_dim, u.fp32);
  return static_cast<std::uint32_t>(rowmax + exp + rowsum + convert + rescale);
}

std::uint32_t Fa3Kernel::epilogue_bubble() const {
  const std::int64_t outputs = kRowsPerConsumer * shape_.head_dim;
  return static_cast<std::uint32_t>(ceil_div(outputs, throughputs_.fp32) +
                                    ceil_div(outputs, throughputs_.cvt));
}

// Softmax kPipes. Element counts per consumer (64 x block_n scores, 64 x head_dim of O), one op
// per element as docs/ttgir.md §4's cost table counts them; the SM's pipes give the rates (FP32
// 128, ALU 64, SFU 16 elements an SM cycle: validation/h200/attention/softmax_micro.csv,
// docs/calibration.md §8) and the row max's latency is reduce_cycles_per_element x the block_n / 4
// scores a thread combines in sequence (§8). FA3's softmax.hpp: the row max is reduced across the
// row's 4 threads every step; the row sum stays per thread until the epilogue, so it pays no
// reduction latency.
std::vector<Fa3Kernel::Phase> Fa3Kernel::softmax_phases(bool is_masked) const {
  const auto scores = static_cast<std::uint64_t>(kRowsPerConsumer * shape_.block_n);
  const auto rows = static_cast<std::uint64_t>(kRowsPerConsumer);
  std::vector<Phase> phases;
  if (is_masked && shape_.mask_ops > 0) {
    Phase mask;  // column index against the row's limit, then select -inf (ISETP + FSEL)
    mask.work.alu = static_cast<std::uint64_t>(shape_.mask_ops) * scores;
    phases.push_back(mask);
  }
  const auto threads = std::uint64_t{kThreadsPerWarpGroup};
  Phase max;  // FMNMX over the row, then two shuffles across its 4 threads
  max.latency = static_cast<std::uint32_t>(
      std::ceil(shape_.reduce_cycles_per_element * static_cast<double>(shape_.block_n) / 4));
  max.work.alu = scores;
  Phase exp;  // exp2(S x scale - max x scale): an FFMA (or FMUL and FADD: scale_ops) and a
              // MUFU.EX2 a score; the rescale factor exp2((max_old - max) x scale) one MUFU a row
  exp.work.fp32 = static_cast<std::uint64_t>(shape_.scale_ops) * scores + rows;
  exp.work.sfu = scores + rows;
  exp.exp2 = true;
  Phase sum;  // the per-thread row sum (FADD) and P to FP16 (F2FP packs two)
  sum.work.fp32 = scores;
  sum.work.alu = scores / 2;
  if (shape_.sass_counts) {
    // cuDNN's consumer loop as its SASS executes it (validation/h200/opmix/attn0_sass.csv.gz,
    // D = 64, and attn1, D = 128: warp instructions per consumer and KV step; the same at 1024
    // tokens, s26_attn1, and under the mask, attn2). Each thread holds 2 rows of S.
    // FMNMX: 272 at block_n 128, the thread's scores and then 2 a row after the two SHFL.BFLY
    // and 1 against the old max (8192 + 4 x 128); FSETP, the new max's -inf test, 2 a thread;
    // the loop's integer work, 32 at both head dims (ISETP, SEL, IADD3, LOP3, IMAD).
    max.work.alu = scores + 4 * threads + 2 * threads + 8 * threads;
    // The rescale factor: each of a row's 4 threads computes it (FMUL and FADD 16, MUFU.EX2 8:
    // 4 and 2 a thread, not one a row).
    exp.work.fp32 = static_cast<std::uint64_t>(shape_.scale_ops) * scores + 4 * threads;
    exp.work.sfu = scores + 2 * threads;
    sum.work.alu = scores / 2 + 2 * threads;  // F2FP 128, FSEL of the -inf guard 2 a thread
  }
  if (shape_.exp_step_per_cycle > 0)
    exp.latency = static_cast<std::uint32_t>(
        std::ceil(static_cast<double>(scores) / shape_.exp_step_per_cycle));
  phases.push_back(max);
  if (shape_.o_rescale == Fa3ORescale::kWithExp) {
    // cuDNN's SASS: its turn (BAR.SYNC ... BAR.ARV) holds the row sum, P's F2FP and O x the
    // factor (FMUL, 64 x head_dim) with the exp2s, before P V (1000 FP32, 248 MUFU.EX2 and 120
    // F2FP a consumer at D = 128).
    exp.work.fp32 += sum.work.fp32 + static_cast<std::uint64_t>(kRowsPerConsumer * shape_.head_dim);
    exp.work.alu += sum.work.alu;
    phases.push_back(exp);
    return phases;
  }
  phases.push_back(exp);
  phases.push_back(sum);
  return phases;
}

Fa3Kernel::Phase Fa3Kernel::gemm_issue_phase(bool qk) const {
  Phase p;
  if (!shape_.sass_counts) return p;
  // cuDNN's SASS (as softmax_phases): the integer work of a consumer beside its HGMMAs and the K
  // or V mbarrier wait (IADD3, LOP3, ISETP, SEL, MOV, VIADD, IMAD), per consumer and KV step:
  // S 44 at D = 64 (4 HGMMAs a warp), 72 at D = 128 (8): 16 and 7 an HGMMA of the consumer;
  // P V 36 and 24 (8 HGMMAs a warp at both): 30. The uniform datapath's descriptor arithmetic
  // (UMOV, UIADD3, R2UR: 224 and 304), branches and barriers (44) take issue slots only, which
  // no pipe of the model serves: not charged. A warp instruction is kThreadsPerWarp elements of
  // pipe work.
  p.work.alu = kThreadsPerWarp * (qk ? 16 + 7 * std::uint64_t{qk_wgmmas()} : 30);
  return p;
}

Fa3Kernel::Phase Fa3Kernel::rescale_phase() const {
  Phase p;
  p.work.fp32 = static_cast<std::uint64_t>(kRowsPerConsumer * shape_.head_dim);
  return p;
}

Fa3Kernel::Phase Fa3Kernel::epilogue_phase() const {
  Phase p;
  p.latency = static_cast<std::uint32_t>(shape_.epilogue_cycles);
  const auto outputs = static_cast<std::uint64_t>(kRowsPerConsumer * shape_.head_dim);
  p.work.fp32 = outputs;
  p.work.alu = outputs / 2;
  return p;
}

std::int64_t Fa3Kernel::smem_bytes() const {
  const Fa3Shape& s = shape_;
  return (s.q_stages * s.block_m + 2 * s.stages * s.block_n + (s.o_buffer ? s.block_m : 0)) *
         s.head_dim * kElementBytes;
}

std::uint32_t Fa3Kernel::producer_registers_per_thread() const {
  return kRegisters[consumers_ - 1].producer;
}

std::uint32_t Fa3Kernel::consumer_registers_per_thread() const {
  return kRegisters[consumers_ - 1].consumer;
}

}  // namespace simfa::fa3
