#include "gemm_kernel.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "simfa/int_math.h"
#include "simfa/wgmma_codegen.h"

namespace simfa::gemm {

namespace {

TensorMap matrix(const char* name, Addr base, std::uint32_t elem_bytes, std::int64_t columns,
                 std::int64_t rows, std::int64_t box_columns, std::int64_t box_rows) {
  TensorMap map;
  map.name = name;
  map.base = base;
  map.elem_bytes = elem_bytes;
  map.rank = 2;
  map.shape = {static_cast<std::uint64_t>(columns), static_cast<std::uint64_t>(rows)};
  map.stride = {elem_bytes, static_cast<std::uint64_t>(columns) * elem_bytes};
  map.box = {static_cast<std::uint32_t>(box_columns), static_cast<std::uint32_t>(box_rows)};
  return map;
}

std::uint32_t push_coords(CtaProgram& out, std::int64_t c0, std::int64_t c1) {
  const auto offset = static_cast<std::uint32_t>(out.coords.size());
  out.coords.push_back(static_cast<std::int32_t>(c0));
  out.coords.push_back(static_cast<std::int32_t>(c1));
  return offset;
}

constexpr std::uint16_t kMapA = 0;
constexpr std::uint16_t kMapB = 1;
constexpr std::uint16_t kMapC = 2;

}  // namespace

WarpsPerCta triton_warps_per_cta(std::int64_t block_m, std::int64_t warps) {
  WarpsPerCta w;
  while (w.m * w.n < warps) {
    if (block_m > kRowsPerWarp * w.m)
      w.m *= 2;
    else
      w.n *= 2;
  }
  return w;
}

std::uint32_t element_bytes(Dtype dtype) {
  return dtype == Dtype::kFp8 ? 1 : 2;
}
std::uint32_t wgmma_k(Dtype dtype) {
  return dtype == Dtype::kFp8 ? 32 : 16;
}

/// One WarpGroup's code being written: cycles charged between instructions (calibration, the
/// epilogue) are held back and issued as one BUBBLE before the next instruction, as the TTGIR
/// route merges consecutive costs (cta_lowering.cpp), so the two routes agree bubble for bubble.
class GemmKernel::Stream {
 public:
  Stream(std::vector<Instruction>& code, CtaProgram& cta) : code_(code), cta_(cta) {}
  void charge(std::uint64_t cycles) { pending_ += cycles; }
  void push(const Instruction& instruction) {
    for (; pending_ > 0; pending_ -= std::min(pending_, kMaxBubble))
      code_.push_back(
          Instruction::bubble(static_cast<std::uint32_t>(std::min(pending_, kMaxBubble))));
    code_.push_back(instruction);
  }
  /// With two or more WarpGroups, the CTA barrier Triton's Membar pass puts before each TMA copy
  /// (loads and the store) and mbarrier wait (as the TTGIR route adds it, docs/ttgir.md §4).
  void membar() {
    if (membar_) push(Instruction::bar_wait(0));
  }
  void set_membar(bool on) { membar_ = on; }
  /// Register work on the SM's compute pipes, after the calibration cycles charged before it.
  void compute(const ComputeWork& work) {
    auto& pool = cta_.work;
    if (pool.empty() || !(pool.back() == work)) pool.push_back(work);
    push(Instruction::compute(0, static_cast<std::uint32_t>(pool.size() - 1)));
  }

