#include "kernel/workload_spec.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>
#include <vector>

#include "simfa/spelling.h"

namespace simfa::kernel {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kPrefix = "workload.";

// What an inline spec names: workloads for `--workload`, generators for `simfa gen`.
struct SpecKind {
  std::string_view prefix;    // plugin name prefix: "workload."
  std::string_view slot;      // slot / table name
  std::string_view argument;  // where errors point: "--workload"
};
constexpr SpecKind kWorkloadSpec{kPrefix, kWorkloadSlot, "--workload"};

SourceLocation at_offset(std::size_t offset, std::string_view argument = "--workload") {
  return {std::string(argument), 1, static_cast<std::uint32_t>(offset + 1)};
}

bool is_frontend_name(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
}

std::vector<std::string> frontend_names(const SchemaCatalog& catalog,
                                        std::string_view prefix = kPrefix) {
  std::vector<std::string> names;
  for (const CatalogEntry* e : catalog.entries())
    if (e->name.starts_with(prefix)) names.push_back(e->name.substr(prefix.size()));
  return names;
}

std::string known_frontends(const SchemaCatalog& catalog, std::string_view prefix = kPrefix) {
  const std::vector<std::string> names = frontend_names(catalog, prefix);
  const bool workloads = prefix == kPrefix;
  return names.empty() ? fmt::format("no {} is loaded", workloads ? "workload frontend" : "generator")
                       : fmt::format("{}: {}", workloads ? "frontends" : "generators",
                                     fmt::join(names, ", "));
}

const CatalogEntry* find_frontend(const std::string& name, const SourceLocation& where,
                                  const SchemaCatalog& catalog, Diagnostics& diagnostics,
                                  std::string_view prefix = kPrefix) {
  if (const CatalogEntry* entry = catalog.find(std::string(prefix) + name)) return entry;
  const std::string guess = closest_name(name, frontend_names(catalog, prefix));
  diagnostics.error(where, fmt::format("unknown {} '{}' ({})",
                                       prefix == kPrefix ? "workload frontend" : "generator", name,
                                       guess.empty() ? known_frontends(catalog, prefix)
                                                     : did_you_mean_text(guess)));
  return nullptr;
}

ComponentConfig resolve(const DocTable& table, const CatalogEntry& entry, std::string_view selector,
                        const SchemaCatalog& catalog, Diagnostics& diagnostics,
                        std::string_view slot = kWorkloadSlot) {
  std::vector<ComponentConfig> out;
  resolve_component(table, std::string(slot), entry, selector, catalog, out, diagnostics);
  diagnostics.throw_if_any();
  return std::move(out.front());
}

// FRONTEND[:KEY=VALUE,KEY=VALUE...]
ComponentConfig parse_inline(const std::string& spec, const SchemaCatalog& catalog,
                             const SpecKind& kind = kWorkloadSpec) {
  Diagnostics diagnostics;
  const std::size_t colon = spec.find(':');
  auto at = [&](std::size_t offset) { return at_offset(offset, kind.argument); };
  DocTable table{std::string(kind.slot), at(0), {}, {}};
  const CatalogEntry* entry =
      find_frontend(spec.substr(0, colon), at(0), catalog, diagnostics, kind.prefix);
  std::size_t start = colon + 1;
  while (colon != std::string::npos) {
    const std::size_t end = spec.find(',', start);
    const std::string item = spec.substr(start, end - start);
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      diagnostics.error(at(start), fmt::format("expected KEY=VALUE, got '{}'", item));
    } else if (const DocValue* first = table.value(item.substr(0, eq))) {
      diagnostics.error(at(start),
                        fmt::format("duplicate key '{}' (first given at column {})", first->key,
                                    first->key_where.column));
    } else {
      table.values.push_back(parse_value_text(item.substr(0, eq),
                                              std::string_view(item).substr(eq + 1),
                                              at(start + eq + 1), at(start)));
    }
    if (end == std::string::npos) break;
    start = end + 1;
  }
  if (!entry) diagnostics.raise();
  return resolve(table, *entry, "", catalog, diagnostics, kind.slot);
}

// A TOML file with a [workload] table naming its frontend.
ComponentConfig parse_file(const std::string& path, const SchemaCatalog& catalog) {
  const DocTable root = read_toml_file(path, at_offset(0));
  Diagnostics diagnostics({path});
  for (const DocValue& v : root.values)
    diagnostics.error(v.key_where, fmt::format("key '{}' is outside the [workload] table", v.key));
  for (const DocTable& t : root.tables) {
    if (t.name == kWorkloadSlot) continue;
    diagnostics.error(t.where,
                      fmt::format("unknown table [{}]{}", t.name,
                                  did_you_mean(t.name, {kWorkloadSlot}, NameForm::kTable)));
  }
  const DocTable* table = root.table(kWorkloadSlot);
  if (!table) {
    diagnostics.error(SourceLocation{path, 1, 1}, "missing required table [workload]");
    diagnostics.raise();
  }
  const DocValue* frontend = table->value("frontend");
  const CatalogEntry* entry = nullptr;
  if (!frontend)
    diagnostics.error(table->where, fmt::format("[workload] missing required key 'frontend' ({})",
                                                known_frontends(catalog)));
  else if (frontend->kind != DocValue::Kind::kString)
    diagnostics.error(frontend->where, "[workload] key 'frontend': expected string");
  else
    entry = find_frontend(frontend->text, frontend->where, catalog, diagnostics);
  if (!entry) diagnostics.raise();
  return resolve(*table, *entry, "frontend", catalog, diagnostics);
}

ComponentConfig parse_trace(const std::string& path, const SchemaCatalog& catalog) {
  Diagnostics diagnostics;
  const std::string plugin = std::string(kPrefix) + "trace";
  const CatalogEntry* entry = catalog.find(plugin);
  if (!entry) {
    diagnostics.error(at_offset(0),
                      fmt::format("'{}' is a file, read as a trace by the {} frontend, "
                                  "which is not loaded",
                                  path, plugin));
    diagnostics.raise();
  }
  DocValue file;
  file.key = "path";
  file.kind = DocValue::Kind::kString;
  file.text = path;
  file.where = file.key_where = at_offset(0);
  const DocTable table{std::string(kWorkloadSlot), at_offset(0), {std::move(file)}, {}};
  return resolve(table, *entry, "", catalog, diagnostics);
}

}  // namespace

ComponentConfig parse_workload_spec(const std::string& spec, const SchemaCatalog& catalog) {
  if (spec.ends_with(".toml")) return parse_file(spec, catalog);
  std::error_code ec;
  if (fs::is_regular_file(spec, ec)) return parse_trace(spec, catalog);
  if (is_frontend_name(spec.substr(0, spec.find(':')))) return parse_inline(spec, catalog);
  Diagnostics diagnostics;
  diagnostics.error(
      at_offset(0),
      spec.empty() ? "expected a workload: FRONTEND[:KEY=VALUE,...], a .toml file or a trace file"
      : fs::exists(spec, ec) ? fmt::format("cannot read '{}': not a regular file", spec)
                             : fmt::format("cannot read '{}': {}", spec, std::strerror(ENOENT)));
  diagnostics.raise();
}

ComponentConfig parse_generator_spec(const std::string& spec, const SchemaCatalog& catalog) {
  static constexpr SpecKind kGenerator{"gen.", "gen", "simfa gen"};
  return parse_inline(spec, catalog, kGenerator);
}

}  // namespace simfa::kernel
