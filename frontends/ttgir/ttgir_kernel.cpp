#include "ttgir_kernel.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "simfa/int_math.h"
#include "simfa/isa.h"

namespace simfa::ttgir {

namespace {

struct BinaryName {
  std::string_view name;
  BinaryOp op;
};
constexpr BinaryName kBinaries[] = {
    {"arith.addi", BinaryOp::kAdd},           {"arith.subi", BinaryOp::kSub},
    {"arith.muli", BinaryOp::kMul},           {"arith.divsi", BinaryOp::kDivS},
    {"arith.divui", BinaryOp::kDivU},         {"arith.remsi", BinaryOp::kRemS},
    {"arith.remui", BinaryOp::kRemU},         {"arith.ceildivsi", BinaryOp::kCeilDivS},
    {"arith.ceildivui", BinaryOp::kCeilDivU}, {"arith.floordivsi", BinaryOp::kFloorDivS},
    {"arith.andi", BinaryOp::kAnd},           {"arith.ori", BinaryOp::kOr},
    {"arith.xori", BinaryOp::kXor},           {"arith.shli", BinaryOp::kShl},
    {"arith.shrsi", BinaryOp::kShrS},         {"arith.shrui", BinaryOp::kShrU},
    {"arith.minsi", BinaryOp::kMinS},         {"arith.maxsi", BinaryOp::kMaxS},
    {"arith.minui", BinaryOp::kMinU},         {"arith.maxui", BinaryOp::kMaxU},
};

constexpr std::string_view kPredicates[] = {"eq",  "ne",  "slt", "sle", "sgt",
                                            "sge", "ult", "ule", "ugt", "uge"};

// Ops that move no data and do no arithmetic of their own (views and broadcasts are folded into
// their users by the compiler).
constexpr std::string_view kFree[] = {
    "tt.splat",        "tt.broadcast", "tt.expand_dims",   "tt.reshape", "tt.trans",
    "tt.make_range",   "tt.join",      "tt.split",         "ub.poison",  "ttg.warp_yield",
    "ttg.warp_return", "tt.return",    "llvm.intr.assume", "tt.assume"};
// Ops without a simfa instruction: the ISA has no expect_tx (a stage's bytes come from its copies)
// and no fences; barrier lifetimes and deallocation cost nothing at this level.
constexpr std::string_view kNops[] = {"ttng.barrier_expect",
                                      "ttng.inval_barrier",
                                      "ttng.fence_async_shared",
                                      "ttng.fence",
                                      "proton.record",
                                      "ttg.local_dealloc",
                                      "ttng.async_tma_store_wait",
                                      "ttng.async_tma_store_token_wait"};
// Register-tensor work besides arith.* and math.* (docs/ttgir.md §4).
constexpr std::string_view kTensorWork[] = {
    "ttg.convert_layout", "ttg.local_load", "ttg.local_store", "tt.fp_to_fp", "tt.precise_divf",
    "tt.precise_sqrt",    "tt.mulhiui",     "tt.clampf",       "tt.cat"};

struct CostEntry {
  std::string_view name;
  CostRow row;
};
// Every op the table prices; anything else on tensors is ALU work (kAlu).
constexpr CostEntry kCostTable[] = {
    {"arith.addf", CostRow::kFp32},
    {"arith.subf", CostRow::kFp32},
    {"arith.mulf", CostRow::kFp32},
    {"arith.negf", CostRow::kFp32},
    {"math.absf", CostRow::kFp32},
    {"math.fma", CostRow::kFp32},
    {"arith.truncf", CostRow::kPack},
    {"arith.bitcast", CostRow::kFree},
    {"math.exp2", CostRow::kSfu},
    {"math.log2", CostRow::kSfu},
    {"math.sqrt", CostRow::kSfu},
    {"math.rsqrt", CostRow::kSfu},
    {"math.tanh", CostRow::kSfu},
    {"math.exp", CostRow::kSfuFp32},
    {"math.log", CostRow::kSfuFp32},
    {"math.sin", CostRow::kSfuFp32},
    {"math.cos", CostRow::kSfuFp32},
    {"arith.divf", CostRow::kDivide},
    {"tt.precise_divf", CostRow::kDivide},
    {"tt.precise_sqrt", CostRow::kDivide},
    {"math.powf", CostRow::kPower},
    {"math.erf", CostRow::kPolynomial},
    {"math.log1p", CostRow::kPolynomial},
    {"math.expm1", CostRow::kPolynomial},
    {"arith.divsi", CostRow::kPolynomial},
    {"arith.divui", CostRow::kPolynomial},
    {"arith.remsi", CostRow::kPolynomial},
    {"arith.remui", CostRow::kPolynomial},
    {"arith.ceildivsi", CostRow::kPolynomial},
    {"arith.ceildivui", CostRow::kPolynomial},
    {"arith.floordivsi", CostRow::kPolynomial},
    {"ttg.local_load", CostRow::kSmem},
    {"ttg.local_store", CostRow::kSmem},
    {"ttg.local_alloc", CostRow::kSmem},
};

// Per-element pipe work of each row. The rates behind them (validation/h200/attention/
// softmax_micro.csv): FMUL/FADD 128 elements an SM cycle, FFMA the same (x * c + d costs one
// op), FSETP + FSEL 64 each, MUFU.EX2 16; F2FP packs two elements an instruction.
constexpr OpCost kOpCosts[] = {
    /* kFree */ {0, 0, 0},   /* kFp32 */ {1, 0, 0},   /* kAlu */ {0, 1, 0},
    /* kPack */ {0, 0.5, 0}, /* kSfu */ {0, 0, 1},    /* kSfuFp32 */ {1, 0, 1},
    /* kDivide */ {2, 0, 1}, /* kPower */ {2, 0, 2},  /* kPolynomial */ {8, 0, 0},
    /* kSmem */ {0, 1, 0},   /* kUnknown */ {0, 1, 0}};
static_assert(std::size(kOpCosts) == static_cast<std::size_t>(CostRow::kUnknown) + 1);

// Warps of a CTA's partitions and of the whole module (ttg.num-warps): Hopper runs 32 per CTA
// (1024 threads). A partition of 10^9 warps asked for 250M WarpGroups and one of 2^32 - 1 wrapped
// their count to 0 (docs/reliability.md).
constexpr std::int64_t kMaxWarps = 64;

template <std::size_t N>
bool in(const std::string_view (&set)[N], std::string_view s) {
  return std::find(std::begin(set), std::end(set), s) != std::end(set);
}

std::string at_text(Pos p) {
  return std::to_string(p.line) + ":" + std::to_string(p.column);
}

struct Binding {
  std::uint32_t slot = 0;
  std::uint32_t count = 1;
};

class Compiler {
 public:
  Compiler(const MlirDocument& doc, KernelProgram& p, const CostRules& rules)
      : doc_(doc), p_(p), rules_(rules) {}

