// Human-readable views of component self-descriptions: the `simfa plugins` table, the
// `simfa plugins --describe NAME` page, and docs/manifest-reference.md.
#pragma once

#include <string>

#include "kernel/schema_catalog.h"

namespace simfa::kernel {

/// One row per component: name, version, kind, library path; sorted by name.
std::string format_plugin_list(const SchemaCatalog& catalog);

/// One component: name, version, kind, library, doc, then its parameters (type, unit, default
/// or "required", range, choices, doc), sub-component slots and statistics.
std::string format_describe(const CatalogEntry& entry);

/// The manifest reference in Markdown, grouped by kind. Library paths are left out so the
/// output depends on the schemas alone.
std::string format_reference_markdown(const SchemaCatalog& catalog);

}  // namespace simfa::kernel
