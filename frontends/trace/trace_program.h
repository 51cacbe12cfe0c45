// A parsed trace: TensorMaps, grid and top-level `let`s resolved to values, and the CTA body
// template compiled to a flat statement list whose expressions are postfix code. CtaExpander
// turns the template into one CTA's program, in time linear in the instructions it emits.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "simfa/instruction_set.h"
#include "simfa/isa.h"
#include "simfa/program.h"
#include "simfa/program_builder.h"
#include "simfa/tensor_map.h"
#include "trace_lexer.h"

namespace simfa::trace {

/// Variable slots of the builtins; a CTA body's own variables follow them.
enum Builtin : std::uint32_t { kSlotCta, kSlotCtaX, kSlotCtaY, kSlotCtaZ, kSlotWg, kBuiltinSlots };
inline constexpr std::uint32_t kNoSlot = ~std::uint32_t{0};

enum class ExprOp : std::uint8_t { kConst, kVar, kNeg, kAdd, kSub, kMul, kDiv, kMod, kMin, kMax };

struct ExprStep {
  ExprOp op = ExprOp::kConst;
  std::uint32_t slot = 0;  ///< kVar
  std::int64_t value = 0;  ///< kConst
  Pos pos;                 ///< where the operator (or operand) is written
};

/// An expression: steps [begin, end) of TraceProgram::code, evaluated with a value stack.
struct Expr {
  std::uint32_t begin = 0;
  std::uint32_t end = 0;
  Pos pos;  ///< its first token
};

/// `a op b`, or `-b` for kNeg (a unused). `/` and `%` truncate toward zero, as in C. Returns
/// nullptr, or what went wrong ("division by zero", "integer overflow").
const char* apply_op(ExprOp op, std::int64_t a, std::int64_t b, std::int64_t& out);

enum class StmtKind : std::uint8_t {
  kInstruction,  ///< operands: the instruction's, in its spec's order (a tile's coordinates first)
  kLet,          ///< operands: value
  kRepeat,       ///< operands: first, end (one past the last value)
  kWarpGroup,    ///< operands: count, registers per thread
  kSmem,         ///< operands: bytes
  kStages,       ///< operands: count, consumers per stage
  kBarrier,      ///< operands: barrier id, participants
};

struct Stmt {
  StmtKind kind = StmtKind::kInstruction;
  Opcode op = Opcode::kExit;     ///< kInstruction
  std::uint16_t map = 0;         ///< kInstruction: the tile operand's map id
  std::uint32_t slot = kNoSlot;  ///< kLet, kRepeat: the variable set (kRepeat: may be none)
  std::uint32_t operands = 0;    ///< first index into TraceProgram::operands
  std::uint32_t operand_count = 0;
  std::uint32_t end = 0;   ///< kRepeat, kWarpGroup: one past the body's last statement
  std::uint32_t name = 0;  ///< kWarpGroup: index into TraceProgram::warpgroup_names
  Pos pos;
};

struct TraceProgram {
  std::string file;
  const InstructionSet* instructions = &InstructionSet::hopper();  ///< what its opcodes mean
  std::vector<TensorMap> maps;                             ///< ids are indices
  std::vector<std::pair<std::string, std::int64_t>> lets;  ///< top-level lets, resolved
  std::array<std::uint64_t, 3> grid{1, 1, 1};
  Pos cta_pos;  ///< the `cta` keyword
  /// The cta block: its own statements are those not inside a kRepeat or kWarpGroup body.
  std::vector<Stmt> stmts;
  std::vector<Expr> operands;
  std::vector<ExprStep> code;
  std::vector<std::string> warpgroup_names;
  std::uint32_t slot_count = kBuiltinSlots;
  std::uint32_t max_stack = 1;  ///< the deepest value stack any expression needs

  std::uint64_t cta_count() const { return grid[0] * grid[1] * grid[2]; }
};

/// Expands the CTA body template for one CTA at a time, reusing its scratch space.
class CtaExpander {
 public:
  /// `max_instructions` bounds a CTA's instructions and, separately, its loop iterations.
  CtaExpander(const TraceProgram& program, std::uint64_t max_instructions);

  /// Fills `out` with CTA `index`'s program. Throws InputError at the offending trace position
  /// for values out of range, division by zero and runaway expansion.
  void expand(std::uint64_t index, CtaProgram& out);

 private:
  void run_body(std::uint32_t begin, std::uint32_t end, CtaProgramBuilder& cta, WarpGroupCode code);
  void emit(const Stmt& s, CtaProgramBuilder& cta, WarpGroupCode code);
  std::int64_t eval(const Expr& e);
  std::int64_t operand(const Stmt& s, std::uint32_t k, std::int64_t lo, std::int64_t hi,
                       const char* what);
  std::uint8_t stage(const Stmt& s, std::uint32_t k);
  /// Operand `k` of `s`, a kValue or kAddress operand: in range and obeying its rule.
  std::int64_t value(const Stmt& s, std::uint32_t k, const OperandSpec& spec);
  /// The tile's coordinates, in the CTA's pool: their offset.
  std::uint32_t coordinates(const Stmt& s, CtaProgramBuilder& cta);
  [[noreturn]] void fail(Pos pos, const std::string& message) const;

  const TraceProgram& program_;
  std::uint64_t max_instructions_;
  std::uint64_t cta_ = 0;
  std::uint32_t stage_count_ = 0;
  std::uint64_t instructions_ = 0;
  std::uint64_t iterations_ = 0;
  std::vector<std::int64_t> slots_;
  std::vector<std::int64_t> stack_;
};

}  // namespace simfa::trace