  void run() {
    for (const Site& s : p_.sites) site_of_[s.op] = s.id;
    const Operation* module = nullptr;
    const Operation* func = nullptr;
    for (const Operation& op : doc_.ops) {
      if (op.name == "module") module = &op;
      if (op.name == "tt.func") func = &op;
    }
    if (module) {
      module_attrs(*module);
      if (!module->regions.empty())
        for (const Operation& op : module->regions[0].ops)
          if (op.name == "tt.func") {
            if (func) doc_.fail(op.pos, "more than one tt.func: simfa lowers one kernel a file");
            func = &op;
          }
    }
    if (!func) doc_.fail(Pos{1, 1}, "no tt.func in the TTGIR");
    if (func->regions.empty()) doc_.fail(func->pos, "the kernel tt.func has no body");

    Partition def;
    def.num_warps = p_.num_warps;
    def.warpgroups = static_cast<std::uint32_t>(ceil_div(p_.num_warps, kWarpsPerWarpGroup));
    p_.partitions.push_back(def);

    scopes_.push_back({});
    isolated_.push_back(true);
    arguments(*func);
    const auto begin = static_cast<std::uint32_t>(p_.nodes.size());
    compile_ops(func->regions[0].ops);
    p_.partitions[0].begin = begin;
    p_.partitions[0].end = static_cast<std::uint32_t>(p_.nodes.size());
    finish();
  }

 private:
  // ---- module and arguments ----

  void module_attrs(const Operation& module) {
    const TokenRange r = module.segments.front();
    for (std::uint32_t i = r.begin; i + 2 < r.end; ++i) {
      const Token& t = doc_.token(i);
      if (t.kind != Tok::kString || doc_.token(i + 1).kind != Tok::kEqual) continue;
      std::int64_t v = 0;
      const bool number = parse_integer_literal(doc_.token(i + 2).text, v);
      const std::string key = canonical_name(t.text);
      if (key == "ttg.num-warps" && number) p_.num_warps = static_cast<std::uint32_t>(v);
      if (key == "ttg.num-ctas" && number && v != 1)
        doc_.fail(t.pos, "ttg.num-ctas = " + std::to_string(v) +
                             ": CTA clusters are outside what simfa lowers");
    }
    if (p_.num_warps == 0 || p_.num_warps > kMaxWarps) doc_.fail(module.pos, "bad ttg.num-warps");
  }

  void arguments(const Operation& func) {
    const TokenRange r = func.segments.front();
    std::uint32_t i = r.begin;
    while (i < r.end && doc_.token(i).kind != Tok::kAtId) ++i;
    if (i >= r.end) doc_.fail(func.pos, "tt.func without a name");
    p_.kernel_name = std::string(doc_.token(i).text.substr(1));
    ++i;
    if (doc_.token(i).kind != Tok::kLParen) doc_.fail(doc_.token(i).pos, "expected '('");
    ++i;
    const OpView view(doc_, func);
    struct Arg {
      std::string_view name;
      TypeInfo type;
      Pos pos;
      std::uint32_t slot;
    };
    std::vector<Arg> args;
    while (i < r.end && doc_.token(i).kind != Tok::kRParen) {
      const Token& name = doc_.token(i);
      if (name.kind != Tok::kValue || doc_.token(i + 1).kind != Tok::kColon)
        doc_.fail(name.pos, "expected '%name: type' in the kernel's arguments");
      i += 2;
      Arg a{name.text, view.type_at(i), name.pos, 0};
      a.slot = define_one(name.text, name.pos);
      args.push_back(a);
      int depth = 0;  // attributes and loc() up to the next ',' or ')'
      while (i < r.end) {
        const Tok k = doc_.token(i).kind;
        if (depth == 0 && (k == Tok::kComma || k == Tok::kRParen)) break;
        if (k == Tok::kLParen || k == Tok::kLBrace || k == Tok::kLAngle || k == Tok::kLBracket)
          ++depth;
        if (k == Tok::kRParen || k == Tok::kRBrace || k == Tok::kRAngle || k == Tok::kRBracket)
          --depth;
        ++i;
      }
      if (doc_.token(i).kind == Tok::kComma) ++i;
    }
    for (std::size_t k = 0; k < args.size(); ++k) {
      const Arg& a = args[k];
      if (a.type.kind == TypeKind::kTensorDesc) {
        DescriptorArg d;
        d.name = std::string(a.name);
        d.slot = a.slot;
        d.block = a.type.shape;
        d.elem = a.type.elem;
        d.elem_bytes = element_bytes(a.type.elem);
        d.pos = a.pos;
        if (d.block.empty() || d.block.size() > 5 || d.elem_bytes == 0)
          doc_.fail(a.pos, "descriptor %" + d.name + " has an unsupported block type");
        const std::size_t rank = d.block.size();
        // Triton 3.6 passes a host TensorDescriptor as the descriptor, then its shape (i32
        // each) and strides (i64 each).
        bool expanded = k + 2 * rank < args.size();
        for (std::size_t f = 0; expanded && f < 2 * rank; ++f) {
          const TypeInfo& t = args[k + 1 + f].type;
          expanded = t.kind == TypeKind::kScalar && t.elem == (f < rank ? "i32" : "i64");
        }
        const auto id = static_cast<std::uint32_t>(p_.descriptors.size());
        slot_desc(a.slot) = id;
        p_.descriptors.push_back(d);
        if (expanded) {
          for (std::size_t f = 0; f < 2 * rank; ++f) {
            const Arg& s = args[k + 1 + f];
            ScalarArg sa;
            sa.name = d.name + (f < rank ? ".shape[" + std::to_string(f) + "]"
                                         : ".strides[" + std::to_string(f - rank) + "]");
            sa.slot = s.slot;
            sa.width = f < rank ? 32 : 64;
            sa.desc = id;
            sa.field = static_cast<std::uint32_t>(f);
            sa.pos = s.pos;
            p_.scalar_args.push_back(sa);
          }
          k += 2 * rank;
        }
        continue;
      }
      const std::uint32_t width = a.type.kind == TypeKind::kPtr ? 64 : integer_width(a.type.elem);
      if (width == 0) continue;  // floats: values simfa never needs
      ScalarArg sa;
      sa.name = std::string(a.name);
      sa.slot = a.slot;
      sa.width = width;
      sa.pos = a.pos;
      p_.scalar_args.push_back(sa);
    }
  }

  // ---- slots and scopes ----

  std::uint32_t new_slots(std::uint32_t n, std::string_view name, Pos pos) {
    const std::uint32_t base = p_.slot_count;
    p_.slot_count += n;
    p_.slot_pos.resize(p_.slot_count, pos);
    p_.slot_name.resize(p_.slot_count, name);
    slot_alloc_.resize(p_.slot_count, kNone);
    slot_desc_.resize(p_.slot_count, kNone);
    return base;
  }

  std::uint32_t define_one(std::string_view name, Pos pos) {
    const std::uint32_t s = new_slots(1, name, pos);
    scopes_.back()[name] = {s, 1};
    return s;
  }

  // Defines an op's results; returns the first slot (kNone when it has none).
  std::uint32_t define_results(const Operation& op, std::uint32_t& count) {
    count = 0;
    std::uint32_t first = kNone;
    for (const ResultDef& r : op.results) {
      const std::uint32_t s = new_slots(r.count, r.name, op.pos);
      scopes_.back()[r.name] = {s, r.count};
      if (first == kNone) first = s;
      count += r.count;
    }
    return first;
  }

