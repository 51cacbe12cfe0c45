#include "trace_parser.h"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <limits>
#include <optional>
#include <span>

#include "simfa/error.h"
#include "simfa/spelling.h"
#include "simfa/tensor_map_limits.h"

namespace simfa::trace {

namespace {

constexpr std::size_t kMaxErrors = 20;
/// Bounds the parser's recursion on hostile input; real traces nest a few levels.
constexpr int kMaxBlockDepth = 32;
constexpr int kMaxExprDepth = 200;

struct ParseError {
  Pos pos;
  std::string message;
  bool fatal = false;  ///< the rest of the file cannot be read sensibly
};
struct StopParsing {};

struct ElementType {
  std::string_view name;
  std::int64_t bytes;
};
constexpr ElementType kElementTypes[] = {{"fp8", 1},   {"e4m3", 1}, {"e5m2", 1}, {"int8", 1},
                                         {"fp16", 2},  {"bf16", 2}, {"fp32", 4}, {"tf32", 4},
                                         {"int32", 4}, {"fp64", 8}};

constexpr std::string_view kKeywords[] = {
    "let",    "grid",    "tensormap", "cta", "warpgroup", "repeat", "in",    "smem",
    "stages", "barrier", "min",       "max", "cta_x",     "cta_y",  "cta_z", "wg"};
constexpr std::string_view kCtaBuiltins[] = {"cta", "cta_x", "cta_y", "cta_z"};

bool is_keyword(std::string_view s) {
  return std::find(std::begin(kKeywords), std::end(kKeywords), s) != std::end(kKeywords);
}

std::string pos_text(Pos p) {
  return std::to_string(p.line) + ":" + std::to_string(p.column);
}

/// A variable visible at the parse position: a top-level let (a constant) or a slot.
struct Name {
  std::string_view name;
  Pos pos;
  bool constant = false;
  std::int64_t value = 0;
  std::uint32_t slot = 0;
};

class Parser {
 public:
  Parser(std::string_view source, const std::string& file, const std::vector<Define>& defines,
         const InstructionSet& instructions)
      : tokens_(tokenize(source)), defines_(defines), instructions_(instructions) {
    program_.file = file;
    program_.instructions = &instructions;
  }

  TraceProgram run() {
    try {
      top_level();
      if (grid_pos_.line == 0) record({{}, "the trace declares no grid (add e.g. 'grid 1')"});
      if (program_.cta_pos.line == 0) record({{}, "the trace has no cta block"});
    } catch (const StopParsing&) {
    }
    if (errors_.empty()) return std::move(program_);
    std::string message = errors_.front().message;
    for (std::size_t i = 1; i < errors_.size(); ++i)
      message += "\n" + location(errors_[i].pos).str() + ": error: " + errors_[i].message;
    if (errors_.size() == kMaxErrors)
      message += "\n" + program_.file + ": error: too many errors; stopping";
    throw InputError(location(errors_.front().pos), message);
  }

 private:
  // ---- errors ----------------------------------------------------------------------------------

  SourceLocation location(Pos p) const { return SourceLocation{program_.file, p.line, p.column}; }

  [[noreturn]] void error(Pos pos, std::string message, bool fatal = false) {
    throw ParseError{pos, std::move(message), fatal};
  }

  void record(ParseError e) {
    const bool stop = e.fatal || errors_.size() + 1 == kMaxErrors;
    errors_.push_back(std::move(e));
    if (stop) throw StopParsing{};
  }

  /// After an error: skip the rest of the statement (to the next newline or ';' outside any
  /// block, a block opened on the way skipped whole), or up to the '}' of the enclosing block.
  void recover() {
    group_depth_ = 0;
    std::vector<Pos> open;
    for (;;) {
      const Token& t = tokens_[pos_];
      if (t.kind == TokenKind::kEnd) {
        if (!open.empty())
          record({open.back(), "'{' is never closed (the file ends before its '}')", true});
        return;
      }
      if (open.empty() && (t.kind == TokenKind::kNewline || t.kind == TokenKind::kSemicolon)) {
        ++pos_;
        return;
      }
      if (open.empty() && t.kind == TokenKind::kRBrace) return;
      if (t.kind == TokenKind::kLBrace) open.push_back(t.pos);
      if (t.kind == TokenKind::kRBrace) open.pop_back();
      ++pos_;
    }
  }

  template <typename F>
  void guarded(F&& statement) {
    try {
      statement();
    } catch (ParseError& e) {
      record(std::move(e));
      recover();
    }
  }

  // ---- tokens ----------------------------------------------------------------------------------

