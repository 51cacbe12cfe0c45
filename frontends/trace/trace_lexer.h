// Tokens of the native trace format (docs/trace-format.md). Newlines are tokens: a statement
// ends at the end of its line, unless the line ends with '\'.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace simfa::trace {

/// A 1-based line and column; columns count bytes.
struct Pos {
  std::uint32_t line = 0;
  std::uint32_t column = 0;
};

enum class TokenKind : std::uint8_t {
  kEnd,
  kNewline,
  kIdent,
  kNumber,
  kLBrace,
  kRBrace,
  kLParen,
  kRParen,
  kLBracket,
  kRBracket,
  kComma,
  kSemicolon,
  kAssign,
  kDotDot,
  kPlus,
  kMinus,
  kStar,
  kSlash,
  kPercent,
  kBadNumber,     ///< starts with a digit but is no number ("12abc", "1.5", "0x", too large)
  kBadCharacter,  ///< a byte that starts no token
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  Pos pos;
  std::string_view text;   ///< the spelling, a view into the source
  std::int64_t value = 0;  ///< kNumber: the value, unit applied
};

/// Splits `source` into tokens ending with kEnd. Never fails: what is not a token becomes a
/// kBad* token for the parser to report where it stands.
std::vector<Token> tokenize(std::string_view source);

/// Reads a number token: decimal with an optional size unit (B, KB, MB, GB, KiB, MiB, GiB) or
/// hexadecimal (0x...), '_' allowed between digits. On failure returns false and, when `why`
/// is given, says what is wrong.
bool parse_number(std::string_view text, std::int64_t& value, std::string* why);

}  // namespace simfa::trace
