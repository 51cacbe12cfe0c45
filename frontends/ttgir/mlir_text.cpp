#include "mlir_text.h"

#include <cctype>
#include <charconv>

#include "simfa/input_file.h"

namespace simfa::ttgir {

namespace {

bool is_id_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.' ||
         c == '-';
}
bool is_word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.';
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Bounds on hostile input (each was a crash before it, docs/reliability.md). Triton's kernels nest
// regions a few levels deep (module, function, warp_specialize, partition, loop, if) and give an
// op a few dozen results at most (a loop's carried values).
constexpr int kMaxRegionDepth = 64;
constexpr std::uint32_t kMaxResultCount = 1024;

class Lexer {
 public:
  Lexer(std::string_view text, const std::string& file) : s_(text), file_(file) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    std::uint32_t last_line = 0;
    for (;;) {
      skip_space();
      Token t;
      t.pos = {line_, static_cast<std::uint32_t>(i_ - line_begin_ + 1)};
      if (i_ >= s_.size()) {
        if (!out.empty()) out.back().line_end = true;
        out.push_back(t);
        return out;
      }
      lex_one(t);
      t.line_start = t.pos.line != last_line;
      if (t.line_start && !out.empty()) out.back().line_end = true;
      last_line = t.pos.line;
      out.push_back(t);
    }
  }

 private:
  void skip_space() {
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == '\n') {
        ++i_;
        ++line_;
        line_begin_ = i_;
      } else if (c == ' ' || c == '\t' || c == '\r') {
        ++i_;
      } else if (c == '/' && i_ + 1 < s_.size() && s_[i_ + 1] == '/') {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      } else {
        return;
      }
    }
  }

  [[noreturn]] void fail(Pos pos, const std::string& message) const {
    throw InputError(SourceLocation{file_, pos.line, pos.column}, message);
  }

  std::string_view take_while(std::size_t from, bool (*pred)(char)) {
    std::size_t j = from;
    while (j < s_.size() && pred(s_[j])) ++j;
    const std::string_view v = s_.substr(from, j - from);
    i_ = j;
    return v;
  }

  void lex_one(Token& t) {
    const char c = s_[i_];
    const char next = i_ + 1 < s_.size() ? s_[i_ + 1] : '\0';
    switch (c) {
      case '%': {
        t.kind = Tok::kValue;
        t.text = take_while(i_ + 1, is_id_char);
        if (t.text.empty()) fail(t.pos, "expected a value name after '%'");
        if (i_ < s_.size() && s_[i_] == '#' && i_ + 1 < s_.size() && is_digit(s_[i_ + 1])) {
          const Pos at{line_, static_cast<std::uint32_t>(i_ - line_begin_ + 2)};
          const std::string_view n = take_while(i_ + 1, is_digit);
          const auto [ptr, ec] = std::from_chars(n.data(), n.data() + n.size(), t.use);
          if (ec != std::errc()) fail(at, "result index #" + std::string(n) + " is too large");
        }
        return;
      }
      case '#': t.kind = Tok::kHashId; break;
      case '!': t.kind = Tok::kBangId; break;
      case '^': t.kind = Tok::kCaretId; break;
      case '@': t.kind = Tok::kAtId; break;
      case '"': {
        std::size_t j = i_ + 1;
        while (j < s_.size() && s_[j] != '"' && s_[j] != '\n') j += s_[j] == '\\' ? 2 : 1;
        if (j >= s_.size() || s_[j] != '"') fail(t.pos, "unterminated string");
        t.kind = Tok::kString;
        t.text = s_.substr(i_ + 1, j - i_ - 1);
        i_ = j + 1;
        return;
      }
      case '(': return punct(t, Tok::kLParen, 1);
      case ')': return punct(t, Tok::kRParen, 1);
      case '[': return punct(t, Tok::kLBracket, 1);
      case ']': return punct(t, Tok::kRBracket, 1);
      case '{': return punct(t, Tok::kLBrace, 1);
      case '}': return punct(t, Tok::kRBrace, 1);
      case '<': return punct(t, Tok::kLAngle, 1);
      case '>': return punct(t, Tok::kRAngle, 1);
      case ',': return punct(t, Tok::kComma, 1);
      case ':': return punct(t, Tok::kColon, 1);
      case '=': return punct(t, Tok::kEqual, 1);
      case '*': return punct(t, Tok::kStar, 1);
      case '?': return punct(t, Tok::kQuestion, 1);
      case '+': return punct(t, Tok::kPlus, 1);
      case '-':
        if (next == '>') return punct(t, Tok::kArrow, 2);
        if (is_digit(next)) return number(t);
        fail(t.pos, "unexpected '-'");
      default:
        if (is_digit(c)) return number(t);
        if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
          t.kind = Tok::kIdent;
          t.text = take_while(i_, is_word_char);
          return;
        }
        fail(t.pos, std::string("unexpected character '") + c + "'");
    }
    // A sigil followed by an identifier.
    t.text = take_while(i_ + 1, is_word_char);
    if (t.text.empty()) fail(t.pos, std::string("expected a name after '") + c + "'");
    t.text = s_.substr(i_ - t.text.size() - 1, t.text.size() + 1);
  }

  void punct(Token& t, Tok kind, std::size_t n) {
    t.kind = kind;
    t.text = s_.substr(i_, n);
    i_ += n;
  }

  // 42, -1, 0xFF, 1.5e-3, and shapes such as 128x64xf16 (an identifier).
  void number(Token& t) {
    const std::size_t from = i_;
    std::size_t j = i_ + (s_[i_] == '-' ? 1 : 0);
    if (s_[j] == '0' && j + 1 < s_.size() && s_[j + 1] == 'x' && j + 2 < s_.size() &&
        std::isxdigit(static_cast<unsigned char>(s_[j + 2]))) {
      j += 2;
      while (j < s_.size() && std::isxdigit(static_cast<unsigned char>(s_[j]))) ++j;
      t.kind = Tok::kInteger;
    } else {
      while (j < s_.size() && is_digit(s_[j])) ++j;
      if (j < s_.size() && s_[j] == 'x' && s_[from] != '-') {
        t.kind = Tok::kIdent;
        while (j < s_.size() && is_word_char(s_[j])) ++j;
      } else if (j < s_.size() && (s_[j] == '.' || s_[j] == 'e' || s_[j] == 'E')) {
        t.kind = Tok::kFloat;
        if (s_[j] == '.') {
          ++j;
          while (j < s_.size() && is_digit(s_[j])) ++j;
        }
        if (j < s_.size() && (s_[j] == 'e' || s_[j] == 'E')) {
          ++j;
          if (j < s_.size() && (s_[j] == '+' || s_[j] == '-')) ++j;
          while (j < s_.size() && is_digit(s_[j])) ++j;
        }
      } else {
        t.kind = Tok::kInteger;
      }
    }
    t.text = s_.substr(from, j - from);
    i_ = j;
  }

  std::string_view s_;
  const std::string& file_;
  std::size_t i_ = 0;
  std::size_t line_begin_ = 0;
  std::uint32_t line_ = 1;
};