  /// The next token; newlines inside parentheses and brackets are skipped.
  const Token& peek() {
    if (group_depth_ > 0)
      while (tokens_[pos_].kind == TokenKind::kNewline) ++pos_;
    return tokens_[pos_];
  }
  Token next() {
    const Token t = peek();
    if (t.kind != TokenKind::kEnd) ++pos_;
    return t;
  }
  bool accept(TokenKind kind) {
    if (peek().kind != kind) return false;
    next();
    return true;
  }
  Token expect(TokenKind kind, const std::string& what) {
    if (peek().kind != kind) error(peek().pos, "expected " + what + ", found " + describe(peek()));
    return next();
  }
  Token expect_name(const std::string& what) {
    const Token t = next();
    if (t.kind != TokenKind::kIdent) error(t.pos, "expected " + what + ", found " + describe(t));
    return t;
  }
  static std::string describe(const Token& t) {
    switch (t.kind) {
      case TokenKind::kEnd:
        return "the end of the file";
      case TokenKind::kNewline:
        return "the end of the line";
      case TokenKind::kBadCharacter: {
        const auto byte = static_cast<unsigned char>(t.text.front());
        if (byte < 0x20 || byte >= 0x7f) {
          constexpr char kHex[] = "0123456789ABCDEF";
          return std::string("an unexpected byte 0x") + kHex[byte >> 4] + kHex[byte & 15];
        }
        return "an unexpected character '" + std::string(t.text) + "'";
      }
      default:
        return "'" + std::string(t.text) + "'";
    }
  }
  /// Where the last consumed token ends: the place of something missing after it.
  Pos end_of_previous() const {
    const Token& t = tokens_[pos_ == 0 ? 0 : pos_ - 1];
    return Pos{t.pos.line, t.pos.column + static_cast<std::uint32_t>(t.text.size())};
  }
  bool at_end_of_statement() {
    const TokenKind k = peek().kind;
    return k == TokenKind::kNewline || k == TokenKind::kSemicolon || k == TokenKind::kRBrace ||
           k == TokenKind::kEnd;
  }
  void end_statement(const std::string& expected) {
    if (!at_end_of_statement())
      error(peek().pos, "expected " + expected + ", found " + describe(peek()));
    if (peek().kind == TokenKind::kNewline || peek().kind == TokenKind::kSemicolon) next();
  }
  void skip_separators() {
    while (peek().kind == TokenKind::kNewline || peek().kind == TokenKind::kSemicolon) next();
  }

  // ---- names -----------------------------------------------------------------------------------

  const Name* find(std::string_view name) const {
    for (auto it = names_.rbegin(); it != names_.rend(); ++it)
      if (it->name == name) return &*it;
    return nullptr;
  }
  void check_new_name(const Token& t) {
    if (is_keyword(t.text)) error(t.pos, "'" + std::string(t.text) + "' is reserved");
    if (const Name* n = find(t.text))
      error(t.pos, "'" + std::string(t.text) + "' is already defined at " + pos_text(n->pos));
  }
  std::uint32_t new_slot() { return program_.slot_count++; }

  /// Restores the visible names when a block ends.
  class Scope {
   public:
    explicit Scope(std::vector<Name>& names) : names_(names), mark_(names.size()) {}
    ~Scope() { names_.resize(mark_); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    std::vector<Name>& names_;
    std::size_t mark_;
  };

  // ---- blocks ----------------------------------------------------------------------------------

  template <typename F>
  void block(const char* what, F&& statement) {
    const Token open = expect(TokenKind::kLBrace, std::string("'{' to open the ") + what + " body");
    if (++block_depth_ > kMaxBlockDepth)
      error(open.pos, "blocks are nested more than 32 deep", true);
    for (;;) {
      skip_separators();
      const Token& t = peek();
      if (t.kind == TokenKind::kRBrace) {
        next();
        break;
      }
      if (t.kind == TokenKind::kEnd)
        error(open.pos,
              std::string("this ") + what + " block is never closed (the file ends before its '}')",
              true);
      guarded(statement);
    }
    --block_depth_;
  }

  // ---- top level -------------------------------------------------------------------------------

  void top_level() {
    for (;;) {
      skip_separators();
      if (peek().kind == TokenKind::kEnd) return;
      guarded([&] { top_statement(); });
    }
  }

  void top_statement() {
    const Token t = next();
    if (t.kind == TokenKind::kRBrace) error(t.pos, "unexpected '}': no block is open");
    if (t.kind != TokenKind::kIdent)
      error(t.pos, "expected a statement (let, grid, tensormap or cta), found " + describe(t));
    if (t.text == "let") return let_statement(true);
    if (t.text == "grid") return grid_statement(t);
    if (t.text == "tensormap") return tensormap_statement();
    if (t.text == "cta") return cta_block(t);
    misplaced(t, false);
    error(t.pos, "unknown statement '" + std::string(t.text) + "'" +
                     did_you_mean(t.text, {"let", "grid", "tensormap", "cta"}));
  }