  std::uint32_t& slot_alloc(std::uint32_t s) { return slot_alloc_[s]; }
  std::uint32_t& slot_desc(std::uint32_t s) { return slot_desc_[s]; }

  std::uint32_t use(std::uint32_t token) {
    const Token& t = doc_.token(token);
    for (std::size_t k = scopes_.size(); k-- > 0;) {
      const auto it = scopes_[k].find(t.text);
      if (it != scopes_[k].end()) {
        const std::uint32_t idx = t.use < 0 ? 0 : static_cast<std::uint32_t>(t.use);
        if (idx >= it->second.count)
          doc_.fail(t.pos, "%" + std::string(t.text) + " has " + std::to_string(it->second.count) +
                               " results, not #" + std::to_string(idx));
        return it->second.slot + idx;
      }
      if (isolated_[k]) break;
    }
    doc_.fail(t.pos, "use of undefined value %" + std::string(t.text));
  }

  void push_scope(bool isolated) {
    scopes_.push_back({});
    isolated_.push_back(isolated);
  }
  void pop_scope() {
    scopes_.pop_back();
    isolated_.pop_back();
  }

  // ---- nodes ----

  Node& add(NodeKind kind, const Operation& op) {
    Node n;
    n.kind = kind;
    n.pos = op.pos;
    const auto it = site_of_.find(&op);
    if (it != site_of_.end()) n.site = it->second;
    n.operands = static_cast<std::uint32_t>(p_.operands.size());
    n.end = static_cast<std::uint32_t>(p_.nodes.size()) + 1;
    p_.nodes.push_back(n);
    return p_.nodes.back();
  }

  void operands(std::uint32_t node, const std::vector<std::uint32_t>& tokens) {
    for (std::uint32_t t : tokens) p_.operands.push_back(use(t));
    p_.nodes[node].operand_count = static_cast<std::uint32_t>(tokens.size());
  }

  std::uint32_t index_of(const Node& n) const {
    return static_cast<std::uint32_t>(&n - p_.nodes.data());
  }

  void compile_ops(const std::vector<Operation>& ops) {
    const std::uint32_t outer = block_begin_;
    block_begin_ = static_cast<std::uint32_t>(p_.nodes.size());
    for (const Operation& op : ops) compile(op);
    block_begin_ = outer;
  }

  // A node whose results simfa does not compute; `cost` makes it a kCompute node whose tensor
  // work the lowering charges as a compute BUBBLE (an unknown op is charged even without
  // tensors); a `reduction` is a phase of its own with the reduction latency.
  void opaque(const Operation& op, CostRow row, bool cost, std::uint32_t ops = 1,
              bool results = true, bool reduction = false) {
    const OpView v(doc_, op);
    std::uint64_t elements = 0;
    bool tensor = false;
    for (const TypeInfo& t : v.types())
      if (t.kind == TypeKind::kTensor) {
        tensor = true;
        elements = std::max<std::uint64_t>(elements, t.elements());
      }
    const bool charged = cost && row != CostRow::kFree && (tensor || row == CostRow::kUnknown);
    const auto idx = index_of(add(charged ? NodeKind::kCompute : NodeKind::kOpaque, op));
    std::uint32_t count = 0;
    const std::uint32_t first = results ? define_results(op, count) : kNone;
    Node& m = p_.nodes[idx];
    m.result = first;
    m.result_count = count;
    m.sub = static_cast<std::uint8_t>(row);
    m.imm = static_cast<std::int64_t>(std::max<std::uint64_t>(elements, 1));
    m.a = ops;
    m.b = reduction ? 1 : 0;
  }

  // ttg.convert_layout: free where it only renames registers, as from a WGMMA accumulator
  // (#ttg.nvidia_mma) of 16-bit elements to the A operand of the next dot (#ttg.dot_op,
  // opIdx 0): attention's P, whose SASS feeds the F2FP results straight to the HGMMA.
  CostRow convert_row(const OpView& v) const {
    const auto types = v.types();
    if (types.size() != 2 || types[0].kind != TypeKind::kTensor) return CostRow::kAlu;
    const LayoutRef from = layout_at(doc_, types[0].encoding_token);
    const LayoutRef to = layout_at(doc_, types[1].encoding_token);
    const bool half = element_bytes(types[0].elem) == 2;
    if (half && from.name == "ttg.nvidia_mma" && to.name == "ttg.dot_op" &&
        layout_int(doc_, to, "opIdx") == 0)
      return CostRow::kFree;
    return CostRow::kAlu;
  }

  bool has_tensor(const OpView& v) const {
    for (const TypeInfo& t : v.types())
      if (t.kind == TypeKind::kTensor) return true;
    return false;
  }

  std::uint32_t scalar_width(const OpView& v, std::size_t which) const {
    const auto types = v.types();
    if (types.empty()) return 64;
    const TypeInfo& t = types[std::min(which, types.size() - 1)];
    const std::uint32_t w = integer_width(t.elem);
    return w == 0 ? 64 : w;
  }

  void simple(const Operation& op, NodeKind kind, std::uint8_t sub, std::uint32_t width,
              const std::vector<std::uint32_t>& tokens) {
    const auto idx = index_of(add(kind, op));
    operands(idx, tokens);
    std::uint32_t count = 0;
    const std::uint32_t first = define_results(op, count);
    // The scalar ops the lowering computes read their operands and write their result unchecked
    // (`arith.addi +a, %b` left one operand and read past it: fuzz_ttgir, docs/reliability.md).
    const std::size_t takes = kind == NodeKind::kBinary || kind == NodeKind::kCmp ? 2
                              : kind == NodeKind::kSelect                         ? 3
                              : kind == NodeKind::kCast                           ? 1
                                                                                  : 0;
    if (kind == NodeKind::kConst || kind == NodeKind::kBinary || kind == NodeKind::kCmp ||
        kind == NodeKind::kSelect || kind == NodeKind::kCast || kind == NodeKind::kProgramId ||
        kind == NodeKind::kNumPrograms) {
      if (tokens.size() != takes)
        doc_.fail(op.pos, "'" + std::string(op.name) + "' takes " + std::to_string(takes) +
                              " operand(s), here " + std::to_string(tokens.size()));
      if (count != 1)
        doc_.fail(op.pos,
                  "'" + std::string(op.name) + "' gives one result, here " + std::to_string(count));
    }
    Node& n = p_.nodes[idx];
    n.sub = sub;
    n.width = static_cast<std::uint8_t>(width);
    n.result = first;
    n.result_count = count;
  }