bool opens(Tok k) {
  return k == Tok::kLParen || k == Tok::kLBracket || k == Tok::kLAngle || k == Tok::kLBrace;
}
bool closes(Tok k) {
  return k == Tok::kRParen || k == Tok::kRBracket || k == Tok::kRAngle || k == Tok::kRBrace;
}

class Parser {
 public:
  explicit Parser(MlirDocument& doc) : doc_(doc), t_(doc.tokens) {}

  void run() {
    while (t_[i_].kind != Tok::kEnd) {
      if (t_[i_].kind == Tok::kRBrace) doc_.fail(t_[i_].pos, "'}' closes no region");
      if ((t_[i_].kind == Tok::kHashId || t_[i_].kind == Tok::kBangId) &&
          t_[i_ + 1].kind == Tok::kEqual) {
        alias();
        continue;
      }
      doc_.ops.push_back(operation());
    }
  }

 private:
  const Token& cur() const { return t_[i_]; }

  // `#name = value` up to the end of its line (brackets balanced).
  void alias() {
    Alias a;
    a.name = cur().text;
    i_ += 2;
    a.value.begin = i_;
    int depth = 0;
    for (;;) {
      const Token& t = cur();
      if (t.kind == Tok::kEnd) doc_.fail(t_[a.value.begin].pos, "unterminated alias definition");
      if (opens(t.kind)) ++depth;
      if (closes(t.kind)) --depth;
      ++i_;
      if (depth <= 0 && t.line_end) break;
    }
    a.value.end = i_;
    doc_.aliases.push_back(a);
  }