  /// Errors for words that are valid elsewhere. Each context handles its own words first.
  void misplaced(const Token& t, bool in_warpgroup) {
    if (!in_warpgroup) {
      if (instructions_.find(t.text))
        error(t.pos, "instructions belong inside a warpgroup body");
      if (t.text == "repeat") error(t.pos, "'repeat' belongs inside a warpgroup body");
    }
    for (std::string_view w : {"smem", "stages", "barrier", "warpgroup"})
      if (t.text == w)
        error(t.pos, "'" + std::string(w) + "' belongs directly inside the cta block");
    for (std::string_view w : {"grid", "tensormap", "cta"})
      if (t.text == w)
        error(t.pos, "'" + std::string(w) + "' belongs at the top level of the trace");
  }

  void let_statement(bool top) {
    const Token name = expect_name("a variable name after 'let'");
    check_new_name(name);
    Name n{name.text, name.pos, top, 0, 0};
    try {
      expect(TokenKind::kAssign, "'=' after 'let " + std::string(name.text) + "'");
      if (top) {
        n.value = constant_expression();
        for (const auto& d : defines_)
          if (d.name == name.text) n.value = d.value;
        program_.lets.emplace_back(std::string(name.text), n.value);
      } else {
        const Expr e = expression();
        n.slot = new_slot();
        push_stmt(Stmt{StmtKind::kLet, Opcode::kExit, 0, n.slot, 0, 0, 0, 0, name.pos}, {e});
      }
    } catch (const ParseError&) {
      names_.push_back(n);  // known from here on: its uses are not errors too
      throw;
    }
    names_.push_back(n);
    end_statement("the end of the line after the 'let' value");
  }

  void grid_statement(const Token& keyword) {
    if (grid_pos_.line != 0)
      error(keyword.pos, "'grid' is already declared at " + pos_text(grid_pos_));
    grid_pos_ = keyword.pos;
    // CUDA grid limits: x up to 2^31-1, y and z up to 65535.
    constexpr std::int64_t kLimits[3] = {std::numeric_limits<std::int32_t>::max(), 65535, 65535};
    constexpr const char* kAxes[3] = {"x", "y", "z"};
    for (int d = 0; d < 3; ++d) {
      if (d > 0 && !accept(TokenKind::kComma)) break;
      const Pos at = peek().pos;
      const std::int64_t v = constant_expression();
      if (v < 1 || v > kLimits[d])
        error(at, std::string("grid ") + kAxes[d] + " is " + std::to_string(v) +
                      "; it must be in 1.." + std::to_string(kLimits[d]));
      program_.grid[static_cast<std::size_t>(d)] = static_cast<std::uint64_t>(v);
    }
    end_statement("',' or the end of the line after the grid size (at most 3 dimensions)");
  }

  // ---- tensor maps -----------------------------------------------------------------------------

  struct Entry {
    std::int64_t value;
    Pos pos;
  };

  std::vector<Entry> list() {
    expect(TokenKind::kLBracket, "'[' to start a list");
    ++group_depth_;
    std::vector<Entry> out;
    do {
      const Pos at = peek().pos;
      out.push_back({constant_expression(), at});
    } while (accept(TokenKind::kComma));
    expect(TokenKind::kRBracket, "',' or ']'");
    --group_depth_;
    return out;
  }

  std::int64_t element_bytes() {
    const Token& t = peek();
    if (t.kind == TokenKind::kIdent && !find(t.text)) {
      for (const auto& e : kElementTypes)
        if (e.name == t.text) {
          next();
          return e.bytes;
        }
      std::vector<std::string_view> names;
      for (const auto& e : kElementTypes) names.push_back(e.name);
      error(t.pos, "unknown element type '" + std::string(t.text) + "'" +
                       did_you_mean(t.text, names) +
                       "; give a type (fp8, fp16, bf16, fp32, ...) or a byte count");
    }
    const Pos at = t.pos;
    const std::int64_t v = constant_expression();
    if (v != 1 && v != 2 && v != 4 && v != 8)
      error(at, "an element is 1, 2, 4 or 8 bytes, not " + std::to_string(v));
    return v;
  }