  void compile(const Operation& op) {
    const std::string name = canonical_name(op.name);
    const OpView v(doc_, op);

    if (name == "arith.constant") {
      const TokenRange r = op.segments.front();
      const Token& t = doc_.token(r.begin);
      std::int64_t value = 0;
      bool known = false;
      if (t.kind == Tok::kInteger) known = parse_integer_literal(t.text, value);
      if (t.kind == Tok::kIdent && (t.text == "true" || t.text == "false")) {
        known = true;
        value = t.text == "true" ? 1 : 0;
      }
      if (!known) return opaque(op, CostRow::kFree, false);
      const std::uint32_t width = t.kind == Tok::kIdent ? 1 : scalar_width(v, 0);
      simple(op, NodeKind::kConst, 0, width, {});
      p_.nodes.back().imm = value;
      return;
    }
    for (const auto& b : kBinaries)
      if (name == b.name) {
        if (has_tensor(v)) return opaque(op, cost_row(name), true);
        return simple(op, NodeKind::kBinary, static_cast<std::uint8_t>(b.op), scalar_width(v, 0),
                      v.values());
      }
    if (name == "arith.cmpi") {
      if (has_tensor(v)) return opaque(op, CostRow::kAlu, true);
      const auto pred = std::find(std::begin(kPredicates), std::end(kPredicates), v.keyword());
      if (pred == std::end(kPredicates)) v.fail("unknown predicate");
      return simple(op, NodeKind::kCmp, static_cast<std::uint8_t>(pred - std::begin(kPredicates)),
                    1, v.values());
    }
    if (name == "arith.select") {
      if (has_tensor(v)) return opaque(op, CostRow::kAlu, true);
      return simple(op, NodeKind::kSelect, 0, scalar_width(v, 1), v.values());
    }
    if (name == "arith.extsi" || name == "arith.extui" || name == "arith.trunci" ||
        name == "arith.index_cast" || name == "arith.index_castui" || name == "arith.bitcast") {
      if (has_tensor(v)) return opaque(op, cost_row(name), true);
      const auto types = v.types();
      if (types.size() != 2) v.fail("expected 'FROM to TO' types");
      const std::uint32_t from = integer_width(types[0].elem);
      const std::uint32_t to = integer_width(types[1].elem);
      if (from == 0 || to == 0) return opaque(op, CostRow::kFree, false);  // a float bitcast
      CastKind kind = CastKind::kSignExtend;
      if (name == "arith.trunci") kind = CastKind::kTruncate;
      if (name == "arith.extui" || name == "arith.index_castui") kind = CastKind::kZeroExtend;
      simple(op, NodeKind::kCast, static_cast<std::uint8_t>(kind), to, v.values());
      p_.nodes.back().a = from;
      return;
    }
    if (name.starts_with("arith.") || name.starts_with("math.")) {
      if ((name == "arith.addf" || name == "arith.subf") && fuses_multiply(v))
        return opaque(op, CostRow::kFree, true);  // the FMA the multiply already paid for
      opaque(op, cost_row(name), true);
      if (name == "arith.mulf" && has_tensor(v)) products_.insert(p_.nodes.back().result);
      return;
    }
    if (name == "tt.get_program_id" || name == "tt.get_num_programs") {
      const std::string_view axis = v.keyword();
      if (axis != "x" && axis != "y" && axis != "z") v.fail("expected the axis x, y or z");
      return simple(op, name == "tt.get_program_id" ? NodeKind::kProgramId : NodeKind::kNumPrograms,
                    static_cast<std::uint8_t>(axis[0] - 'x'), 32, {});
    }
    if (name == "scf.for") return compile_for(op);
    if (name == "scf.if") return compile_if(op);
    if (name == "scf.yield") return compile_yield(op);
    if (name == "ttg.local_alloc") return compile_alloc(op);
    if (name == "ttg.memdesc_index" || name == "ttg.memdesc_subslice" ||
        name == "ttg.memdesc_trans" || name == "ttg.memdesc_reshape" ||
        name == "ttg.memdesc_reinterpret")
      return compile_view(op, name == "ttg.memdesc_index");
    if (name == "ttg.local_dealloc") {
      const auto vals = v.values();
      if (!vals.empty()) {
        const std::uint32_t a = slot_alloc(use(vals.front()));
        if (a != kNone) live_ -= p_.allocations[a].bytes;
      }
      add(NodeKind::kNop, op);
      return;
    }
    if (name == "ttng.init_barrier") {
      const auto vals = v.values();
      const auto ints = v.integers();
      if (vals.empty() || ints.empty()) v.fail("expected a barrier and its arrival count");
      Allocation& a = barrier_alloc(vals.front());
      const auto count = static_cast<std::uint32_t>(ints.front());
      if (a.init_count != 0 && a.init_count != count)
        v.fail("the mbarriers of one ttg.local_alloc are initialized with different counts (" +
               std::to_string(a.init_count) + " and " + std::to_string(count) + ")");
      a.init_count = count;
      add(NodeKind::kNop, op).sub = kNopInitBarrier;
      return;
    }
    if (name == "ttng.barrier_expect") {
      const auto vals = v.values();
      if (vals.empty()) v.fail("expected a barrier");
      set_role(v, barrier_alloc(vals.front()), Allocation::kTma);
      add(NodeKind::kNop, op);
      return;
    }
    if (name == "ttng.async_tma_store_wait" || name == "ttng.async_tma_store_token_wait") {
      // Waits for every TMA store before it; with pendings > 0 for all but the last ones, which
      // the lowering does not tell apart (Triton's epilogues wait with 0).
      if (v.attr_int("pendings").value_or(0) == 0) {
        add(NodeKind::kNop, op).sub = kNopStoreWait;
      } else {
        add(NodeKind::kNop, op);
      }
      return;
    }
    if (name == "ttng.async_tma_copy_global_to_local") return compile_tma(op, true);
    if (name == "ttng.async_tma_copy_local_to_global") return compile_tma(op, false);
    if (name == "ttng.warp_group_dot") return compile_dot(op);
    if (name == "ttng.warp_group_dot_wait") {
      simple(op, NodeKind::kDotWait, 0, 64, v.values());
      p_.nodes.back().imm = v.attr_int("pendings").value_or(0);
      return;
    }
    if (name == "ttng.wait_barrier") return compile_wait(op);
    if (name == "ttng.arrive_barrier") return compile_arrive(op);
    if (name == "gpu.barrier" || name == "ttg.barrier" || name == "nvvm.barrier0") {
      add(NodeKind::kCtaBarrier, op);
      return;
    }
    if (name == "ttg.warp_specialize") return compile_warp_specialize(op);
    if (name == "tt.reduce" || name == "tt.scan") {
      std::uint32_t body_ops = 0;
      for (const Region& r : op.regions)
        for (const Operation& inner : r.ops)
          if (!canonical_name(inner.name).ends_with(".return")) ++body_ops;
      opaque(op, reduce_row(op), true, std::max<std::uint32_t>(body_ops, 1), true, true);
      p_.nodes.back().b = 1 + row_chain(op);
      if (const auto values = v.values(); !values.empty())
        operands(index_of(p_.nodes.back()), {values.front()});
      return;
    }
    if (name == "ttg.convert_layout") return opaque(op, convert_row(v), true);
    if (in(kTensorWork, name)) return opaque(op, cost_row(name), true);
    if (in(kFree, name)) return opaque(op, CostRow::kFree, false);
    if (in(kNops, name)) {
      add(NodeKind::kNop, op);
      return;
    }
    if (!op.regions.empty())  // charging it would drop whatever its regions hold
      doc_.fail(op.pos,
                "unknown op '" + std::string(op.name) +
                    "' with regions: outside the TTGIR subset simfa lowers (docs/ttgir.md)");
    if (!rules_.unknown_as_bubble)
      doc_.fail(op.pos, "unknown op '" + std::string(op.name) +
                            "': outside the TTGIR subset simfa lowers (docs/ttgir.md); "
                            "unknown_ops = \"bubble\" charges it as a BUBBLE instead");
    p_.unknown_ops.push_back(std::string(op.name) + " at " + at_text(op.pos));
    opaque(op, CostRow::kUnknown, true);
  }

