// A TTGIR kernel compiled for lowering: the `tt.func` of a parsed document turned into a flat
// list of nodes (structured ops followed by their regions), SSA values into numbered slots, the
// kernel arguments (scalars and tensor descriptors), mbarrier and shared-memory allocations, the
// warp-specialize partitions and the instrumentation sites. Every op is classified here, once:
// what the lowering interprets, what it charges as a BUBBLE, what it ignores (docs/ttgir.md),
// and what it does not know (rejected, or charged by the unknown-op rule).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mlir_text.h"
#include "ttgir_sites.h"
#include "ttgir_syntax.h"

namespace simfa::ttgir {

inline constexpr std::uint32_t kNone = ~std::uint32_t{0};

enum class NodeKind : std::uint8_t {
  kConst,           ///< imm -> result
  kOpaque,          ///< results whose values simfa does not compute (floats, tensors, loads)
  kBinary,          ///< sub: BinaryOp
  kCmp,             ///< sub: CmpPredicate
  kSelect,          ///< cond, a, b
  kCast,            ///< sub: CastKind; width: result width; a: operand width
  kProgramId,       ///< sub: axis
  kNumPrograms,     ///< sub: axis
  kFor,             ///< operands lb, ub, step, inits...; a: iv slot; b: first iter slot;
                    ///< sub: 1 when its body holds a dot (per-iteration bubble)
  kIf,              ///< operand cond; body [self+1, a) then, [a, end) else
  kYield,           ///< operands -> slots [a, a + count) of the enclosing op
  kAlloc,           ///< a: allocation id
  kView,            ///< operand 0 a memdesc, operands 1.. indices (memdesc_index/trans/...)
  kTmaLoad,         ///< desc, coords..., barrier, [pred]; a: descriptor id; b: coordinate count
  kTmaStore,        ///< desc, coords...; a: descriptor id; b: coordinate count
  kDot,             ///< a: dot id
  kDotWait,         ///< imm: pendings
  kWaitBarrier,     ///< barrier, phase, [pred]
  kArriveBarrier,   ///< barrier, [pred]; imm: count; a: arrivals one RELEASE stands for; b:
                    ///< per-thread
  kCtaBarrier,      ///< gpu.barrier: the partition's WarpGroups meet
  kCompute,         ///< register-tensor work (a compute BUBBLE): imm elements, sub CostRow,
                    ///< a ops per element; b: 0, or for a reduction 1 + the elements a thread
                    ///< combines in sequence (0: unknown, all of its elements); a reduction's
                    ///< operand 0 is the tensor it reduces
  kWarpSpecialize,  ///< a: its first partition; default region [self+1, b); partitions follow
  kNop,             ///< known ops without an instruction (barrier_expect, fences, deallocs, ...);
                    ///< sub: NopKind (an op some calibrated costs charge)
};

/// What a kNop node is, for the costs that charge one (LoweringOptions).
enum NopKind : std::uint8_t {
  kNopPlain = 0,
  kNopInitBarrier = 1,  ///< ttng.init_barrier (mbarrier_init_cycles)
  kNopStoreWait = 2,    ///< ttng.async_tma_store_wait with pendings = 0 (tma_store_wait)
};

enum class BinaryOp : std::uint8_t {
  kAdd,
  kSub,
  kMul,
  kDivS,
  kDivU,
  kRemS,
  kRemU,
  kCeilDivS,
  kCeilDivU,
  kFloorDivS,
  kAnd,
  kOr,
  kXor,
  kShl,
  kShrS,
  kShrU,
  kMinS,
  kMaxS,
  kMinU,
  kMaxU,
};
enum class CmpPredicate : std::uint8_t { kEq, kNe, kSlt, kSle, kSgt, kSge, kUlt, kUle, kUgt, kUge };
enum class CastKind : std::uint8_t { kSignExtend, kZeroExtend, kTruncate };
/// What one element of a register-tensor op puts through the SM's compute pipes (docs/ttgir.md
/// §4): FP32 add/mul/FMA; the ALU's compares, selects, min/max, integer work and conversions;
/// the SFU's (MUFU) transcendentals.
struct OpCost {
  double fp32 = 0, alu = 0, sfu = 0;
};
enum class CostRow : std::uint8_t {
  kFree,        ///< no instruction: a bitcast, a conversion that only renames registers
  kFp32,        ///< addf subf mulf negf absf fma
  kAlu,         ///< min/max, compares, selects, integer, conversions, layout shuffles
  kPack,        ///< truncf: one F2FP converts and packs two elements
  kSfu,         ///< exp2 log2 sqrt rsqrt tanh: one MUFU op
  kSfuFp32,     ///< exp log sin cos: a scaling FMUL and a MUFU op
  kDivide,      ///< divf, precise div/sqrt: MUFU.RCP and two FMAs
  kPower,       ///< powf: lg2, ex2 and two FMULs
  kPolynomial,  ///< erf log1p expm1, integer division: about eight FMAs
  kSmem,        ///< register <-> shared memory (local_load/store/alloc), on the ALU's share
  kUnknown,     ///< an op outside the table with unknown_ops = "bubble", charged as ALU work
};
const OpCost& op_cost(CostRow row);
/// The table row of a register-tensor op by its (canonical) name.
CostRow cost_row(std::string_view name);

struct Node {
  NodeKind kind = NodeKind::kNop;
  std::uint8_t sub = 0;
  std::uint8_t width = 64;     ///< result width of integer results
  std::uint32_t site = kNone;  ///< instrumentation site id
  std::uint32_t operands = 0;  ///< first index into KernelProgram::operands
  std::uint32_t operand_count = 0;
  std::uint32_t result = kNone;  ///< first result slot
  std::uint32_t result_count = 0;
  std::uint32_t end = 0;  ///< one past the last node of its regions (itself + 1 if none)
  std::uint32_t a = 0, b = 0;
  std::int64_t imm = 0;
  Pos pos;
};

/// A kernel argument the launch gives a value: a scalar or one field of a descriptor.
struct ScalarArg {
  std::string name;  ///< "M", or "a_desc.shape[1]" for a descriptor's expanded argument
  std::uint32_t slot = 0;
  std::uint32_t width = 32;
  std::uint32_t desc = kNone;  ///< owning descriptor, when a shape or stride argument
  std::uint32_t field = 0;     ///< index into the descriptor's shape (< rank) or strides (>= rank)
  Pos pos;
};

/// A `!tt.tensordesc` kernel argument: what the TensorMap needs besides the launch's tensor.
struct DescriptorArg {
  std::string name;
  std::uint32_t slot = 0;
  std::vector<std::int64_t> block;  ///< outermost first, as in the TTGIR
  std::string_view elem;
  std::uint32_t elem_bytes = 0;
  Pos pos;
};

/// A `ttg.local_alloc`.
struct Allocation {
  Pos pos;
  std::uint64_t bytes = 0;
  bool barriers = false;            ///< an array of mbarriers (i64 elements, no initial value)
  std::vector<std::int64_t> shape;  ///< outermost first
  std::uint32_t first_stage = 0;    ///< barriers: the simfa stage of its element 0
  enum Role : std::uint8_t { kUnused, kTma, kArrive } role = kUnused;
  std::uint32_t init_count = 0;  ///< init_barrier's arrival count (0: none seen)
};

/// Where the CTA's warps go: the default partition (index 0) and the warp_specialize partitions.
struct Partition {
  std::uint32_t num_warps = 0;
  std::uint32_t start_warp = 0;            ///< Triton's warpGroupStartIds
  std::uint32_t first_warpgroup = 0;       ///< index in the CTA program
  std::uint32_t warpgroups = 0;            ///< ceil(num_warps / 4)
  std::uint32_t registers_per_thread = 0;  ///< actualRegisters, when the TTGIR says
  std::uint32_t begin = 0, end = 0;        ///< its region's nodes (default: the whole function)
  std::vector<std::uint32_t> arg_slots;    ///< region arguments (explicit captures)
  /// Register bytes a thread holds for its dots (accumulators and register A operands): the
  /// most that the dots of one outermost loop hold together
  std::uint64_t dot_bytes_per_thread = 0;
};

struct DotInfo {
  DotShape shape;
};

/// How non-MMA register work and unknown ops are charged (docs/ttgir.md, "Bubbles").
struct CostRules {
  /// SM cycles a row reduction (tt.reduce, tt.scan) takes at least per element a thread
  /// combines in sequence (its dependent combine chain and the shuffles after it), which
  /// throughput alone does not bound.
  double reduce_cycles_per_element = 0;
  /// The CTA barriers Triton's shared-memory barrier pass (Membar) adds in the LLVM lowering,
  /// which the TTGIR does not show: before each TMA copy (into shared memory and out of it) and
  /// each mbarrier wait.
  bool triton_barriers = true;
  /// A row reduction of a tensor the open compute phase produced runs in that phase (the phase
  /// lasts at least its latency) instead of after it.
  bool fuse_reductions = false;
  bool unknown_as_bubble = false;  ///< else an unknown op is rejected
};

class KernelProgram {
 public:
  /// Compiles the single `tt.func` of `doc`. Throws InputError at the first op it cannot lower
  /// (unknown ops follow `rules`); the document must outlive the program.
  KernelProgram(const MlirDocument& doc, const CostRules& rules);

  const MlirDocument& doc() const { return *doc_; }
  std::string kernel_name;
  std::uint32_t num_warps = 4;
  std::vector<Node> nodes;
  std::vector<std::uint32_t> operands;  ///< value slots
  std::uint32_t slot_count = 0;
  std::vector<ScalarArg> scalar_args;
  std::vector<DescriptorArg> descriptors;
  std::vector<Allocation> allocations;
  std::vector<Partition> partitions;  ///< [0] = default
  std::vector<DotInfo> dots;
  std::vector<Site> sites;
  std::uint32_t stage_count = 0;
  std::uint32_t consumers_per_stage = 1;
  std::uint64_t smem_bytes = 0;          ///< peak of live allocations in program order
  std::vector<std::string> unknown_ops;  ///< "tt.store at 105:5" (charged by the unknown-op rule)
  /// Where each slot's value comes from, for messages: the defining op or argument.
  std::vector<Pos> slot_pos;
  std::vector<std::string_view> slot_name;

  std::uint32_t warpgroup_count() const;
  std::uint32_t partition_of_warp(std::uint32_t warp) const;  ///< kNone when no partition has it

 private:
  const MlirDocument* doc_;
};

}  // namespace simfa::ttgir