  Operation operation() {
    Operation op;
    op.first_token = i_;
    while (cur().kind == Tok::kValue) {
      ResultDef r;
      r.name = cur().text;
      r.pos = cur().pos;
      ++i_;
      if (cur().kind == Tok::kColon && t_[i_ + 1].kind == Tok::kInteger) {
        const Token& n = t_[i_ + 1];
        const char* end = n.text.data() + n.text.size();
        const auto [ptr, ec] = std::from_chars(n.text.data(), end, r.count);
        if (ec != std::errc() || ptr != end || r.count == 0 || r.count > kMaxResultCount)
          doc_.fail(n.pos, "%" + std::string(r.name) + ":" + std::string(n.text) +
                               ": a result group holds 1 to " + std::to_string(kMaxResultCount) +
                               " values");
        i_ += 2;
      }
      op.results.push_back(r);
      if (cur().kind == Tok::kComma) {
        ++i_;
        continue;
      }
      if (cur().kind != Tok::kEqual) doc_.fail(cur().pos, "expected '=' after the results");
      ++i_;
      break;
    }
    if (cur().kind != Tok::kIdent && cur().kind != Tok::kString)
      doc_.fail(cur().pos, cur().kind == Tok::kEnd ? std::string("unexpected end of file")
                                                    : "expected an operation name, got '" +
                                                          std::string(cur().text) + "'");
    op.name = cur().text;
    op.pos = cur().pos;
    const bool single_token = cur().line_end;
    ++i_;
    TokenRange seg{i_, i_};
    if (single_token) {  // e.g. `gpu.barrier`, `tt.return`
      op.segments.push_back(seg);
      op.last_token = i_ - 1;
      return op;
    }
    int depth = 0;
    for (;;) {
      const Token& t = cur();
      if (t.kind == Tok::kEnd) doc_.fail(op.pos, "unexpected end of file inside '" +
                                                     std::string(op.name) + "'");
      if (t.kind == Tok::kLBrace && t.line_end) {
        seg.end = i_;
        op.segments.push_back(seg);
        ++i_;
        op.regions.push_back(region(t.pos));
        // The region's `}` is cur(); the op goes on after it on the same line, inside an open
        // bracket (`})`), or on a line that names the next region (`partition0(...) {`).
        const Token& close = cur();
        ++i_;
        seg = {i_, i_};
        if (close.pos.column != t_[op.first_token].pos.column)
          doc_.fail(close.pos, "this '}' closes the region opened at " +
                                   std::to_string(t.pos.line) + ":" + std::to_string(t.pos.column) +
                                   " but does not line up with its op at column " +
                                   std::to_string(t_[op.first_token].pos.column) +
                                   ": a '}' is missing or extra");
        const bool same_line = cur().kind != Tok::kEnd && !cur().line_start;
        if (!same_line && depth == 0 && !continues()) {
          op.segments.push_back(seg);
          op.last_token = static_cast<std::uint32_t>(&close - t_.data());
          return op;
        }
        continue;
      }
      if (opens(t.kind)) ++depth;
      if (closes(t.kind)) {
        if (--depth < 0) doc_.fail(t.pos, "unbalanced '" + std::string(t.text) + "'");
      }
      ++i_;
      if (depth == 0 && t.line_end && !continues()) {
        seg.end = i_;
        op.segments.push_back(seg);
        op.last_token = i_ - 1;
        return op;
      }
    }
  }

  // A line that starts with a bare word (`default`, `partition0(...)`) goes on with the op
  // before it: every op name has a dialect prefix, and results start with '%'.
  bool continues() const {
    return cur().kind == Tok::kIdent && cur().text.find('.') == std::string_view::npos &&
           t_[i_ + 1].kind != Tok::kEqual && cur().text != "module";
  }

  Region region(Pos open) {
    if (depth_ == kMaxRegionDepth)
      doc_.fail(open, "regions nested more than " + std::to_string(kMaxRegionDepth) + " deep");
    ++depth_;
    Region r;
    r.open = open;
    bool labelled = false;
    for (;;) {
      const Token& t = cur();
      if (t.kind == Tok::kEnd) doc_.fail(open, "region not closed by '}'");
      if (t.kind == Tok::kRBrace) {
        --depth_;
        return r;
      }
      if (t.kind == Tok::kCaretId) {
        if (labelled || !r.ops.empty())
          doc_.fail(t.pos, "a region with several blocks is outside the TTGIR subset simfa reads");
        labelled = true;
        while (cur().kind != Tok::kEnd && !cur().line_end) ++i_;
        ++i_;
        continue;
      }
      r.ops.push_back(operation());
    }
  }

  MlirDocument& doc_;
  const std::vector<Token>& t_;
  std::uint32_t i_ = 0;
  int depth_ = 0;  ///< regions open around the op being read
};

}  // namespace

std::vector<Token> tokenize_mlir(std::string_view text, const std::string& file) {
  return Lexer(text, file).run();
}

void parse_mlir(MlirDocument& doc) {
  doc.tokens = tokenize_mlir(doc.text, doc.file);
  doc.aliases.clear();
  doc.ops.clear();
  Parser(doc).run();
}

void read_mlir_file(const std::string& path, MlirDocument& doc, const SourceLocation& where,
                    const char* what) {
  if (const std::string why = read_regular_file(path, doc.text); !why.empty())
    throw InputError(where, std::string("cannot read ") + what + " '" + path + "': " + why);
  doc.file = path;
  parse_mlir(doc);
}

}  // namespace simfa::ttgir