  // `%iv = %lb to %ub step %s iter_args(%a = %init, ...) -> (types) : type {`
  void compile_for(const Operation& op) {
    const OpView v(doc_, op);
    const TokenRange r = op.segments.front();
    std::uint32_t i = r.begin;
    auto expect_value = [&]() {
      if (doc_.token(i).kind != Tok::kValue) doc_.fail(doc_.token(i).pos, "expected a value");
      return i++;
    };
    auto expect_word = [&](std::string_view w) {
      if (doc_.token(i).kind != Tok::kIdent || doc_.token(i).text != w)
        doc_.fail(doc_.token(i).pos, "expected '" + std::string(w) + "'");
      ++i;
    };
    const std::uint32_t iv_token = expect_value();
    if (doc_.token(i).kind != Tok::kEqual) doc_.fail(doc_.token(i).pos, "expected '='");
    ++i;
    std::vector<std::uint32_t> bounds;
    bounds.push_back(expect_value());
    expect_word("to");
    bounds.push_back(expect_value());
    expect_word("step");
    bounds.push_back(expect_value());
    std::vector<std::uint32_t> iter_names, inits;
    if (doc_.token(i).kind == Tok::kIdent && doc_.token(i).text == "iter_args") {
      i += 2;  // iter_args (
      while (doc_.token(i).kind == Tok::kValue) {
        iter_names.push_back(i);
        i += 2;  // %a =
        inits.push_back(expect_value());
        if (doc_.token(i).kind == Tok::kComma) ++i;
      }
    }
    std::uint32_t width = 64;  // index
    for (std::uint32_t j = r.end; j-- > i;)
      if (doc_.token(j).kind == Tok::kColon && j + 1 < r.end) {
        const std::uint32_t w = integer_width(doc_.token(j + 1).text);
        if (w) width = w;
        break;
      }
    if (op.regions.size() != 1) v.fail("expected one body region");
    std::vector<std::uint32_t> all = bounds;
    all.insert(all.end(), inits.begin(), inits.end());
    const auto idx = index_of(add(NodeKind::kFor, op));
    operands(idx, all);
    std::uint32_t count = 0;
    const std::uint32_t results = define_results(op, count);
    if (count != inits.size())
      v.fail("the loop yields " + std::to_string(inits.size()) + " values but defines " +
             std::to_string(count));
    push_scope(false);
    const Token& ivt = doc_.token(iv_token);
    const std::uint32_t iv = define_one(ivt.text, ivt.pos);
    std::uint32_t iter_first = p_.slot_count;
    for (std::size_t k = 0; k < iter_names.size(); ++k) {
      const Token& t = doc_.token(iter_names[k]);
      const std::uint32_t s = define_one(t.text, t.pos);
      if (k == 0) iter_first = s;
      const std::uint32_t init = p_.operands[p_.nodes[idx].operands + 3 + k];
      slot_alloc(s) = slot_alloc(init);
      slot_desc(s) = slot_desc(init);
      if (results != kNone) {
        slot_alloc(results + static_cast<std::uint32_t>(k)) = slot_alloc(init);
        slot_desc(results + static_cast<std::uint32_t>(k)) = slot_desc(init);
      }
    }
    {
      Node& n = p_.nodes[idx];
      n.width = static_cast<std::uint8_t>(width);
      n.result = results;
      n.result_count = count;
      n.a = iv;
      n.b = iter_first;
    }
    yield_targets_.push_back({iter_first, count});
    loops_.push_back(idx);
    compile_ops(op.regions[0].ops);
    loops_.pop_back();
    yield_targets_.pop_back();
    pop_scope();
    p_.nodes[idx].end = static_cast<std::uint32_t>(p_.nodes.size());
  }

  void compile_if(const Operation& op) {
    const OpView v(doc_, op);
    const auto vals = v.values();
    if (vals.empty() || op.regions.empty()) v.fail("expected a condition and a then-region");
    const auto idx = index_of(add(NodeKind::kIf, op));
    operands(idx, {vals.front()});
    std::uint32_t count = 0;
    const std::uint32_t results = define_results(op, count);
    p_.nodes[idx].result = results;
    p_.nodes[idx].result_count = count;
    yield_targets_.push_back({results, count});
    push_scope(false);
    compile_ops(op.regions[0].ops);
    pop_scope();
    p_.nodes[idx].a = static_cast<std::uint32_t>(p_.nodes.size());
    if (op.regions.size() > 1) {
      push_scope(false);
      compile_ops(op.regions[1].ops);
      pop_scope();
    }
    yield_targets_.pop_back();
    p_.nodes[idx].end = static_cast<std::uint32_t>(p_.nodes.size());
  }

  void compile_yield(const Operation& op) {
    const OpView v(doc_, op);
    const auto vals = v.values();
    if (yield_targets_.empty()) v.fail("scf.yield outside scf.for or scf.if");
    const auto [target, count] = yield_targets_.back();
    if (vals.size() != count)
      v.fail("yields " + std::to_string(vals.size()) + " values, the enclosing op has " +
             std::to_string(count));
    const auto idx = index_of(add(NodeKind::kYield, op));
    operands(idx, vals);
    p_.nodes[idx].a = target;
    for (std::uint32_t k = 0; k < count; ++k) {
      const std::uint32_t from = p_.operands[p_.nodes[idx].operands + k];
      if (slot_alloc(target + k) == kNone) slot_alloc(target + k) = slot_alloc(from);
      if (slot_desc(target + k) == kNone) slot_desc(target + k) = slot_desc(from);
    }
  }

  void compile_alloc(const Operation& op) {
    const OpView v(doc_, op);
    const auto types = v.types();
    if (types.empty() || types.back().kind != TypeKind::kMemdesc)
      v.fail("expected a !ttg.memdesc result type");
    const TypeInfo& t = types.back();
    const bool init = !v.values().empty();
    Allocation a;
    a.pos = op.pos;
    a.shape = t.shape;
    a.bytes = t.elements() * std::max<std::uint32_t>(element_bytes(t.elem), 1);
    a.barriers = t.elem == "i64" && !init;
    const auto id = static_cast<std::uint32_t>(p_.allocations.size());
    p_.allocations.push_back(a);
    live_ += a.bytes;
    peak_ = std::max(peak_, live_);
    const auto idx = index_of(add(NodeKind::kAlloc, op));
    std::uint32_t count = 0;
    const std::uint32_t first = define_results(op, count);
    p_.nodes[idx].result = first;
    p_.nodes[idx].result_count = count;
    p_.nodes[idx].a = id;
    if (first != kNone) slot_alloc(first) = id;
    if (init) opaque(op, CostRow::kSmem, true, 1, false);  // registers to shared memory
  }