  void tensormap_statement() {
    const Token name = expect_name("a TensorMap name after 'tensormap'");
    for (const auto& [map, pos] : map_names_)
      if (map == name.text)
        error(name.pos,
              "TensorMap '" + std::string(map) + "' is already declared at " + pos_text(pos));
    if (program_.maps.size() > std::numeric_limits<std::uint16_t>::max())
      error(name.pos, "more than 65536 TensorMaps");
    // Declared even when its attributes are bad, so that its uses are not errors too.
    map_names_.emplace_back(name.text, name.pos);
    try {
      program_.maps.push_back(tensormap_attributes(name));
      map_ok_.push_back(true);
    } catch (const ParseError&) {
      program_.maps.emplace_back();
      map_ok_.push_back(false);
      throw;
    }
  }

  TensorMap tensormap_attributes(const Token& name) {
    TensorMap m;
    m.name = std::string(name.text);
    std::optional<Entry> base, elem;
    std::optional<std::vector<Entry>> shape, stride, box;
    Pos stride_pos, box_pos;
    while (peek().kind == TokenKind::kIdent) {
      const Token key = next();
      expect(TokenKind::kAssign, "'=' after '" + std::string(key.text) + "'");
      const Pos at = peek().pos;
      auto given_once = [&](const auto& slot) {
        if (slot) error(key.pos, "'" + std::string(key.text) + "' is given twice");
      };
      if (key.text == "base") {
        given_once(base);
        base = Entry{constant_expression(), at};
      } else if (key.text == "elem") {
        given_once(elem);
        elem = Entry{element_bytes(), at};
      } else if (key.text == "shape") {
        given_once(shape);
        shape = list();
      } else if (key.text == "stride") {
        given_once(stride);
        stride_pos = at;
        stride = list();
      } else if (key.text == "box") {
        given_once(box);
        box_pos = at;
        box = list();
      } else {
        error(key.pos, "unknown TensorMap attribute '" + std::string(key.text) + "'" +
                           did_you_mean(key.text, {"base", "elem", "shape", "stride", "box"}));
      }
    }
    end_statement("a TensorMap attribute (base=, elem=, shape=, stride=, box=)");
    const std::string quoted = "TensorMap '" + m.name + "'";
    if (!base) error(name.pos, quoted + " needs base=ADDRESS");
    if (!elem) error(name.pos, quoted + " needs elem=TYPE (fp16, bf16, fp8, fp32, ...) or bytes");
    if (!shape)
      error(name.pos, quoted + " needs shape=[...] (elements, innermost dimension first)");
    if (!box) error(name.pos, quoted + " needs box=[...] (the tile each load moves)");

    // The lists' lengths here; the values against cuTensorMapEncodeTiled's limits in the one
    // check every frontend uses (simfa/tensor_map_limits.h). A value no field holds (negative,
    // or a box entry past 2^32) is kept as 0, which breaks the limits.
    if (base->value < 0)
      error(base->pos, quoted + ": base must be a non-negative multiple of 16 bytes");
    m.base = static_cast<Addr>(base->value);
    m.elem_bytes = static_cast<std::uint32_t>(elem->value);
    if (shape->size() > kMaxTensorRank)
      error(shape->front().pos, quoted + ": rank is 1 to 5, but shape has " +
                                    std::to_string(shape->size()) + " entries");
    m.rank = static_cast<std::uint32_t>(shape->size());
    auto held = [](std::int64_t v, std::uint64_t max) {
      return v < 0 || static_cast<std::uint64_t>(v) > max ? 0 : static_cast<std::uint64_t>(v);
    };
    constexpr std::uint64_t kAny = std::numeric_limits<std::uint64_t>::max();
    for (std::uint32_t d = 0; d < m.rank; ++d) m.shape[d] = held((*shape)[d].value, kAny);
    m.stride[0] = m.elem_bytes;
    if (stride) {
      if (stride->size() != m.rank - 1)
        error(stride_pos, quoted + ": stride lists the byte strides of dimensions 1.." +
                              std::to_string(m.rank - 1) + ", so it has " +
                              std::to_string(m.rank - 1) + " entries for rank " +
                              std::to_string(m.rank) + ", not " + std::to_string(stride->size()));
      for (std::uint32_t d = 1; d < m.rank; ++d) m.stride[d] = held((*stride)[d - 1].value, kAny);
    } else {  // packed: each dimension's stride the size of the one inside it
      for (std::uint32_t d = 1; d < m.rank; ++d)
        if (__builtin_mul_overflow(m.stride[d - 1], m.shape[d - 1], &m.stride[d]))
          m.stride[d] = kAny;
    }
    if (box->size() != m.rank)
      error(box_pos, quoted + ": box has " + std::to_string(box->size()) +
                         " entries but the rank is " + std::to_string(m.rank));
    for (std::uint32_t d = 0; d < m.rank; ++d)
      m.box[d] = static_cast<std::uint32_t>(
          held((*box)[d].value, std::numeric_limits<std::uint32_t>::max()));
    if (const std::optional<TensorMapFault> fault = tensor_map_fault(m)) {
      using Part = TensorMapFault::Part;
      const std::uint32_t d = fault->dim;
      switch (fault->part) {
        case Part::kBase:
          error(base->pos, quoted + ": " + fault->message);
        case Part::kShape:
          error((*shape)[d].pos, quoted + ": " + fault->message);
        case Part::kStride:
          // The innermost stride is the element's, which nothing here can break.
          if (stride) error((*stride)[d - 1].pos, quoted + ": " + fault->message);
          error((*shape)[d - 1].pos, quoted + ": " + fault->message +
                                         " (the packed stride of dimension " + std::to_string(d) +
                                         "; give stride=[...])");
        case Part::kBox:
          error((*box)[d].pos, quoted + ": " + fault->message);
      }
    }
    return m;
  }

