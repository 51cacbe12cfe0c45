// The paper's Stage 2 as a text-to-text pass: `proton.record start "SCOPE"` before and
// `proton.record end "SCOPE"` after every instrumentation site (ttgir_sites.h), in the same
// block and with the op's indentation; every other byte of the input is kept. `simfa ttgir
// instrument IN.ttgir -o OUT.ttgir` calls run_ttgir_instrument. tools/triton_trace.py carries a
// Python port for the device (which has no simfa binary); tests/frontends/ttgir_test.cpp keeps
// the two byte-identical on the committed fixtures.
#pragma once

#include <string>
#include <vector>

#include "ttgir_sites.h"

namespace simfa::ttgir {

/// The instrumented text of `doc` (parsed by parse_mlir), and its sites in `sites` when given.
std::string instrument_ttgir(const MlirDocument& doc, std::vector<Site>* sites = nullptr);

/// Reads `in`, writes its instrumented text to `out` and prints one line per site to stdout
/// ("site 5 line 78: SIMFA|WGMMA|..."). Returns 0; throws simfa::InputError (file:line:col) for
/// an unreadable or malformed input and simfa::Error when `out` cannot be written.
int run_ttgir_instrument(const std::string& in, const std::string& out);

}  // namespace simfa::ttgir
