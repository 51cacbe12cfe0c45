#include "fa3_kernel.h"

#include <algorithm>
#include <bit>

namespace simfa::fa3 {

namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

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
    TensorMap map;
    map.name = name;
    map.base = next;
    map.elem_bytes = kElementBytes;
    map.rank = 4;
    map.shape = {d, static_cast<std::uint64_t>(seqlen), static_cast<std::uint64_t>(heads),
                 static_cast<std::uint64_t>(s.batch)};
    map.stride = {kElementBytes, static_cast<std::uint64_t>(heads) * row, row,
                  static_cast<std::uint64_t>(seqlen * heads) * row};
    map.box = {static_cast<std::uint32_t>(d), static_cast<std::uint32_t>(box_rows), 1, 1};
    const Addr bytes = map.stride[3] * map.shape[3];
    next = (next + bytes + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
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
}

std::uint64_t Fa3Kernel::cta_count() const {
  return static_cast<std::uint64_t>(m_blocks_ * shape_.heads * shape_.batch);
}

Fa3Kernel::Tile Fa3Kernel::tile_of(std::uint64_t cta) const {
  const auto t = static_cast<std::int64_t>(cta);
  const std::int64_t heads = shape_.heads;
  if (!shape_.causal) {
    // StaticPersistentTileScheduler: Q tile fastest, then head, then batch, so the
    // m_blocks x heads/kv_heads CTAs of one KV head are consecutive.
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

std::uint64_t Fa3Kernel::ctas_attending_kv() const {
  // n_block_max(m) = 0 exactly when (m + 1) block_m + seqlen_k - seqlen_q <= 0.
  const std::int64_t blind =
      shape_.causal ? std::clamp<std::int64_t>((shape_.seqlen_q - shape_.seqlen_k) / shape_.block_m,
                                               0, m_blocks_)
                    : 0;
  return static_cast<std::uint64_t>((m_blocks_ - blind) * shape_.heads * shape_.batch);
}

std::uint8_t Fa3Kernel::k_stage(std::uint64_t i) const {
  return static_cast<std::uint8_t>(1 + i % static_cast<std::uint64_t>(shape_.stages));
}

std::uint8_t Fa3Kernel::v_stage(std::uint64_t i) const {
  return static_cast<std::uint8_t>(1 + shape_.stages +
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

std::int64_t Fa3Kernel::smem_bytes() const {
  const Fa3Shape& s = shape_;
  return (s.block_m + 2 * s.stages * s.block_n) * s.head_dim * kElementBytes;
}

std::uint32_t Fa3Kernel::producer_registers_per_thread() const {
  return kRegisters[consumers_ - 1].producer;
}

std::uint32_t Fa3Kernel::consumer_registers_per_thread() const {
  return kRegisters[consumers_ - 1].consumer;
}

}  // namespace simfa::fa3
