#include "gemm_kernel.h"

#include <algorithm>

namespace simfa::gemm {

namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

/// Registers are allocated per warp in units of 256, 8 per thread (CUDA occupancy calculator's
/// "register allocation unit size").
std::uint32_t round_to_allocation_unit(std::uint32_t registers) {
  return (registers + 7) / 8 * 8;
}

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

std::uint32_t element_bytes(Dtype dtype) {
  return dtype == Dtype::kFp8 ? 1 : 2;
}
std::uint32_t wgmma_k(Dtype dtype) {
  return dtype == Dtype::kFp8 ? 32 : 16;
}

GemmKernel::GemmKernel(const GemmShape& shape) : shape_(shape) {
  const GemmShape& s = shape_;
  const std::uint32_t e = element_bytes(s.dtype);
  tiles_m_ = ceil_div(s.m, s.block_m);
  tiles_n_ = ceil_div(s.n, s.block_n);
  k_tiles_ = ceil_div(s.k, s.block_k);
  consumers_ = s.warp_specialized && s.block_m % (2 * kWgmmaM) == 0 ? 2 : 1;
  rows_per_consumer_ = s.block_m / consumers_;
  wgmmas_per_k_tile_ = static_cast<std::uint32_t>(ceil_div(rows_per_consumer_, kWgmmaM) *
                                                  ceil_div(s.block_k, wgmma_k(s.dtype)));
  smem_bytes_ =
      s.stages * (s.block_m + s.block_n) * s.block_k * e + s.block_m * s.block_n * kOutputBytes;
  accumulator_registers_ =
      static_cast<std::uint32_t>(rows_per_consumer_ * s.block_n / kThreadsPerWarpGroup);

  maps_.push_back(matrix("A", s.a_base, e, s.k, s.m, s.block_k, s.block_m));
  if (s.b_layout == BLayout::kNK)
    maps_.push_back(matrix("B", s.b_base, e, s.k, s.n, s.block_k, s.block_n));
  else
    maps_.push_back(matrix("B", s.b_base, e, s.n, s.k, s.block_n, s.block_k));
  // Each consumer stores its own rows of the C tile.
  maps_.push_back(matrix("C", s.c_base, kOutputBytes, s.n, s.m, s.block_n, rows_per_consumer_));
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

void GemmKernel::load_k_tile(std::int64_t k, std::uint8_t stage, const Tile& tile,
                             std::vector<Instruction>& code, CtaProgram& out) const {
  const std::int64_t k0 = k * shape_.block_k;
  const std::int64_t m0 = tile.m * shape_.block_m;
  const std::int64_t n0 = tile.n * shape_.block_n;
  code.push_back(Instruction::acquire_stage(stage));
  code.push_back(Instruction::tma_load(kMapA, push_coords(out, k0, m0), stage));
  const std::uint32_t b =
      shape_.b_layout == BLayout::kNK ? push_coords(out, k0, n0) : push_coords(out, n0, k0);
  code.push_back(Instruction::tma_load(kMapB, b, stage));
}

void GemmKernel::multiply_k_tile(std::int64_t k, std::vector<Instruction>& code) const {
  const auto gid = static_cast<std::uint32_t>(k);
  const auto n = static_cast<std::uint16_t>(shape_.block_n);
  const auto instr_k = static_cast<std::uint16_t>(wgmma_k(shape_.dtype));
  for (std::uint32_t i = 0; i < wgmmas_per_k_tile_; ++i)
    code.push_back(Instruction::wgmma(static_cast<std::uint16_t>(kWgmmaM), n, instr_k, gid));
  code.push_back(Instruction::wgmma_commit(gid));
  if (shape_.per_iteration_bubble > 0)
    code.push_back(Instruction::bubble(shape_.per_iteration_bubble));
}

void GemmKernel::build(std::uint64_t cta, CtaProgram& out) const {
  const GemmShape& s = shape_;
  out.clear();
  out.cta_id = cta;
  out.smem_bytes = smem_bytes_;
  out.stage_count = static_cast<std::uint32_t>(s.stages);
  out.consumers_per_stage = consumers_;
  out.warpgroups.reserve(1 + consumers_);  // `begin` hands out references into it
  const Tile tile = tile_of(cta);
  const std::int64_t kt = k_tiles_;
  const std::int64_t depth = s.stages;
  auto slot = [&](std::int64_t k) { return static_cast<std::uint8_t>(k % depth); };
  auto begin = [&](std::uint32_t registers_per_thread) -> std::vector<Instruction>& {
    WarpGroupProgram& wg = out.warpgroups.emplace_back();
    wg.registers = registers_per_thread * kThreadsPerWarpGroup;
    if (s.prologue_bubble > 0) wg.code.push_back(Instruction::bubble(s.prologue_bubble));
    return wg.code;
  };
  // The consumer side of k-tile k with one WGMMA group kept in flight (Triton's pipelined
  // matmul, CUTLASS's K_PIPE_MMAS = 1): waiting until one group is outstanding retires k-1's,
  // whose slot is then free.
  auto consume = [&](std::int64_t k, std::vector<Instruction>& code) {
    code.push_back(Instruction::mb_wait(slot(k)));
    multiply_k_tile(k, code);
    if (k > 0) {
      code.push_back(Instruction::wgmma_wait(1));
      code.push_back(Instruction::release_stage(slot(k - 1)));
    }
  };
  auto drain = [&](std::vector<Instruction>& code, std::uint32_t consumer) {
    code.push_back(Instruction::wgmma_wait(0));
    code.push_back(Instruction::release_stage(slot(kt - 1)));
    code.push_back(Instruction::tma_store(
        kMapC,
        push_coords(out, tile.n * s.block_n, tile.m * s.block_m + consumer * rows_per_consumer_)));
    code.push_back(Instruction::exit());
  };

  if (!s.warp_specialized) {
    // One WarpGroup runs the software pipeline: stages-1 k-tiles in flight before the first
    // WGMMA; each iteration refills the slot the previous one released.
    std::vector<Instruction>& code =
        begin(round_to_allocation_unit(accumulator_registers_ + kBaseRegistersPerThread));
    for (std::int64_t k = 0; k < std::min(depth - 1, kt); ++k)
      load_k_tile(k, slot(k), tile, code, out);
    for (std::int64_t k = 0; k < kt; ++k) {
      consume(k, code);
      if (k + depth - 1 < kt) load_k_tile(k + depth - 1, slot(k + depth - 1), tile, code, out);
    }
    drain(code, 0);
    return;
  }
  std::vector<Instruction>& producer = begin(kBaseRegistersPerThread);
  for (std::int64_t k = 0; k < kt; ++k) load_k_tile(k, slot(k), tile, producer, out);
  producer.push_back(Instruction::exit());
  for (std::uint32_t c = 0; c < consumers_; ++c) {
    std::vector<Instruction>& code = begin(kConsumerRegistersPerThread);
    for (std::int64_t k = 0; k < kt; ++k) consume(k, code);
    drain(code, c);
  }
}

}  // namespace simfa::gemm
