// The native trace format's parser (grammar in docs/trace-format.md): text to TraceProgram.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trace_program.h"

namespace simfa::trace {

/// A value for a top-level `let`, given from outside the trace (the `defines` parameter). It
/// replaces the value the trace writes.
struct Define {
  std::string name;
  std::int64_t value = 0;
};

/// Parses a trace written with `instructions`; `file` names it in messages. Throws InputError
/// listing every error found (at most 20), one "file:line:col: error: ..." per line, with the
/// first one's position in where().
TraceProgram parse_trace(std::string_view source, const std::string& file,
                         const std::vector<Define>& defines = {},
                         const InstructionSet& instructions = InstructionSet::hopper());

}  // namespace simfa::trace