  // ---- the cta block ---------------------------------------------------------------------------

  void cta_block(const Token& keyword) {
    if (program_.cta_pos.line != 0)
      error(keyword.pos,
            "a trace has one cta block; the first is at " + pos_text(program_.cta_pos));
    program_.cta_pos = keyword.pos;
    Scope scope(names_);
    const std::uint32_t slots[] = {kSlotCta, kSlotCtaX, kSlotCtaY, kSlotCtaZ};
    for (std::size_t i = 0; i < 4; ++i)
      names_.push_back(Name{kCtaBuiltins[i], {}, false, 0, slots[i]});
    block("cta", [&] { cta_statement(); });
    if (program_.warpgroup_names.empty())
      error(keyword.pos, "the cta block declares no warpgroups");
  }

  /// `key=expr` attributes of a header, in any order; absent ones are empty.
  std::vector<std::optional<Expr>> attributes(std::initializer_list<std::string_view> keys) {
    std::vector<std::optional<Expr>> out(keys.size());
    while (peek().kind == TokenKind::kIdent) {
      const Token key = next();
      const auto it = std::find(keys.begin(), keys.end(), key.text);
      if (it == keys.end())
        error(key.pos, "unknown attribute '" + std::string(key.text) + "'" +
                           did_you_mean(key.text, std::vector<std::string_view>(keys)));
      auto& slot = out[static_cast<std::size_t>(it - keys.begin())];
      if (slot) error(key.pos, "'" + std::string(key.text) + "' is given twice");
      expect(TokenKind::kAssign, "'=' after '" + std::string(key.text) + "'");
      slot = expression();
    }
    return out;
  }

  Expr constant(std::int64_t v) {
    const auto at = static_cast<std::uint32_t>(program_.code.size());
    program_.code.push_back(ExprStep{ExprOp::kConst, 0, v, {}});
    return Expr{at, at + 1, {}};
  }

  void once(Pos& first, const Token& keyword) {
    if (first.line != 0)
      error(keyword.pos,
            "'" + std::string(keyword.text) + "' is already declared at " + pos_text(first));
    first = keyword.pos;
  }

  void cta_statement() {
    const Token t = next();
    if (t.kind != TokenKind::kIdent)
      error(t.pos, "expected let, smem, stages, barrier or warpgroup, found " + describe(t));
    if (t.text == "let") return let_statement(false);
    if (t.text == "warpgroup") return warpgroup(t);
    if (t.text == "smem") {
      once(smem_pos_, t);
      const Expr bytes = expression();
      push_stmt(Stmt{StmtKind::kSmem, Opcode::kExit, 0, kNoSlot, 0, 0, 0, 0, t.pos}, {bytes});
      return end_statement("the end of the line after the smem size");
    }
    if (t.text == "stages") {
      once(stages_pos_, t);
      const Expr count = expression();
      auto attrs = attributes({"consumers"});
      push_stmt(Stmt{StmtKind::kStages, Opcode::kExit, 0, kNoSlot, 0, 0, 0, 0, t.pos},
                {count, attrs[0] ? *attrs[0] : constant(1)});
      return end_statement("'consumers=' or the end of the line");
    }
    if (t.text == "barrier") {
      const Expr id = expression();
      auto attrs = attributes({"participants"});
      if (!attrs[0])
        error(end_of_previous(), "barrier needs participants=N (WarpGroups that arrive or wait)");
      push_stmt(Stmt{StmtKind::kBarrier, Opcode::kExit, 0, kNoSlot, 0, 0, 0, 0, t.pos},
                {id, *attrs[0]});
      return end_statement("the end of the line after the barrier");
    }
    misplaced(t, false);
    error(t.pos, "unknown statement '" + std::string(t.text) + "' in the cta block" +
                     did_you_mean(t.text, {"let", "smem", "stages", "barrier", "warpgroup"}));
  }