 private:
  static constexpr std::uint64_t kMaxBubble = std::numeric_limits<std::uint32_t>::max();
  std::vector<Instruction>& code_;
  CtaProgram& cta_;
  std::uint64_t pending_ = 0;
  bool membar_ = false;
};

GemmKernel::GemmKernel(const GemmShape& shape) : shape_(shape) {
  const GemmShape& s = shape_;
  const std::uint32_t e = element_bytes(s.dtype);
  tiles_m_ = ceil_div(s.m, s.block_m);
  tiles_n_ = ceil_div(s.n, s.block_n);
  k_tiles_ = ceil_div(s.k, s.block_k);
  if (s.warp_specialized) {
    consumers_ = s.block_m % (2 * kWgmmaM) == 0 ? 2 : 1;
    rows_per_consumer_ = s.block_m / consumers_;
    cols_per_consumer_ = s.block_n;
  } else {
    consumers_ = static_cast<std::uint32_t>(s.warps / kWarpsPerWarpGroup);
    const WarpsPerCta w = triton_warps_per_cta(s.block_m, s.warps);
    rows_per_consumer_ = s.block_m / (w.m / kWarpsPerWarpGroup);
    cols_per_consumer_ = s.block_n / w.n;
  }
  serialized_wgmma_ =
      !(s.warp_specialized && s.wgmma_serialization == "auto") &&
      wgmma_serialized(s.wgmma_serialization, static_cast<std::uint32_t>(cols_per_consumer_),
                       kAccumulatorBytes);
  wgmmas_per_k_tile_ = static_cast<std::uint32_t>(ceil_div(rows_per_consumer_, kWgmmaM) *
                                                  ceil_div(s.block_k, wgmma_k(s.dtype)));
  const std::int64_t ring = s.stages * (s.block_m + s.block_n) * s.block_k * e;
  const std::int64_t c_tile = s.block_m * s.block_n * kOutputBytes;
  smem_bytes_ =
      s.warp_specialized ? ring + c_tile : std::max(ring + s.stages * kMbarrierBytes, c_tile);
  accumulator_registers_ =
      static_cast<std::uint32_t>(rows_per_consumer_ * cols_per_consumer_ / kThreadsPerWarpGroup);
  epilogue_work_.alu = static_cast<std::uint64_t>(std::ceil(
      kEpilogueAluPerElement * static_cast<double>(rows_per_consumer_ * cols_per_consumer_)));

  maps_.push_back(matrix("A", s.a_base, e, s.k, s.m, s.block_k, s.block_m));
  if (s.b_layout == BLayout::kNK)
    maps_.push_back(matrix("B", s.b_base, e, s.k, s.n, s.block_k, s.block_n));
  else
    maps_.push_back(matrix("B", s.b_base, e, s.n, s.k, s.block_n, s.block_k));
  // Triton stores the whole tile from one thread; CUTLASS's consumers each store their rows.
  const std::int64_t store_rows = s.warp_specialized ? rows_per_consumer_ : s.block_m;
  maps_.push_back(matrix("C", s.c_base, kOutputBytes, s.n, s.m, s.block_n, store_rows));
}

GemmKernel::Tile GemmKernel::tile_of(std::uint64_t cta) const {
  const auto pid = static_cast<std::int64_t>(cta);
  if (shape_.raster == Raster::kRowMajor) return {pid / tiles_n_, pid % tiles_n_};
  // Triton's matmul tutorial, term by term: groups of group_m tile rows, inside a group column
  // by column; pid_m takes pid (not its rank in the group) modulo the group's rows.
  const std::int64_t in_group = shape_.group_m * tiles_n_;
  const std::int64_t first_m = pid / in_group * shape_.group_m;
  const std::int64_t group_rows = std::min(tiles_m_ - first_m, shape_.group_m);
  return {first_m + pid % group_rows, pid % in_group / group_rows};
}

void GemmKernel::load_k_tile(std::int64_t k, const Tile& tile, bool acquire, bool issue,
                             Stream& code, CtaProgram& out) const {
  const auto stage = static_cast<std::uint8_t>(k % shape_.stages);
  const std::int64_t k0 = k * shape_.block_k;
  const std::int64_t m0 = tile.m * shape_.block_m;
  const std::int64_t n0 = tile.n * shape_.block_n;
  if (acquire) code.push(Instruction::acquire_stage(stage));
  code.membar();
  if (issue) code.push(Instruction::tma_load(kMapA, push_coords(out, k0, m0), stage));
  code.membar();
  if (!issue) return;
  const std::uint32_t b =
      shape_.b_layout == BLayout::kNK ? push_coords(out, k0, n0) : push_coords(out, n0, k0);
  code.push(Instruction::tma_load(kMapB, b, stage));
}

void GemmKernel::multiply_k_tile(std::int64_t k, Stream& code) const {
  const auto gid = static_cast<std::uint32_t>(k);
  const auto n = static_cast<std::uint16_t>(cols_per_consumer_);
  const auto instr_k = static_cast<std::uint16_t>(wgmma_k(shape_.dtype));
  code.membar();
  code.push(Instruction::mb_wait(static_cast<std::uint8_t>(k % shape_.stages)));
  if (!serialized_wgmma_) {
    for (std::uint32_t i = 0; i < wgmmas_per_k_tile_; ++i)
      code.push(Instruction::wgmma(static_cast<std::uint16_t>(kWgmmaM), n, instr_k, gid));
    code.push(Instruction::wgmma_commit(gid));
    return;
  }
  // Serialized: each WGMMA a group of its own, numbered on from the k-tiles before (as the TTGIR
  // route numbers a WarpGroup's groups), waited for before the next is issued.
  for (std::uint32_t i = 0; i < wgmmas_per_k_tile_; ++i) {
    const auto group = static_cast<std::uint32_t>(k) * wgmmas_per_k_tile_ + i;
    code.push(Instruction::wgmma(static_cast<std::uint16_t>(kWgmmaM), n, instr_k, group));
    code.push(Instruction::wgmma_commit(group));
    code.push(Instruction::wgmma_wait(0));
  }
}

void GemmKernel::build(std::uint64_t cta, CtaProgram& out) const {
  out.clear();
  out.cta_id = cta;
  out.smem_bytes = smem_bytes_;
  out.stage_count = static_cast<std::uint32_t>(shape_.stages);
  const Tile tile = tile_of(cta);
  if (shape_.warp_specialized)
    build_warp_specialized(tile, out);
  else
    build_pipelined(tile, out);
}

// Triton's software-pipelined loop (tests/data/ttgir/gemm_tma.ttgir): the first WarpGroup
// issues stages-1 k-tiles ahead; every iteration waits for its k-tile, multiplies it, waits
// until one WGMMA group is outstanding (retiring k-1's, whose slot the next copy overwrites)
// and refills that slot. No empty barriers: the wait orders the reuse, so no ACQUIRE/RELEASE.
void GemmKernel::build_pipelined(const Tile& tile, CtaProgram& out) const {
  const GemmShape& s = shape_;
  const std::int64_t kt = k_tiles_;
  const std::int64_t ahead = s.stages - 1;
  const auto registers =
      round_up(accumulator_registers_ + kBaseRegistersPerThread, kRegisterAllocationUnit);
  out.consumers_per_stage = 1;
  out.warpgroups.resize(consumers_);
  if (consumers_ > 1) out.barrier_participants = {consumers_};
  for (std::uint32_t w = 0; w < consumers_; ++w) {
    WarpGroupProgram& wg = out.warpgroups[w];
    wg.registers = registers * kThreadsPerWarpGroup;
    Stream code(wg.code, out);
    code.set_membar(consumers_ > 1);
    const bool loads = w == 0;  // the copies come from one elected thread
    code.charge(s.prologue_bubble);
    for (std::int64_t k = 0; k < (consumers_ > 1 ? ahead : std::min(ahead, kt)); ++k)
      load_k_tile(k, tile, false, loads && k < kt, code, out);
    for (std::int64_t k = 0; k < kt; ++k) {
      code.charge(s.per_iteration_bubble);
      multiply_k_tile(k, code);
      code.push(Instruction::wgmma_wait(1));
      if (k + ahead < kt || consumers_ > 1)  // predicated-off copies keep their barriers
        load_k_tile(k + ahead, tile, false, loads && k + ahead < kt, code, out);
    }
    code.push(Instruction::wgmma_wait(0));
    code.compute(epilogue_work_);
    code.membar();  // the store reads every WarpGroup's shared-memory half
    if (loads)
      code.push(
          Instruction::tma_store(kMapC, push_coords(out, tile.n * s.block_n, tile.m * s.block_m)));
    code.push(Instruction::exit());
  }
}

// CUTLASS's cooperative kernel: a producer WarpGroup loads every k-tile into the ring; each
// consumer keeps one WGMMA group in flight (K_PIPE_MMAS = 1): waiting until one group is
// outstanding retires k-1's, whose slot it then releases.
void GemmKernel::build_warp_specialized(const Tile& tile, CtaProgram& out) const {
  const GemmShape& s = shape_;
  const std::int64_t kt = k_tiles_;
  auto slot = [&](std::int64_t k) { return static_cast<std::uint8_t>(k % s.stages); };
  out.consumers_per_stage = consumers_;
  out.warpgroups.resize(1 + consumers_);
  out.warpgroups[0].registers = kBaseRegistersPerThread * kThreadsPerWarpGroup;
  Stream producer(out.warpgroups[0].code, out);
  producer.charge(s.prologue_bubble);
  for (std::int64_t k = 0; k < kt; ++k) load_k_tile(k, tile, true, true, producer, out);
  producer.push(Instruction::exit());
  for (std::uint32_t c = 0; c < consumers_; ++c) {
    WarpGroupProgram& wg = out.warpgroups[1 + c];
    wg.registers = kConsumerRegistersPerThread * kThreadsPerWarpGroup;
    Stream code(wg.code, out);
    code.charge(s.prologue_bubble);
    for (std::int64_t k = 0; k < kt; ++k) {
      code.charge(s.per_iteration_bubble);
      multiply_k_tile(k, code);
      if (k > 0) {
        code.push(Instruction::wgmma_wait(1));
        code.push(Instruction::release_stage(slot(k - 1)));
      }
    }
    code.push(Instruction::wgmma_wait(0));
    code.push(Instruction::release_stage(slot(kt - 1)));
    code.compute(epilogue_work_);
    code.push(Instruction::tma_store(
        kMapC, push_coords(out, tile.n * s.block_n, tile.m * s.block_m + c * rows_per_consumer_)));
    code.push(Instruction::exit());
  }
}

}  // namespace simfa::gemm