  void compile_view(const Operation& op, bool indexed) {
    const OpView v(doc_, op);
    const auto vals = v.values();
    if (vals.empty()) v.fail("expected a memdesc operand");
    const auto types = v.types();
    std::int64_t inner = 1;
    if (indexed && !types.empty())
      for (std::size_t d = 1; d < types.front().shape.size(); ++d) inner *= types.front().shape[d];
    simple(op, NodeKind::kView, indexed ? 1 : 0, 64, vals);
    Node& n = p_.nodes.back();
    n.imm = inner;
    const std::uint32_t src = p_.operands[n.operands];
    if (n.result != kNone) slot_alloc(n.result) = slot_alloc(src);
  }

  Allocation& barrier_alloc(std::uint32_t token) {
    const std::uint32_t a = slot_alloc(use(token));
    if (a == kNone || !p_.allocations[a].barriers)
      doc_.fail(doc_.token(token).pos,
                "%" + std::string(doc_.token(token).text) +
                    " is not an mbarrier of a ttg.local_alloc (an i64 allocation) simfa can trace");
    return p_.allocations[a];
  }

  void set_role(const OpView& v, Allocation& a, Allocation::Role role) {
    if (a.role != Allocation::kUnused && a.role != role)
      v.fail("this mbarrier (allocated at " + at_text(a.pos) +
             ") is both completed by TMA bytes and arrived on by ttng.arrive_barrier; the ISA's "
             "stages keep the two apart");
    a.role = role;
  }

  // `%desc[%c0, %c1] %buf, %bar, %pred` (load) or `%desc[%c0, %c1] %buf` (store).
  // LLVM contracts a tensor multiply and the add or subtract that takes its product into one
  // FFMA (validation/h200/attention/softmax_micro.csv: x * c + d costs what x * c does). Each
  // product fuses once.
  bool fuses_multiply(const OpView& v) {
    if (!has_tensor(v)) return false;
    for (std::uint32_t t : v.values())
      if (products_.erase(use(t)) > 0) return true;
    return false;
  }

  // Triton's Membar pass: a CTA barrier the LLVM lowering adds before `op` (CostRules).
  void membar(const Operation& op) {
    if (rules_.triton_barriers) add(NodeKind::kCtaBarrier, op).site = kNone;
  }

  // The barrier before an mbarrier wait, where the SASS has it: ptxas schedules the register
  // arithmetic that precedes the wait after the barrier (and the try-wait), so the barrier meets
  // right after the last op before it that touches memory or another WarpGroup. In attention it
  // follows the QK^T wait and the softmax runs after it, in both WarpGroups at once
  // (validation/h200/attention/ttgir/attn_fwd_*.sass.gz: BAR.SYNC right after the
  // WARPGROUP.DEPBAR of the QK^T HGMMAs, the MUFU.EX2 after it).
  void membar_before_wait(const Operation& op) {
    if (!rules_.triton_barriers) return;
    auto at = static_cast<std::uint32_t>(p_.nodes.size());
    while (at > block_begin_ && floats_below_barrier(p_.nodes[at - 1], at - 1)) --at;
    membar(op);
    std::rotate(p_.nodes.begin() + at, p_.nodes.end() - 1, p_.nodes.end());
    for (std::uint32_t k = at; k < p_.nodes.size(); ++k) p_.nodes[k].end = k + 1;
  }

  // Register-only work without regions: what ptxas may move below a CTA barrier. Shared-memory
  // traffic and unknown ops stay above it.
  static bool floats_below_barrier(const Node& n, std::uint32_t index) {
    if (n.end != index + 1) return false;
    switch (n.kind) {
      case NodeKind::kConst:
      case NodeKind::kBinary:
      case NodeKind::kCmp:
      case NodeKind::kSelect:
      case NodeKind::kCast:
      case NodeKind::kView:
      case NodeKind::kOpaque:
        return true;
      case NodeKind::kCompute:
        return n.sub != static_cast<std::uint8_t>(CostRow::kSmem) &&
               n.sub != static_cast<std::uint8_t>(CostRow::kUnknown);
      default:
        return false;
    }
  }

  // The elements one thread combines in sequence along a reduction's axis: a WGMMA accumulator
  // spreads each row of N over 4 threads (N/4 each). 0: unknown layout, the lowering takes all
  // of the thread's elements.
  std::uint32_t row_chain(const Operation& op) const {
    const OpView v(doc_, op);
    const auto types = v.types();
    const auto axis = v.attr_int("axis");
    if (types.empty() || types[0].kind != TypeKind::kTensor || !axis ||
        *axis != static_cast<std::int64_t>(types[0].shape.size()) - 1 || types[0].shape.size() != 2)
      return 0;
    if (layout_at(doc_, types[0].encoding_token).name != "ttg.nvidia_mma") return 0;
    return static_cast<std::uint32_t>(std::max<std::int64_t>(types[0].shape[1] / 4, 1));
  }

  // The pipe row of a reduction: its combine region's first op (maxnumf: ALU, addf: FP32).
  CostRow reduce_row(const Operation& op) const {
    for (const Region& r : op.regions)
      for (const Operation& inner : r.ops)
        if (const std::string n = canonical_name(inner.name); !n.ends_with(".return"))
          return cost_row(n);
    return CostRow::kAlu;
  }

  // Membar puts a CTA barrier before a store too: the TMA reads what every WarpGroup wrote to
  // shared memory (the 8-warp GEMM's SASS: BAR.SYNC between its STSMs and the UTMASTG).
  void compile_tma(const Operation& op, bool load) {
    membar(op);
    const OpView v(doc_, op);
    const TokenRange r = op.segments.front();
    std::uint32_t i = r.begin;
    if (doc_.token(i).kind != Tok::kValue) v.fail("expected the descriptor");
    const std::uint32_t desc_token = i++;
    if (doc_.token(i).kind != Tok::kLBracket) v.fail("expected '[' and the coordinates");
    std::vector<std::uint32_t> coords, rest;
    for (++i; i < r.end && doc_.token(i).kind != Tok::kRBracket; ++i)
      if (doc_.token(i).kind == Tok::kValue) coords.push_back(i);
    for (; i < r.end && doc_.token(i).kind != Tok::kColon; ++i)
      if (doc_.token(i).kind == Tok::kValue) rest.push_back(i);
    const std::uint32_t desc = slot_desc(use(desc_token));
    if (desc == kNone)
      doc_.fail(doc_.token(desc_token).pos,
                "%" + std::string(doc_.token(desc_token).text) +
                    " is not a tensor-descriptor kernel argument; simfa rebuilds TensorMaps from "
                    "host descriptors only (tt.make_tensor_descriptor is not lowered)");
    if (coords.size() != p_.descriptors[desc].block.size())
      v.fail(std::to_string(coords.size()) + " coordinates for a rank-" +
             std::to_string(p_.descriptors[desc].block.size()) + " descriptor");
    std::vector<std::uint32_t> ops = coords;
    if (load) {
      if (rest.size() < 2) v.fail("expected the destination, the barrier and the predicate");
      set_role(v, barrier_alloc(rest[1]), Allocation::kTma);
      ops.push_back(rest[1]);
      if (rest.size() > 2) ops.push_back(rest[2]);
    }
    const auto idx = index_of(add(load ? NodeKind::kTmaLoad : NodeKind::kTmaStore, op));
    operands(idx, ops);
    p_.nodes[idx].a = desc;
    p_.nodes[idx].b = static_cast<std::uint32_t>(coords.size());
  }