  void warpgroup(const Token& keyword) {
    const Token name = expect_name("a warpgroup name");
    for (const auto& n : program_.warpgroup_names)
      if (n == name.text) error(name.pos, "warpgroup '" + n + "' is already declared");
    // Named before its header is read: a bad header does not also leave the CTA without one.
    const auto name_index = static_cast<std::uint32_t>(program_.warpgroup_names.size());
    program_.warpgroup_names.emplace_back(name.text);
    auto attrs = attributes({"regs", "count"});
    if (!attrs[0])
      error(name.pos, "warpgroup '" + std::string(name.text) +
                          "' needs regs=N (registers per thread, e.g. regs=24 for a producer)");
    const auto index = static_cast<std::uint32_t>(program_.stmts.size());
    push_stmt(
        Stmt{StmtKind::kWarpGroup, Opcode::kExit, 0, kNoSlot, 0, 0, 0, name_index, keyword.pos},
        {attrs[1] ? *attrs[1] : constant(1), *attrs[0]});
    Scope scope(names_);
    names_.push_back(Name{"wg", {}, false, 0, kSlotWg});
    block("warpgroup", [&] { body_statement(true); });
    program_.stmts[index].end = static_cast<std::uint32_t>(program_.stmts.size());
  }

  // ---- warpgroup bodies ------------------------------------------------------------------------

  void body_statement(bool warpgroup_top) {
    const Token& t = peek();
    if (t.kind != TokenKind::kIdent)
      error(t.pos, "expected an instruction, 'repeat' or 'let', found " + describe(t));
    if (t.text == "let") {
      next();
      return let_statement(false);
    }
    if (t.text == "repeat") return repeat_statement(next());
    misplaced(t, true);
    instruction(warpgroup_top);
  }

  void repeat_statement(const Token& keyword) {
    std::vector<Expr> operands;
    std::optional<Token> variable;
    if (peek().kind == TokenKind::kIdent && tokens_[pos_ + 1].kind == TokenKind::kIdent &&
        tokens_[pos_ + 1].text == "in") {
      variable = next();
      check_new_name(*variable);
      next();
      operands.push_back(expression());
      expect(TokenKind::kDotDot, "'..' between the first value and the end of the range");
      operands.push_back(expression());
    } else {
      operands.push_back(expression());
    }
    const auto index = static_cast<std::uint32_t>(program_.stmts.size());
    const std::uint32_t slot = variable ? new_slot() : kNoSlot;
    push_stmt(Stmt{StmtKind::kRepeat, Opcode::kExit, 0, slot, 0, 0, 0, 0, keyword.pos}, operands);
    Scope scope(names_);
    if (variable) names_.push_back(Name{variable->text, variable->pos, false, 0, slot});
    block("repeat", [&] { body_statement(false); });
    program_.stmts[index].end = static_cast<std::uint32_t>(program_.stmts.size());
  }

