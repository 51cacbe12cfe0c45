#include "trace_lexer.h"

#include <cstddef>
#include <limits>

namespace simfa::trace {

namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_alnum(char c) {
  return is_alpha(c) || is_digit(c);
}

int hex_digit(char c) {
  if (is_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

struct SizeUnit {
  std::string_view suffix;
  std::int64_t factor;
};
// The same suffixes as manifest sizes (sdk units.h): decimal prefixes are powers of 1000,
// binary ones powers of 1024.
constexpr SizeUnit kSizeUnits[] = {{"B", 1},
                                   {"KB", 1000},
                                   {"MB", 1000 * 1000},
                                   {"GB", 1000 * 1000 * 1000},
                                   {"KiB", std::int64_t{1} << 10},
                                   {"MiB", std::int64_t{1} << 20},
                                   {"GiB", std::int64_t{1} << 30}};

/// Whether only blanks follow position `i` up to the end of its line.
bool continues_line(std::string_view src, std::size_t i) {
  for (; i < src.size(); ++i) {
    if (src[i] == '\n') return true;
    if (src[i] != ' ' && src[i] != '\t' && src[i] != '\r') return false;
  }
  return false;
}

bool fail(std::string* why, std::string text) {
  if (why) *why = std::move(text);
  return false;
}

}  // namespace

bool parse_number(std::string_view text, std::int64_t& value, std::string* why) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  const std::string quoted = "bad number '" + std::string(text) + "'";
  if (text.find('.') != std::string_view::npos) return fail(why, quoted + ": numbers are integers");
  std::int64_t v = 0;
  bool any_digit = false;
  std::size_t i = 0;
  if (text.size() >= 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    for (i = 2; i < text.size(); ++i) {
      if (text[i] == '_') continue;
      int d = hex_digit(text[i]);
      if (d < 0)
        return fail(why, quoted + ": '" + std::string(1, text[i]) + "' is not a hexadecimal digit");
      if (v > (kMax - d) / 16) return fail(why, quoted + ": too large (the limit is 2^63-1)");
      v = v * 16 + d;
      any_digit = true;
    }
    if (!any_digit) return fail(why, quoted + ": no hexadecimal digits after '0x'");
    value = v;
    return true;
  }
  for (; i < text.size() && (is_digit(text[i]) || text[i] == '_'); ++i) {
    if (text[i] == '_') continue;
    int d = text[i] - '0';
    if (v > (kMax - d) / 10) return fail(why, quoted + ": too large (the limit is 2^63-1)");
    v = v * 10 + d;
    any_digit = true;
  }
  if (!any_digit) return fail(why, quoted + ": no digits");
  const std::string_view suffix = text.substr(i);
  if (!suffix.empty()) {
    const SizeUnit* unit = nullptr;
    for (const auto& u : kSizeUnits)
      if (u.suffix == suffix) unit = &u;
    if (!unit)
      return fail(why, quoted + ": '" + std::string(suffix) +
                           "' is not a size unit (B, KB, MB, GB, KiB, MiB, GiB)");
    if (v > kMax / unit->factor) return fail(why, quoted + ": too large (the limit is 2^63-1)");
    v *= unit->factor;
  }
  value = v;
  return true;
}

std::vector<Token> tokenize(std::string_view src) {
  std::vector<Token> out;
  std::uint32_t line = 1;
  std::size_t line_start = 0;
  std::size_t i = 0;
  if (src.substr(0, 3) == "\xEF\xBB\xBF") i = line_start = 3;  // UTF-8 byte-order mark
  auto add = [&](TokenKind kind, std::size_t begin, std::size_t end) {
    Token t;
    t.kind = kind;
    t.pos = Pos{line, static_cast<std::uint32_t>(begin - line_start + 1)};
    t.text = src.substr(begin, end - begin);
    out.push_back(t);
  };
  while (i < src.size()) {
    const char c = src[i];
    if (c == '\n') {
      add(TokenKind::kNewline, i, i + 1);
      ++i;
      ++line;
      line_start = i;
    } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      ++i;
    } else if (c == '#') {
      while (i < src.size() && src[i] != '\n') ++i;
    } else if (c == '\\' && continues_line(src, i + 1)) {
      // A '\' ending a line joins the next one to the statement: no newline token.
      while (src[i] != '\n') ++i;
      ++i;
      ++line;
      line_start = i;
    } else if (is_alpha(c)) {
      std::size_t b = i;
      while (i < src.size() && is_alnum(src[i])) ++i;
      add(TokenKind::kIdent, b, i);
    } else if (is_digit(c)) {
      std::size_t b = i;
      while (i < src.size() && is_alnum(src[i])) ++i;
      // "1.5" is one (bad) token rather than "1", ".", "5"; "0..N" stays "0", "..", "N".
      if (i + 1 < src.size() && src[i] == '.' && is_digit(src[i + 1])) {
        ++i;
        while (i < src.size() && is_alnum(src[i])) ++i;
      }
      add(TokenKind::kNumber, b, i);
      Token& t = out.back();
      if (!parse_number(t.text, t.value, nullptr)) t.kind = TokenKind::kBadNumber;
    } else if (c == '.' && i + 1 < src.size() && src[i + 1] == '.') {
      add(TokenKind::kDotDot, i, i + 2);
      i += 2;
    } else {
      TokenKind kind = TokenKind::kBadCharacter;
      switch (c) {
        case '{':
          kind = TokenKind::kLBrace;
          break;
        case '}':
          kind = TokenKind::kRBrace;
          break;
        case '(':
          kind = TokenKind::kLParen;
          break;
        case ')':
          kind = TokenKind::kRParen;
          break;
        case '[':
          kind = TokenKind::kLBracket;
          break;
        case ']':
          kind = TokenKind::kRBracket;
          break;
        case ',':
          kind = TokenKind::kComma;
          break;
        case ';':
          kind = TokenKind::kSemicolon;
          break;
        case '=':
          kind = TokenKind::kAssign;
          break;
        case '+':
          kind = TokenKind::kPlus;
          break;
        case '-':
          kind = TokenKind::kMinus;
          break;
        case '*':
          kind = TokenKind::kStar;
          break;
        case '/':
          kind = TokenKind::kSlash;
          break;
        case '%':
          kind = TokenKind::kPercent;
          break;
        default:
          break;
      }
      add(kind, i, i + 1);
      ++i;
    }
  }
  add(TokenKind::kEnd, i, i);
  return out;
}

}  // namespace simfa::trace
