// Proton's chrome trace of an instrumented kernel (`proton.start(..., data="trace",
// backend="instrumentation")`): `{"traceEvents": [...]}` of complete events (`ph: "X"`) whose
// `pid` is "<kernel> Core<SM> CTA<id>", `tid` "warp <w> (line <n>)", `name` the scope and
// `ts`/`dur` cycles / 1000. Plain or gzip-compressed. Every event keeps its line:col, so the
// translator can point at the event it rejects.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mlir_text.h"
#include "simfa/error.h"

namespace simfa::ttgir {

struct ProtonEvent {
  std::uint32_t cta = 0;
  std::uint32_t warp = 0;
  std::uint32_t name = 0;  ///< index into ProtonTrace::names
  double ts = 0;
  Pos pos;  ///< the event object's '{'
};

struct ProtonTrace {
  std::string file;    ///< as given; positions of a .gz file count in its decompressed text
  std::string kernel;  ///< from the pids
  std::vector<std::string> names;
  std::vector<ProtonEvent> events;  ///< complete events in file order
  std::uint32_t cta_count = 0;      ///< one past the largest CTA id

  SourceLocation at(Pos p) const { return {file, p.line, p.column}; }
};

/// Reads a trace. Throws InputError at `where` for an unreadable file and at the offending
/// line:col for malformed or truncated JSON and events without the fields above.
ProtonTrace read_proton_trace(const std::string& path, const SourceLocation& where);

/// Parses trace text already in memory (`file` names it in errors).
ProtonTrace parse_proton_trace(std::string_view text, const std::string& file);

}  // namespace simfa::ttgir