  void instruction(bool warpgroup_top) {
    const Token op = next();
    const InstructionSpec* spec = instructions_.find(op.text);
    if (!spec) {
      std::vector<std::string_view> names;
      for (const InstructionSpec& candidate : instructions_.specs())
        names.emplace_back(candidate.name);
      error(op.pos, "unknown opcode '" + std::string(op.text) + "'" + did_you_mean(op.text, names));
    }
    const std::string sig = signature(*spec);
    const Opcode opcode = instructions_.opcode(*spec);
    const std::span<const OperandSpec> specs = spec->operands;
    Stmt s{StmtKind::kInstruction, opcode, 0, kNoSlot, 0, 0, 0, 0, op.pos};
    std::vector<Expr> operands;
    if (!specs.empty() && specs.front().kind == OperandKind::kTile) {
      // The map, then its rank's coordinates, then the other operands.
      if (at_end_of_statement()) error(end_of_previous(), "missing operand 'map' (" + sig + ")");
      const Token map = expect_name("a TensorMap name");
      s.map = map_id(map);
      while (accept(TokenKind::kComma)) {
        if (at_end_of_statement())
          error(end_of_previous(), "missing operand after ',' (" + sig + ")");
        operands.push_back(expression());
      }
      const Pos after = end_of_previous();
      end_statement("',' or the end of the line");
      const TensorMap& m = program_.maps[s.map];
      const std::size_t need = m.rank + specs.size() - 1;
      std::string what = " coordinates";
      for (const OperandSpec& o : specs.subspan(1)) what += " and a " + std::string(o.name);
      if (operands.empty())
        error(after, std::string("missing operands:") + what + " after the map (" + sig + ")");
      if (operands.size() != need)
        error(map.pos, "rank mismatch: '" + m.name + "' has rank " + std::to_string(m.rank) +
                           ", so " + spec->name + " takes " + std::to_string(m.rank) + what +
                           ", but " + std::to_string(operands.size()) +
                           (operands.size() == 1 ? " operand follows" : " operands follow") +
                           " the map");
    } else {
      const std::size_t n = specs.size();
      for (std::size_t k = 0; k < n; ++k) {
        if (k > 0 && !accept(TokenKind::kComma) && !at_end_of_statement())
          error(peek().pos, "expected ',' between operands, found " + describe(peek()));
        if (at_end_of_statement() || peek().kind == TokenKind::kComma)
          error(end_of_previous(),
                std::string("missing operand '") + specs[k].name + "' (" + sig + ")");
        operands.push_back(expression());
      }
      if (accept(TokenKind::kComma))
        error(peek().pos, "extra operand: " + std::string(spec->name) + " takes " +
                              (n == 0 ? std::string("no operands")
                                      : std::to_string(n) + " operand" + (n > 1 ? "s" : "")) +
                              (n == 0 ? "" : " (" + sig + ")"));
      end_statement(n == 0 ? "the end of the line (" + std::string(spec->name) +
                                 " takes no operands)"
                           : "the end of the line after the operands (" + sig + ")");
    }
    if (opcode == Opcode::kExit) {
      skip_separators();
      if (!warpgroup_top || peek().kind != TokenKind::kRBrace)
        error(op.pos, "EXIT must be the last statement of a warpgroup body (where it is implicit)");
    }
    push_stmt(s, operands);
  }

  std::uint16_t map_id(const Token& t) {
    for (std::size_t i = 0; i < map_names_.size(); ++i)
      if (map_names_[i].first == t.text) {
        if (!map_ok_[i])
          error(t.pos, "TensorMap '" + std::string(t.text) + "' has errors (see above)");
        return static_cast<std::uint16_t>(i);
      }
    std::vector<std::string_view> names;
    for (const auto& [name, pos] : map_names_) names.push_back(name);
    error(t.pos, "undefined TensorMap '" + std::string(t.text) + "'" +
                     (names.empty() ? std::string(" (the trace declares none)")
                                    : did_you_mean(t.text, names)));
  }

  void push_stmt(Stmt s, const std::vector<Expr>& operands) {
    s.operands = static_cast<std::uint32_t>(program_.operands.size());
    s.operand_count = static_cast<std::uint32_t>(operands.size());
    program_.operands.insert(program_.operands.end(), operands.begin(), operands.end());
    program_.stmts.push_back(s);
  }

  // ---- expressions -----------------------------------------------------------------------------

  /// Compiles an expression to postfix code, folding constant subexpressions.
  Expr expression() {
    const Pos at = peek().pos;
    const auto begin = static_cast<std::uint32_t>(program_.code.size());
    expr_depth_ = 0;
    sum();
    const auto end = static_cast<std::uint32_t>(program_.code.size());
    std::uint32_t depth = 0;
    for (std::uint32_t i = begin; i < end; ++i) {
      const ExprOp op = program_.code[i].op;
      if (op == ExprOp::kConst || op == ExprOp::kVar)
        program_.max_stack = std::max(program_.max_stack, ++depth);
      else if (op != ExprOp::kNeg)
        --depth;
    }
    return Expr{begin, end, at};
  }

  /// An expression over top-level lets only, which folds to one constant.
  std::int64_t constant_expression() {
    const Expr e = expression();
    const std::int64_t v = program_.code[e.begin].value;
    program_.code.resize(e.begin);
    return v;
  }

  class Nesting {
   public:
    Nesting(Parser& p, Pos at) : p_(p) {
      if (++p_.expr_depth_ > kMaxExprDepth) p_.error(at, "expression nested too deeply");
    }
    ~Nesting() { --p_.expr_depth_; }
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;

   private:
    Parser& p_;
  };

  void sum() {
    product();
    for (;;) {
      const TokenKind k = peek().kind;
      if (k != TokenKind::kPlus && k != TokenKind::kMinus) return;
      const Token op = next();
      product();
      binary(k == TokenKind::kPlus ? ExprOp::kAdd : ExprOp::kSub, op.pos);
    }
  }