  void compile_dot(const Operation& op) {
    const OpView v(doc_, op);
    DotInfo info;
    info.shape = dot_shape(v);
    const auto idx = index_of(add(NodeKind::kDot, op));
    std::uint32_t count = 0;
    p_.nodes[idx].result = define_results(op, count);
    p_.nodes[idx].result_count = count;
    p_.nodes[idx].a = static_cast<std::uint32_t>(p_.dots.size());
    // What a thread of the partition holds for this dot: its accumulator, and its A operand when
    // that is a register tensor (attention's P). Dots of loops that run one after the other (the
    // causal kernel's off-band and diagonal loops) do not hold theirs at once: the estimate takes
    // the most that any outermost loop's dots hold.
    Partition& part = p_.partitions[partition_];
    const std::uint64_t threads = 32ULL * part.num_warps;
    std::uint64_t bytes =
        static_cast<std::uint64_t>(info.shape.m * info.shape.n) * info.shape.acc_bytes / threads;
    if (info.shape.register_a)
      bytes += static_cast<std::uint64_t>(info.shape.m * info.shape.k) *
               element_bytes(v.types().front().elem) / threads;
    const std::uint32_t scope = loops_.empty() ? kOutsideLoops : loops_.front();
    std::uint64_t& held = dot_bytes_by_scope_[std::uint64_t{partition_} << 32 | scope];
    held += bytes;
    part.dot_bytes_per_thread = std::max(part.dot_bytes_per_thread, held);
    p_.dots.push_back(info);
    for (std::uint32_t loop : loops_) p_.nodes[loop].sub = 1;
  }

  // `%bar, %phase[, %pred] [deps %a, ...]`
  void compile_wait(const Operation& op) {
    membar_before_wait(op);
    const OpView v(doc_, op);
    const TokenRange r = op.segments.front();
    std::vector<std::uint32_t> vals;
    for (std::uint32_t i = r.begin; i < r.end; ++i) {
      const Token& t = doc_.token(i);
      if (t.kind == Tok::kColon || (t.kind == Tok::kIdent && t.text == "deps")) break;
      if (t.kind == Tok::kValue) vals.push_back(i);
    }
    if (vals.size() < 2) v.fail("expected a barrier and a phase");
    barrier_alloc(vals.front());  // an mbarrier simfa can trace, or an error
    const std::uint32_t alloc = slot_alloc(use(vals.front()));
    simple(op, NodeKind::kWaitBarrier, 0, 64, vals);
    p_.nodes.back().a = alloc;
  }

  void compile_arrive(const Operation& op) {
    const OpView v(doc_, op);
    const auto vals = v.values();
    const auto ints = v.integers();
    if (vals.empty() || ints.empty()) v.fail("expected a barrier and an arrival count");
    set_role(v, barrier_alloc(vals.front()), Allocation::kArrive);
    simple(op, NodeKind::kArriveBarrier, 0, 64, vals);
    Node& n = p_.nodes.back();
    n.imm = ints.front();
    if (n.imm <= 0) v.fail("arrival count must be positive");
    // One thread of the partition arrives `count` times (one RELEASE_STAGE each, from its first
    // WarpGroup); per-thread arrivals come from every thread, one RELEASE per WarpGroup.
    n.b = v.attr_bool("perThread").value_or(false) ? 1 : 0;
    const Partition& part = p_.partitions[partition_];
    n.a = n.b ? static_cast<std::uint32_t>(n.imm) * kThreadsPerWarp *
                    std::min(part.num_warps, kWarpsPerWarpGroup)
              : 1;
  }

  static std::vector<std::int64_t> array_attr(const MlirDocument& doc, TokenRange r,
                                              std::string_view key) {
    std::vector<std::int64_t> out;
    for (std::uint32_t i = r.begin; i + 1 < r.end; ++i) {
      if (doc.token(i).kind != Tok::kIdent || doc.token(i).text != key ||
          doc.token(i + 1).kind != Tok::kEqual)
        continue;
      for (std::uint32_t j = i + 2; j < r.end && doc.token(j).kind != Tok::kRAngle; ++j) {
        std::int64_t v = 0;
        if (doc.token(j).kind == Tok::kInteger && parse_integer_literal(doc.token(j).text, v))
          out.push_back(v);
      }
      break;
    }
    return out;
  }

