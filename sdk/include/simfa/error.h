// Errors a user can cause. They carry a source location (file:line:col) when one is known, so
// every message the CLI prints points at the offending manifest key, trace line or argument.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

#include "simfa/types.h"

namespace simfa {

/// Where a value came from: a file and 1-based line/column, or a description such as
/// "--set l2.assoc=3" or "default". `line == 0` means no position is known.
struct SourceLocation {
  std::string file;
  std::uint32_t line = 0;
  std::uint32_t column = 0;

  std::string str() const {
    if (file.empty()) return "<unknown>";
    if (line == 0) return file;
    return file + ":" + std::to_string(line) + ":" + std::to_string(column);
  }
};

/// Base of every simfa error; `what()` is the complete user-facing message.
class SIMFA_API Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Bad input: manifest, workload, trace, arguments or files (exit code 1).
class SIMFA_API InputError : public Error {
 public:
  InputError(const SourceLocation& where, const std::string& message)
      : Error(where.str() + ": error: " + message), where_(where), message_(message) {}
  explicit InputError(const std::string& message) : Error("error: " + message), message_(message) {}
  const SourceLocation& where() const { return where_; }
  const std::string& message() const { return message_; }

 private:
  SourceLocation where_;
  std::string message_;
};

}  // namespace simfa