  void product() {
    unary();
    for (;;) {
      const TokenKind k = peek().kind;
      ExprOp op;
      if (k == TokenKind::kStar)
        op = ExprOp::kMul;
      else if (k == TokenKind::kSlash)
        op = ExprOp::kDiv;
      else if (k == TokenKind::kPercent)
        op = ExprOp::kMod;
      else
        return;
      const Token t = next();
      unary();
      binary(op, t.pos);
    }
  }

  void unary() {
    if (peek().kind != TokenKind::kMinus) return primary();
    const Token op = next();
    Nesting nesting(*this, op.pos);
    unary();
    auto& code = program_.code;
    if (code.back().op == ExprOp::kConst) {
      if (const char* problem = apply_op(ExprOp::kNeg, 0, code.back().value, code.back().value))
        error(op.pos, problem);
    } else {
      code.push_back(ExprStep{ExprOp::kNeg, 0, 0, op.pos});
    }
  }

  void binary(ExprOp op, Pos at) {
    auto& code = program_.code;
    const std::size_t n = code.size();  // both operands emitted at least one step each
    if (code[n - 2].op == ExprOp::kConst && code[n - 1].op == ExprOp::kConst) {
      std::int64_t r = 0;
      if (const char* problem = apply_op(op, code[n - 2].value, code[n - 1].value, r))
        error(at, problem);
      code.pop_back();
      code.back().value = r;
      return;
    }
    code.push_back(ExprStep{op, 0, 0, at});
  }

  void primary() {
    const Token t = next();
    switch (t.kind) {
      case TokenKind::kNumber:
        program_.code.push_back(ExprStep{ExprOp::kConst, 0, t.value, t.pos});
        return;
      case TokenKind::kBadNumber: {
        std::string why;
        std::int64_t unused = 0;
        parse_number(t.text, unused, &why);
        error(t.pos, why);
      }
      case TokenKind::kLParen: {
        Nesting nesting(*this, t.pos);
        ++group_depth_;
        sum();
        expect(TokenKind::kRParen, "')'");
        --group_depth_;
        return;
      }
      case TokenKind::kIdent:
        if (t.text == "min" || t.text == "max") return call(t);
        return variable(t);
      default:
        error(t.pos, "expected an expression, found " + describe(t));
    }
  }

  void call(const Token& function) {
    Nesting nesting(*this, function.pos);
    expect(TokenKind::kLParen, "'(' after '" + std::string(function.text) + "'");
    ++group_depth_;
    sum();
    int args = 1;
    while (accept(TokenKind::kComma)) {
      sum();
      binary(function.text == "min" ? ExprOp::kMin : ExprOp::kMax, function.pos);
      ++args;
    }
    if (args < 2) error(function.pos, std::string(function.text) + " needs at least two arguments");
    expect(TokenKind::kRParen, "',' or ')'");
    --group_depth_;
  }

  void variable(const Token& t) {
    if (const Name* n = find(t.text)) {
      if (n->constant)
        program_.code.push_back(ExprStep{ExprOp::kConst, 0, n->value, t.pos});
      else
        program_.code.push_back(ExprStep{ExprOp::kVar, n->slot, 0, t.pos});
      return;
    }
    const std::string quoted = "'" + std::string(t.text) + "'";
    for (std::string_view b : kCtaBuiltins)
      if (t.text == b) error(t.pos, quoted + " is only defined inside the cta block");
    if (t.text == "wg") error(t.pos, "'wg' is only defined inside a warpgroup body");
    for (const auto& [map, pos] : map_names_)
      if (map == t.text)
        error(t.pos,
              quoted +
                  " is a TensorMap; only TMA_LOAD and TMA_STORE take one, as their first operand");
    std::vector<std::string_view> names;
    for (const auto& n : names_) names.push_back(n.name);
    error(t.pos, "undefined variable " + quoted + did_you_mean(t.text, names));
  }

  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
  const std::vector<Define>& defines_;
  const InstructionSet& instructions_;
  TraceProgram program_;
  std::vector<ParseError> errors_;
  std::vector<Name> names_;
  std::vector<std::pair<std::string_view, Pos>> map_names_;  ///< parallel to program_.maps
  std::vector<bool> map_ok_;
  Pos grid_pos_, smem_pos_, stages_pos_;
  int group_depth_ = 0;
  int block_depth_ = 0;
  int expr_depth_ = 0;
};

}  // namespace

TraceProgram parse_trace(std::string_view source, const std::string& file,
                         const std::vector<Define>& defines, const InstructionSet& instructions) {
  return Parser(source, file, defines, instructions).run();
}

}  // namespace simfa::trace
