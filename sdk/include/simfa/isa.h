// The simfa instruction encoding (DESIGN.md §4; the paper's Table III). Instructions are 16-byte
// PODs; operands that do not fit (TMA coordinates, bulk addresses) live in the CTA program's
// operand pool and the instruction holds their offset. What each opcode takes, accepts and means
// is declared once, in the instruction table (simfa/instruction_set.h).
#pragma once

#include <cstdint>
#include <string>

#include "simfa/types.h"

namespace simfa {

/// A WarpGroup, the unit that issues an instruction stream, is four contiguous warps of 32 threads
/// (PTX ISA 8.x, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate": a warpgroup is a set
/// of four contiguous warps).
inline constexpr std::uint32_t kWarpsPerWarpGroup = 4;
inline constexpr std::uint32_t kThreadsPerWarp = 32;
inline constexpr std::uint32_t kThreadsPerWarpGroup = kWarpsPerWarpGroup * kThreadsPerWarp;
/// Registers are allocated per warp in units of 256, so a thread's count rounds up to a multiple
/// of 8 (the CUDA occupancy calculator's "register allocation unit size").
inline constexpr std::uint32_t kRegisterAllocationUnit = 8;
/// Named barriers per CTA: `bar.sync` / `bar.arrive` take ids 0..15 (PTX ISA, bar).
inline constexpr std::uint32_t kNamedBarriers = 16;

enum class Opcode : std::uint8_t {
  kTmaLoad,       ///< map, coords at pool[x..x+rank), stage
  kTmaBulk,       ///< address at pool64[x], bytes y, stage
  kTmaStore,      ///< map, coords at pool[x..x+rank)
  kAcquireStage,  ///< stage
  kReleaseStage,  ///< stage
  kMbWait,        ///< stage
  kWgmma,         ///< M = x >> 16, N = x & 0xffff, K = y, gid = z
  kWgmmaCommit,   ///< gid = z
  kWgmmaWait,     ///< N = x (max outstanding groups)
  kBarArrive,     ///< barrier id = x
  kBarWait,       ///< barrier id = x
  kBubble,        ///< x cycles; stage 1: also work[y] on the SM's shared compute pipes
  kExit,
};
/// Hopper's instructions, declared in simfa/instruction_set.h; a run's InstructionSet may add
/// more, at the opcodes after these.
inline constexpr int kOpcodeCount = 13;

struct Instruction {
  Opcode op = Opcode::kExit;
  std::uint8_t stage = 0;  ///< ring-buffer slot / mbarrier id (sid)
  std::uint16_t map = 0;   ///< TensorMap id
  std::uint32_t x = 0;
  std::uint32_t y = 0;
  std::uint32_t z = 0;

  static Instruction tma_load(std::uint16_t map, std::uint32_t coord_offset, std::uint8_t stage) {
    return {Opcode::kTmaLoad, stage, map, coord_offset, 0, 0};
  }
  static Instruction tma_bulk(std::uint32_t addr_offset, std::uint32_t bytes, std::uint8_t stage) {
    return {Opcode::kTmaBulk, stage, 0, addr_offset, bytes, 0};
  }
  static Instruction tma_store(std::uint16_t map, std::uint32_t coord_offset) {
    return {Opcode::kTmaStore, 0, map, coord_offset, 0, 0};
  }
  static Instruction acquire_stage(std::uint8_t s) {
    return {Opcode::kAcquireStage, s, 0, 0, 0, 0};
  }
  static Instruction release_stage(std::uint8_t s) {
    return {Opcode::kReleaseStage, s, 0, 0, 0, 0};
  }
  static Instruction mb_wait(std::uint8_t s) { return {Opcode::kMbWait, s, 0, 0, 0, 0}; }
  static Instruction wgmma(std::uint16_t m, std::uint16_t n, std::uint16_t k, std::uint32_t gid) {
    return {Opcode::kWgmma, 0, 0, (std::uint32_t{m} << 16) | n, k, gid};
  }
  static Instruction wgmma_commit(std::uint32_t gid) {
    return {Opcode::kWgmmaCommit, 0, 0, 0, 0, gid};
  }
  static Instruction wgmma_wait(std::uint32_t n) { return {Opcode::kWgmmaWait, 0, 0, n, 0, 0}; }
  static Instruction bar_arrive(std::uint32_t bid) { return {Opcode::kBarArrive, 0, 0, bid, 0, 0}; }
  static Instruction bar_wait(std::uint32_t bid) { return {Opcode::kBarWait, 0, 0, bid, 0, 0}; }
  static Instruction bubble(std::uint32_t cycles) { return {Opcode::kBubble, 0, 0, cycles, 0, 0}; }
  /// Register arithmetic that occupies the WarpGroup for at least `latency` cycles and puts the
  /// elements of CtaProgram::work[work] through the SM's compute pipes, which its WarpGroups
  /// share (DESIGN.md §4).
  static Instruction compute(std::uint32_t latency, std::uint32_t work) {
    return {Opcode::kBubble, kComputeBubble, 0, latency, work, 0};
  }
  static constexpr std::uint8_t kComputeBubble = 1;  ///< BUBBLE's `stage` for compute()
  static Instruction exit() { return {Opcode::kExit, 0, 0, 0, 0, 0}; }

  std::uint32_t wgmma_m() const { return x >> 16; }
  std::uint32_t wgmma_n() const { return x & 0xffffu; }
  std::uint32_t wgmma_k() const { return y; }
  std::uint32_t gid() const { return z; }
  bool is_compute() const { return op == Opcode::kBubble && stage == kComputeBubble; }

  friend bool operator==(const Instruction&, const Instruction&) = default;
};
static_assert(sizeof(Instruction) == 16, "instructions are 16-byte PODs (DESIGN.md §4)");

}  // namespace simfa
