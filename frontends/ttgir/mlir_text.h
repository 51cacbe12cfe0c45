// A reader for the MLIR text Triton dumps (`.ttgir`): MLIR's tokens with their positions, and
// how operations nest into regions. It knows MLIR's lexical grammar and where an operation's
// text ends, not what any operation means; ttgir_module.h gives meaning to the subset the
// frontend lowers. Triton prints one operation a line, a region's `{` last on its line and its
// `}` first on one; the reader relies on that layout and reports anything else with its
// line:col.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "simfa/error.h"

namespace simfa::ttgir {

/// A 1-based line and column; columns count bytes.
struct Pos {
  std::uint32_t line = 0;
  std::uint32_t column = 0;
};

enum class Tok : std::uint8_t {
  kEnd,
  kValue,    ///< %name or %name#3 (text: the name, `use` the result index or -1)
  kHashId,   ///< #loc3, #ttg.nvidia_mma
  kBangId,   ///< !tt.tensordesc
  kCaretId,  ///< ^bb0
  kAtId,     ///< @kernel
  kIdent,    ///< arith.addi, i32, to, 128x64xf16 (a shape is one identifier)
  kInteger,  ///< 42, -1, 0xFF800000
  kFloat,    ///< 1.5, 0.000000e+00
  kString,   ///< "text" (text: without the quotes, escapes kept)
  kLParen,
  kRParen,
  kLBracket,
  kRBracket,
  kLBrace,
  kRBrace,
  kLAngle,
  kRAngle,
  kComma,
  kColon,
  kEqual,
  kArrow,
  kStar,
  kQuestion,
  kPlus,
};

struct Token {
  Tok kind = Tok::kEnd;
  Pos pos;
  std::string_view text;
  std::int32_t use = -1;    ///< kValue: the `#N` result index, -1 when absent
  bool line_start = false;  ///< first token of its line
  bool line_end = false;    ///< last token of its line
};

/// Splits MLIR text into tokens ending with kEnd; `//` comments are skipped. Throws InputError
/// at the first byte that starts no token and at an unterminated string.
std::vector<Token> tokenize_mlir(std::string_view text, const std::string& file);

struct Region;

/// `%a, %b:2 = ...`: a result name and how many values it stands for.
struct ResultDef {
  std::string_view name;
  std::uint32_t count = 1;
  Pos pos;
};

/// A half-open range of token indices.
struct TokenRange {
  std::uint32_t begin = 0;
  std::uint32_t end = 0;
  bool empty() const { return begin == end; }
};

struct Operation {
  std::string_view name;  ///< "arith.addi"; a generic-form name without its quotes
  Pos pos;                ///< where the name is written
  std::uint32_t first_token = 0;  ///< the statement's first token (its results or its name)
  std::uint32_t last_token = 0;   ///< the statement's last token
  std::vector<ResultDef> results;
  /// The op's own tokens around its regions: segments[0] runs from after the name to the first
  /// region's `{`, segments[i] from the `}` of region i-1 to the next `{` or the end.
  std::vector<TokenRange> segments;
  std::vector<Region> regions;
};

struct Region {
  Pos open;  ///< its `{`
  std::vector<Operation> ops;  ///< of its one block (a `^bb0(...)` label is skipped)
};

/// `#mma = #ttg.nvidia_mma<{...}>`: an attribute (or type) alias and its value's tokens.
struct Alias {
  std::string_view name;  ///< with its '#' or '!'
  TokenRange value;
};

/// A whole file: tokens, aliases and top-level operations. Views point into `text`, so the
/// document must not be copied or moved after parse_mlir filled it (hence the deleted copy).
struct MlirDocument {
  std::string file;
  std::string text;
  std::vector<Token> tokens;
  std::vector<Alias> aliases;
  std::vector<Operation> ops;

  MlirDocument() = default;
  MlirDocument(const MlirDocument&) = delete;
  MlirDocument& operator=(const MlirDocument&) = delete;

  const Token& token(std::uint32_t i) const { return tokens[i]; }
  const Alias* alias(std::string_view name) const {
    for (const auto& a : aliases)
      if (a.name == name) return &a;
    return nullptr;
  }
  SourceLocation at(Pos pos) const { return {file, pos.line, pos.column}; }
  [[noreturn]] void fail(Pos pos, const std::string& message) const {
    throw InputError(at(pos), message);
  }
};

/// Tokenizes and parses `doc.text` (doc.file names it in errors) into doc's tokens, aliases and
/// operations. Throws InputError with the position of the first structural error.
void parse_mlir(MlirDocument& doc);

/// Reads a whole file into `doc.text` and parses it; errors name `what` ("TTGIR file").
void read_mlir_file(const std::string& path, MlirDocument& doc, const SourceLocation& where,
                    const char* what);

}  // namespace simfa::ttgir
