#include "trace_program.h"

#include <algorithm>
#include <limits>
#include <span>

#include "simfa/error.h"

namespace simfa::trace {

namespace {

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kUint32Max = std::numeric_limits<std::uint32_t>::max();
constexpr std::int64_t kInt32Min = std::numeric_limits<std::int32_t>::min();
constexpr std::int64_t kInt32Max = std::numeric_limits<std::int32_t>::max();
/// CUDA allows 1024 threads per block: 8 WarpGroups.
constexpr std::int64_t kMaxWarpGroupsPerCta = 8;
/// At most 255 registers per thread (CUDA programming guide, compute capability 9.0).
constexpr std::int64_t kMaxRegsPerThread = 255;
/// Stage ids are 8 bits wide in an Instruction.
constexpr std::int64_t kMaxStages = 256;

std::string range_text(std::int64_t lo, std::int64_t hi) {
  return std::to_string(lo) + ".." + std::to_string(hi);
}

}  // namespace

const char* apply_op(ExprOp op, std::int64_t a, std::int64_t b, std::int64_t& out) {
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  constexpr const char* kOverflow = "integer overflow (values are 64-bit signed)";
  switch (op) {
    case ExprOp::kNeg:
      if (b == kMin) return kOverflow;
      out = -b;
      return nullptr;
    case ExprOp::kAdd:
      return __builtin_add_overflow(a, b, &out) ? kOverflow : nullptr;
    case ExprOp::kSub:
      return __builtin_sub_overflow(a, b, &out) ? kOverflow : nullptr;
    case ExprOp::kMul:
      return __builtin_mul_overflow(a, b, &out) ? kOverflow : nullptr;
    case ExprOp::kDiv:
      if (b == 0) return "division by zero";
      if (a == kMin && b == -1) return kOverflow;
      out = a / b;
      return nullptr;
    case ExprOp::kMod:
      if (b == 0) return "division by zero (in '%')";
      out = b == -1 ? 0 : a % b;
      return nullptr;
    case ExprOp::kMin:
      out = std::min(a, b);
      return nullptr;
    case ExprOp::kMax:
      out = std::max(a, b);
      return nullptr;
    case ExprOp::kConst:
    case ExprOp::kVar:
      break;
  }
  return "not an operator";
}

CtaExpander::CtaExpander(const TraceProgram& program, std::uint64_t max_instructions)
    : program_(program),
      max_instructions_(max_instructions),
      slots_(program.slot_count, 0),
      stack_(program.max_stack, 0) {}

void CtaExpander::fail(Pos pos, const std::string& message) const {
  throw InputError(SourceLocation{program_.file, pos.line, pos.column},
                   "CTA " + std::to_string(cta_) + ": " + message);
}

std::int64_t CtaExpander::eval(const Expr& e) {
  const ExprStep* step = program_.code.data() + e.begin;
  const ExprStep* const last = program_.code.data() + e.end;
  if (last - step == 1) return step->op == ExprOp::kConst ? step->value : slots_[step->slot];
  std::int64_t* top = stack_.data();  // one past the top value
  for (; step != last; ++step) {
    switch (step->op) {
      case ExprOp::kConst:
        *top++ = step->value;
        break;
      case ExprOp::kVar:
        *top++ = slots_[step->slot];
        break;
      case ExprOp::kNeg:
        if (const char* problem = apply_op(ExprOp::kNeg, 0, top[-1], top[-1]))
          fail(step->pos, problem);
        break;
      default: {
        --top;
        if (const char* problem = apply_op(step->op, top[-1], top[0], top[-1]))
          fail(step->pos, problem);
      }
    }
  }
  return top[-1];
}

std::int64_t CtaExpander::operand(const Stmt& s, std::uint32_t k, std::int64_t lo, std::int64_t hi,
                                  const char* what) {
  const Expr& e = program_.operands[s.operands + k];
  const std::int64_t v = eval(e);
  if (v < lo || v > hi)
    fail(e.pos,
         std::string(what) + " is " + std::to_string(v) + "; it must be in " + range_text(lo, hi));
  return v;
}

std::uint8_t CtaExpander::stage(const Stmt& s, std::uint32_t k) {
  const Expr& e = program_.operands[s.operands + k];
  const std::int64_t v = eval(e);
  if (v < 0 || v >= stage_count_) {
    if (stage_count_ == 0)
      fail(e.pos, "stage " + std::to_string(v) +
                      " is used but the CTA declares no stages (add 'stages N' to the cta block)");
    fail(e.pos, "stage " + std::to_string(v) + " is out of range: the CTA declares " +
                    std::to_string(stage_count_) + " stages (0.." +
                    std::to_string(stage_count_ - 1) + ")");
  }
  return static_cast<std::uint8_t>(v);
}

std::uint32_t CtaExpander::coordinates(const Stmt& s, CtaProgramBuilder& cta) {
  std::array<std::int64_t, kMaxTensorRank> coords{};
  const std::uint32_t rank = program_.maps[s.map].rank;
  for (std::uint32_t d = 0; d < rank; ++d)
    coords[d] = operand(s, d, kInt32Min, kInt32Max, "a TMA coordinate");
  // max_instructions_per_cta <= 2^28 and rank <= 5 keep the offset below 2^32.
  return cta.coordinates(s.map, std::span(coords.data(), rank));
}

std::int64_t CtaExpander::value(const Stmt& s, std::uint32_t k, const OperandSpec& spec) {
  const std::int64_t v = operand(s, k, spec.min, spec.max, spec.what);
  if (spec.rule)
    if (std::string problem = spec.rule(v); !problem.empty())
      fail(program_.operands[s.operands + k].pos, problem);
  return v;
}

void CtaExpander::emit(const Stmt& s, CtaProgramBuilder& cta, WarpGroupCode code) {
  if (++instructions_ > max_instructions_)
    fail(s.pos, "the CTA expands to more than " + std::to_string(max_instructions_) +
                    " instructions (max_instructions_per_cta); check the repeat counts");
  // The operands in their spec's order, each stored where its kind says (simfa/instruction_set.h).
  Instruction in;
  in.op = s.op;
  std::uint32_t k = 0;  // the statement's next operand expression
  for (const OperandSpec& o : (*program_.instructions)[s.op].operands) {
    switch (o.kind) {
      case OperandKind::kTile:
        in.map = s.map;
        in.x = coordinates(s, cta);
        k += program_.maps[s.map].rank;
        break;
      case OperandKind::kAddress:
        in.x = cta.address(static_cast<Addr>(value(s, k++, o)));
        break;
      case OperandKind::kStage:
        in.stage = stage(s, k++);
        break;
      case OperandKind::kBarrier:
        in.x = static_cast<std::uint32_t>(operand(s, k++, 0, kNamedBarriers - 1, o.what));
        break;
      case OperandKind::kValue:
        set_field(in, o.field, static_cast<std::uint32_t>(value(s, k++, o)));
        break;
    }
  }
  code.push(in);
}

void CtaExpander::run_body(std::uint32_t begin, std::uint32_t end, CtaProgramBuilder& cta,
                           WarpGroupCode code) {
  const auto& stmts = program_.stmts;
  for (std::uint32_t i = begin; i < end;) {
    const Stmt& s = stmts[i];
    if (s.kind == StmtKind::kInstruction) {
      emit(s, cta, code);
      ++i;
    } else if (s.kind == StmtKind::kLet) {
      slots_[s.slot] = eval(program_.operands[s.operands]);
      ++i;
    } else {  // kRepeat: the parser allows nothing else in a warpgroup body
      std::int64_t first = 0, last = 0;
      if (s.operand_count == 1) {
        last = operand(s, 0, 0, kInt64Max, "the repeat count");
      } else {
        first = eval(program_.operands[s.operands]);
        last = eval(program_.operands[s.operands + 1]);
      }
      for (std::int64_t v = first; v < last; ++v) {
        if (++iterations_ > max_instructions_)
          fail(s.pos, "the CTA runs more than " + std::to_string(max_instructions_) +
                          " loop iterations (max_instructions_per_cta); check the repeat counts");
        if (s.slot != kNoSlot) slots_[s.slot] = v;
        run_body(i + 1, s.end, cta, code);
      }
      i = s.end;
    }
  }
}

void CtaExpander::expand(std::uint64_t index, CtaProgram& out) {
  CtaProgramBuilder cta(out, index, program_.maps);
  cta_ = index;
  stage_count_ = 0;
  instructions_ = 0;
  iterations_ = 0;
  const auto& grid = program_.grid;
  slots_[kSlotCta] = static_cast<std::int64_t>(index);
  slots_[kSlotCtaX] = static_cast<std::int64_t>(index % grid[0]);
  slots_[kSlotCtaY] = static_cast<std::int64_t>(index / grid[0] % grid[1]);
  slots_[kSlotCtaZ] = static_cast<std::int64_t>(index / (grid[0] * grid[1]));

  const auto& stmts = program_.stmts;
  const auto size = static_cast<std::uint32_t>(stmts.size());
  const auto next = [&](std::uint32_t i) {
    return stmts[i].kind == StmtKind::kWarpGroup ? stmts[i].end : i + 1;
  };

  // Pass 1: the cta block's lets and resources, in order (each may use the lets before it), so
  // that stage operands can be checked against the stage count wherever it is declared.
  std::array<const Stmt*, kNamedBarriers> barriers{};
  for (std::uint32_t i = 0; i < size; i = next(i)) {
    const Stmt& s = stmts[i];
    switch (s.kind) {
      case StmtKind::kLet:
        slots_[s.slot] = eval(program_.operands[s.operands]);
        break;
      case StmtKind::kSmem:
        cta.smem(operand(s, 0, 0, kInt64Max, "smem"));
        break;
      case StmtKind::kStages:
        stage_count_ = static_cast<std::uint32_t>(operand(s, 0, 1, kMaxStages, "the stage count"));
        cta.stages(stage_count_,
                   static_cast<std::uint32_t>(operand(s, 1, 1, kUint32Max, "consumers")));
        break;
      case StmtKind::kBarrier: {
        const auto id =
            static_cast<std::size_t>(operand(s, 0, 0, kNamedBarriers - 1, "the barrier id"));
        if (barriers[id]) fail(s.pos, "barrier " + std::to_string(id) + " is declared twice");
        barriers[id] = &s;
        cta.barrier(
            static_cast<std::uint32_t>(id),
            static_cast<std::uint32_t>(operand(s, 1, 1, kMaxWarpGroupsPerCta, "participants")));
        break;
      }
      case StmtKind::kInstruction:
      case StmtKind::kRepeat:
      case StmtKind::kWarpGroup:
        break;
    }
  }

  // Pass 2: the warpgroups, each `count` times with `wg` = 0, 1, ...
  for (std::uint32_t i = 0; i < size; i = next(i)) {
    const Stmt& s = stmts[i];
    if (s.kind != StmtKind::kWarpGroup) continue;
    const std::int64_t count = operand(s, 0, 0, kMaxWarpGroupsPerCta, "the warpgroup count");
    const auto registers =
        static_cast<std::uint32_t>(operand(s, 1, 1, kMaxRegsPerThread, "regs (per thread)"));
    for (std::int64_t w = 0; w < count; ++w) {
      if (cta.warpgroup_count() == kMaxWarpGroupsPerCta)
        fail(s.pos, "the CTA has more than 8 warpgroups (CUDA allows 1024 threads per CTA)");
      slots_[kSlotWg] = w;
      run_body(i + 1, s.end, cta, cta.warpgroup(cta.add_warpgroups(1, registers)));
    }
  }
  cta.finish();
  if (out.warpgroups.empty()) fail(program_.cta_pos, "the CTA has no warpgroups");
  for (std::size_t id = 0; id < barriers.size(); ++id)
    if (barriers[id] && out.barrier_participants[id] > out.warpgroups.size())
      fail(barriers[id]->pos, "barrier " + std::to_string(id) + " waits for " +
                                  std::to_string(out.barrier_participants[id]) +
                                  " participants but the CTA has " +
                                  std::to_string(out.warpgroups.size()) + " warpgroups");
}

}  // namespace simfa::trace
