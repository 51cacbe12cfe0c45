// Instrumentation sites: the TTGIR operations the paper's Stage 2 wraps in Proton scopes, their
// ids (the order they are written in, from 0) and the scope names that encode them
// (`SIMFA|WGMMA|M=128|...|site=5`). The instrumentation pass writes these names; the trace
// translator reads them back and checks each against the TTGIR it is given.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mlir_text.h"

namespace simfa::ttgir {

enum class SiteKind : std::uint8_t {
  kTmaLoad,       ///< ttng.async_tma_copy_global_to_local
  kTmaStore,      ///< ttng.async_tma_copy_local_to_global
  kTmaStoreWait,  ///< ttng.async_tma_store_wait, ttng.async_tma_store_token_wait
  kWgmma,         ///< ttng.warp_group_dot
  kWgmmaWait,     ///< ttng.warp_group_dot_wait
  kMbarWait,      ///< ttng.wait_barrier
  kMbarArrive,    ///< ttng.arrive_barrier
};

/// "TMA_LOAD", "WGMMA", "MBAR_WAIT", ...: the kind field of a scope name.
const char* site_kind_name(SiteKind kind);
/// The site kind of a canonical op name, if it is one.
std::optional<SiteKind> site_kind_of(std::string_view canonical_op);

struct Site {
  std::uint32_t id = 0;
  SiteKind kind = SiteKind::kTmaLoad;
  const Operation* op = nullptr;
  std::string scope;  ///< the proton.record name
};

/// Every site of `doc` in text order. Throws InputError at a site whose operands or types do not
/// say what its scope name must encode, and at a `proton.record` (already instrumented).
std::vector<Site> enumerate_sites(const MlirDocument& doc, bool allow_records = false);

/// A scope name read back from a trace: the paper's `SIMFA|KIND|...|site=N` form or the
/// `<op>_<NNN>[_<shape>]` form of the first device traces (tools/device/triton_trace.py).
struct ScopeName {
  SiteKind kind = SiteKind::kTmaLoad;
  std::uint32_t site = 0;
  bool simfa = false;  ///< the SIMFA form: the whole name must equal the site's scope
};

/// Parses a scope name; nullopt when it is neither form.
std::optional<ScopeName> parse_scope_name(std::string_view name);

}  // namespace simfa::ttgir
