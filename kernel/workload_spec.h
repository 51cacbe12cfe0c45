// The --workload argument: which frontend produces the CTA programs, and its parameters.
#pragma once

#include <string>
#include <string_view>

#include "kernel/manifest.h"
#include "kernel/schema_catalog.h"

namespace simfa::kernel {

/// The slot a workload fills; its plugins are of kind "workload" ("workload.gemm").
inline constexpr std::string_view kWorkloadSlot = "workload";

/// Parses a workload spec, one of:
///  - `FRONTEND[:KEY=VALUE,KEY=VALUE...]`, e.g. `gemm:m=4096,n=4096,k=4096`: plugin
///    "workload.FRONTEND"; each VALUE is read like a --set value. Errors are located at file
///    "--workload", line 1, column = 1 + the offset of the offending part in `spec`.
///  - a path ending in ".toml": a file whose [workload] table names `frontend = "gemm"` and
///    holds its parameters; errors at file:line:col.
///  - any other existing file: a trace, plugin "workload.trace" with `path` = the file.
/// A spec that is none of these (a missing file) is an error naming it. Workload plugins have
/// no sub-slots. Throws ManifestError with every error found.
ComponentConfig parse_workload_spec(const std::string& spec, const SchemaCatalog& catalog);

/// Parses `simfa gen`'s `NAME[:KEY=VALUE,...]`: plugin "gen.NAME" (kind "gen"), errors located at
/// "simfa gen", line 1, column = 1 + offset.
ComponentConfig parse_generator_spec(const std::string& spec, const SchemaCatalog& catalog);

}  // namespace simfa::kernel