  void compile_warp_specialize(const Operation& op) {
    const OpView v(doc_, op);
    if (partition_ != 0 || p_.partitions.size() > 1)
      v.fail("a second or nested ttg.warp_specialize: simfa lowers one per kernel");
    if (op.regions.empty()) v.fail("expected a default region");
    const auto captures = v.values(0);
    const auto idx = index_of(add(NodeKind::kWarpSpecialize, op));
    operands(idx, captures);
    std::uint32_t count = 0;
    p_.nodes[idx].result = define_results(op, count);
    p_.nodes[idx].result_count = count;
    p_.nodes[idx].a = 1;

    // Default region: the kernel's own warps, values of the enclosing scope visible.
    push_scope(false);
    compile_ops(op.regions[0].ops);
    pop_scope();
    p_.nodes[idx].b = static_cast<std::uint32_t>(p_.nodes.size());

    const std::vector<std::int64_t> start_ids =
        array_attr(doc_, op.segments.front(), "warpGroupStartIds");
    const std::vector<std::int64_t> registers =
        array_attr(doc_, op.segments.front(), "actualRegisters");
    std::vector<std::uint32_t> sizes;
    for (std::size_t k = 1; k < op.regions.size(); ++k) {
      const std::uint32_t seg = static_cast<std::uint32_t>(k);
      Partition part;
      const TokenRange head = op.segments[seg];
      std::vector<std::uint32_t> args;
      for (std::uint32_t i = head.begin; i < head.end; ++i) {
        const Token& t = doc_.token(i);
        if (t.kind == Tok::kValue && doc_.token(i + 1).kind == Tok::kColon) args.push_back(i);
        if (t.kind == Tok::kIdent && t.text == "num_warps" && i + 2 < head.end) {
          std::int64_t n = 0;
          if (parse_integer_literal(doc_.token(i + 2).text, n)) {
            if (n < 1 || n > kMaxWarps)
              doc_.fail(doc_.token(i + 2).pos, "num_warps(" + std::to_string(n) +
                                                   "): a partition has 1 to " +
                                                   std::to_string(kMaxWarps) + " warps");
            part.num_warps = static_cast<std::uint32_t>(n);
          }
        }
      }
      if (part.num_warps == 0) doc_.fail(op.regions[k].open, "partition without num_warps(N)");
      if (args.size() != captures.size())
        doc_.fail(op.regions[k].open, "the partition takes " + std::to_string(args.size()) +
                                          " arguments but warp_specialize passes " +
                                          std::to_string(captures.size()));
      part.warpgroups = static_cast<std::uint32_t>(ceil_div(part.num_warps, kWarpsPerWarpGroup));
      if (registers.size() == op.regions.size())
        part.registers_per_thread = static_cast<std::uint32_t>(registers[k]);
      sizes.push_back(part.num_warps);
      const auto pidx = static_cast<std::uint32_t>(p_.partitions.size());
      p_.partitions.push_back(part);
      push_scope(true);  // partitions are isolated from above: explicit captures only
      for (std::size_t c = 0; c < args.size(); ++c) {
        const Token& t = doc_.token(args[c]);
        const std::uint32_t s = define_one(t.text, t.pos);
        p_.partitions[pidx].arg_slots.push_back(s);
        const std::uint32_t from = p_.operands[p_.nodes[idx].operands + c];
        slot_alloc(s) = slot_alloc(from);
        slot_desc(s) = slot_desc(from);
      }
      const std::uint32_t saved = partition_;
      partition_ = pidx;
      p_.partitions[pidx].begin = static_cast<std::uint32_t>(p_.nodes.size());
      compile_ops(op.regions[k].ops);
      p_.partitions[pidx].end = static_cast<std::uint32_t>(p_.nodes.size());
      partition_ = saved;
      pop_scope();
    }
    if (registers.size() == op.regions.size())
      p_.partitions[0].registers_per_thread = static_cast<std::uint32_t>(registers[0]);
    // Triton's AllocateWarpGroups: the largest partitions get the lowest warp ids after the
    // default warps (when the dump predates that pass and carries no warpGroupStartIds).
    std::vector<std::size_t> order(sizes.size());
    for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t x, std::size_t y) { return sizes[x] > sizes[y]; });
    std::uint32_t next = p_.num_warps;
    // PTX's setmaxnreg takes 24 to 256 registers; 2^32 - 1 was taken as it was.
    for (const std::int64_t r : registers)
      if (r < 24 || r > 256)
        doc_.fail(op.pos,
                  "actualRegisters holds " + std::to_string(r) + ", outside setmaxnreg's 24..256");
    for (const std::int64_t id : start_ids)
      if (id < 0 || id > kMaxWarps)
        doc_.fail(op.pos, "warpGroupStartIds holds " + std::to_string(id) + ", outside 0.." +
                              std::to_string(kMaxWarps));
    for (std::size_t k : order) {
      Partition& part = p_.partitions[1 + k];
      part.start_warp =
          start_ids.size() == sizes.size() ? static_cast<std::uint32_t>(start_ids[k]) : next;
      next += part.num_warps;
    }
    p_.nodes[idx].end = static_cast<std::uint32_t>(p_.nodes.size());
  }

  void finish() {
    p_.smem_bytes = peak_;
    std::uint32_t first = 0;
    for (Partition& part : p_.partitions) {
      part.first_warpgroup = first;
      first += part.warpgroups;
    }
    std::uint32_t stage = 0;
    std::uint32_t consumers = 0;
    for (Allocation& a : p_.allocations) {
      if (!a.barriers || a.role == Allocation::kUnused) continue;
      a.first_stage = stage;
      std::uint64_t n = 1;
      for (auto d : a.shape) n *= static_cast<std::uint64_t>(d);
      stage += static_cast<std::uint32_t>(n);
      if (stage > 256) doc_.fail(a.pos, "more than 256 mbarriers: the ISA's stage ids are 8-bit");
    }
    p_.stage_count = stage;
    for (const Node& n : p_.nodes) {
      if (n.kind == NodeKind::kWaitBarrier && p_.allocations[n.a].role == Allocation::kUnused)
        doc_.fail(n.pos, "this mbarrier (allocated at " + at_text(p_.allocations[n.a].pos) +
                             ") is never completed by a TMA copy nor arrived on: nothing would "
                             "release the wait");
      if (n.kind != NodeKind::kArriveBarrier) continue;
      const Allocation& a = p_.allocations[slot_alloc_[p_.operands[n.operands]]];
      const std::uint64_t worth = n.a;
      const std::uint32_t init = a.init_count ? a.init_count : 1;
      if (init % worth != 0)
        doc_.fail(n.pos, "an arrival worth " + std::to_string(worth) +
                             " does not divide the mbarrier's count " + std::to_string(init));
      const auto c = static_cast<std::uint32_t>(init / worth);
      if (consumers != 0 && consumers != c)
        doc_.fail(n.pos, "mbarriers released by different numbers of arrivals (" +
                             std::to_string(consumers) + " and " + std::to_string(c) +
                             "): the ISA has one consumers_per_stage per CTA");
      consumers = c;
    }
    p_.consumers_per_stage = consumers ? consumers : 1;
  }

  const MlirDocument& doc_;
  KernelProgram& p_;
  const CostRules& rules_;
  std::unordered_map<const Operation*, std::uint32_t> site_of_;
  std::vector<std::unordered_map<std::string_view, Binding>> scopes_;
  std::vector<bool> isolated_;
  std::vector<std::uint32_t> slot_alloc_, slot_desc_;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> yield_targets_;
  std::vector<std::uint32_t> loops_;
  static constexpr std::uint32_t kOutsideLoops = ~std::uint32_t{0};
  /// Register bytes a thread holds for the dots of one partition and outermost loop (key:
  /// partition << 32 | the loop's node, or kOutsideLoops).
  std::unordered_map<std::uint64_t, std::uint64_t> dot_bytes_by_scope_;
  std::uint32_t partition_ = 0;
  std::uint32_t block_begin_ = 0;  ///< the first node of the region being compiled
  std::uint64_t live_ = 0, peak_ = 0;
  std::unordered_set<std::uint32_t> products_;  ///< slots of tensor mulf results not yet fused
};

}  // namespace

const OpCost& op_cost(CostRow row) {
  return kOpCosts[static_cast<std::size_t>(row)];
}

CostRow cost_row(std::string_view name) {
  for (const CostEntry& e : kCostTable)
    if (e.name == name) return e.row;
  return CostRow::kAlu;
}

KernelProgram::KernelProgram(const MlirDocument& doc, const CostRules& rules) : doc_(&doc) {
  sites = enumerate_sites(doc, /*allow_records=*/true);
  Compiler(doc, *this, rules).run();
}

std::uint32_t KernelProgram::warpgroup_count() const {
  std::uint32_t n = 0;
  for (const Partition& p : partitions) n += p.warpgroups;
  return n;
}

std::uint32_t KernelProgram::partition_of_warp(std::uint32_t warp) const {
  if (warp < partitions[0].num_warps) return 0;
  for (std::uint32_t k = 1; k < partitions.size(); ++k)
    if (warp >= partitions[k].start_warp &&
        warp < partitions[k].start_warp + partitions[k].num_warps)
      return k;
  return kNone;
}

}  // namespace simfa::ttgir
