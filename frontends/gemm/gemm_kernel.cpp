#include "gemm_kernel.h"

#include <algorithm>
#include <cmath>

#include "simfa/int_math.h"
#include "simfa/program_builder.h"
#include "simfa/wgmma_codegen.h"

namespace simfa::gemm {

namespace {

/// A row-major `rows` x `columns` matrix whose box is `box_rows` x `box_columns`.
TensorMap matrix(const char* name, Addr base, std::uint32_t elem_bytes, std::int64_t columns,
                 std::int64_t rows, std::int64_t box_columns, std::int64_t box_rows) {
  return tensor_map(
      name, base, elem_bytes,
      {static_cast<std::uint64_t>(columns), static_cast<std::uint64_t>(rows)}, {},
      {static_cast<std::uint32_t>(box_columns), static_cast<std::uint32_t>(box_rows)});
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
  explicit Stream(WarpGroupCode code) : code_(code) {}
  void charge(std::uint64_t cycles) { pending_ += cycles; }
  /// The code, once the cycles charged so far are issued.
  WarpGroupCode& next() {
    code_.bubbles(pending_);
    pending_ = 0;
    return code_;
  }
  void push(const Instruction& instruction) { next().push(instruction); }
  /// With two or more WarpGroups, the CTA barrier Triton's Membar pass puts before each TMA copy
  /// (loads and the store) and mbarrier wait (as the TTGIR route adds it, docs/ttgir.md §4).
  void membar() {
    if (membar_) push(Instruction::bar_wait(0));
  }
  void set_membar(bool on) { membar_ = on; }

 private:
  WarpGroupCode code_;
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
                             Stream& code) const {
  const auto stage = static_cast<std::uint8_t>(k % shape_.stages);
  const std::int64_t k0 = k * shape_.block_k;
  const std::int64_t m0 = tile.m * shape_.block_m;
  const std::int64_t n0 = tile.n * shape_.block_n;
  if (acquire) code.push(Instruction::acquire_stage(stage));
  code.membar();
  if (issue) code.next().tma_load(kMapA, {k0, m0}, stage);
  code.membar();
  if (!issue) return;
  if (shape_.b_layout == BLayout::kNK)
    code.next().tma_load(kMapB, {k0, n0}, stage);
  else
    code.next().tma_load(kMapB, {n0, k0}, stage);
}

void GemmKernel::multiply_k_tile(std::int64_t k, Stream& code) const {
  const auto n = static_cast<std::uint16_t>(cols_per_consumer_);
  const auto instr_k = static_cast<std::uint16_t>(wgmma_k(shape_.dtype));
  const auto m = static_cast<std::uint16_t>(kWgmmaM);
  code.membar();
  code.push(Instruction::mb_wait(static_cast<std::uint8_t>(k % shape_.stages)));
  if (!serialized_wgmma_) {
    code.next().wgmma_group(wgmmas_per_k_tile_, m, n, instr_k);
    return;
  }
  // Serialized: each WGMMA a group of its own, waited for before the next is issued.
  for (std::uint32_t i = 0; i < wgmmas_per_k_tile_; ++i) {
    code.next().wgmma_group(1, m, n, instr_k);
    code.push(Instruction::wgmma_wait(0));
  }
}

void GemmKernel::build(std::uint64_t cta, CtaProgram& out) const {
  CtaProgramBuilder cta_program(out, cta, maps_);
  cta_program.smem(smem_bytes_);
  const Tile tile = tile_of(cta);
  if (shape_.warp_specialized)
    build_warp_specialized(tile, cta_program);
  else
    build_pipelined(tile, cta_program);
  cta_program.finish();
}

// Triton's software-pipelined loop (tests/data/ttgir/gemm_tma.ttgir): the first WarpGroup
// issues stages-1 k-tiles ahead; every iteration waits for its k-tile, multiplies it, waits
// until one WGMMA group is outstanding (retiring k-1's, whose slot the next copy overwrites)
// and refills that slot. No empty barriers: the wait orders the reuse, so no ACQUIRE/RELEASE.
void GemmKernel::build_pipelined(const Tile& tile, CtaProgramBuilder& out) const {
  const GemmShape& s = shape_;
  const std::int64_t kt = k_tiles_;
  const std::int64_t ahead = s.stages - 1;
  out.stages(static_cast<std::uint32_t>(s.stages));
  if (consumers_ > 1) out.barrier(0, consumers_);
  out.add_warpgroups(consumers_, round_up(accumulator_registers_ + kBaseRegistersPerThread,
                                          kRegisterAllocationUnit));
  for (std::uint32_t w = 0; w < consumers_; ++w) {
    Stream code(out.warpgroup(w));
    code.set_membar(consumers_ > 1);
    const bool loads = w == 0;  // the copies come from one elected thread
    code.charge(s.prologue_bubble);
    code.charge(static_cast<std::uint64_t>(s.stages) * s.mbarrier_init_cycles);
    for (std::int64_t k = 0; k < (consumers_ > 1 ? ahead : std::min(ahead, kt)); ++k)
      load_k_tile(k, tile, false, loads && k < kt, code);
    for (std::int64_t k = 0; k < kt; ++k) {
      code.charge(s.per_iteration_bubble);
      multiply_k_tile(k, code);
      code.push(Instruction::wgmma_wait(1));
      if (k + ahead < kt || consumers_ > 1)  // predicated-off copies keep their barriers
        load_k_tile(k + ahead, tile, false, loads && k + ahead < kt, code);
    }
    code.push(Instruction::wgmma_wait(0));
    code.next().compute(0, epilogue_work_);
    code.membar();  // the store reads every WarpGroup's shared-memory half
    if (!loads) continue;
    code.next().tma_store(kMapC, {tile.n * s.block_n, tile.m * s.block_m});
    if (s.tma_store_wait_bytes_per_cycle > 0) {  // the store's wait, before the CTA ends
      const double box_bytes = static_cast<double>(maps_[kMapC].box_bytes());
      code.charge(
          static_cast<std::uint64_t>(std::ceil(box_bytes / s.tma_store_wait_bytes_per_cycle)));
      code.next();
    }
  }
}

// CUTLASS's cooperative kernel: a producer WarpGroup loads every k-tile into the ring; each
// consumer keeps one WGMMA group in flight (K_PIPE_MMAS = 1): waiting until one group is
// outstanding retires k-1's, whose slot it then releases.
void GemmKernel::build_warp_specialized(const Tile& tile, CtaProgramBuilder& out) const {
  const GemmShape& s = shape_;
  const std::int64_t kt = k_tiles_;
  auto slot = [&](std::int64_t k) { return static_cast<std::uint8_t>(k % s.stages); };
  out.stages(static_cast<std::uint32_t>(s.stages), consumers_);
  const std::uint32_t first_consumer = 1 + out.add_warpgroups(1, kBaseRegistersPerThread);
  out.add_warpgroups(consumers_, kConsumerRegistersPerThread);
  Stream producer(out.warpgroup(0));
  producer.charge(s.prologue_bubble);
  for (std::int64_t k = 0; k < kt; ++k) load_k_tile(k, tile, true, true, producer);
  for (std::uint32_t c = 0; c < consumers_; ++c) {
    Stream code(out.warpgroup(first_consumer + c));
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
    code.next().compute(0, epilogue_work_);
    code.next().tma_store(kMapC, {tile.n * s.block_n, tile.m * s.block_m + c * rows_per_consumer_});
  }
}

}  // namespace simfa::gemm
