#include "kernel/describe.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include <fmt/format.h>

namespace simfa::kernel {

namespace {

using Row = std::vector<std::string>;

// Columns padded to their widest cell, two spaces apart, no trailing blanks.
std::string text_table(const std::vector<Row>& rows, std::string_view indent) {
  std::vector<std::size_t> width;
  for (const auto& row : rows) {
    width.resize(std::max(width.size(), row.size()));
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line(indent);
    for (std::size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line.append(width[c] - row[c].size() + 2, ' ');
    }
    line.erase(line.find_last_not_of(' ') + 1);
    out += line + '\n';
  }
  return out;
}

// 4096 -> "4KiB": the form a manifest would use, shown beside the byte count.
std::string binary_size(std::int64_t bytes) {
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes <= 0 || bytes % 1024 != 0) return {};
  std::int64_t value = bytes / 1024;
  std::size_t unit = 0;
  while (unit + 1 < std::size(kUnits) && value % 1024 == 0) {
    value /= 1024;
    ++unit;
  }
  return fmt::format("{}{}", value, kUnits[unit]);
}

// 3.35e12 -> "3.35TB/s", for the same reason.
std::string decimal_bandwidth(double bytes_per_second) {
  static constexpr struct {
    double factor;
    const char* unit;
  } kUnits[] = {{1e12, "TB/s"}, {1e9, "GB/s"}, {1e6, "MB/s"}, {1e3, "KB/s"}};
  for (const auto& u : kUnits)
    if (bytes_per_second >= u.factor)
      return fmt::format("{}{}", bytes_per_second / u.factor, u.unit);
  return {};
}

// A slot's description, with the plugin built when the manifest leaves the slot out.
std::string slot_doc(const SlotSpec& slot) {
  return slot.default_plugin.empty()
             ? slot.doc
             : fmt::format("{} (optional, default {})", slot.doc, slot.default_plugin);
}

// Values as a manifest writes them: strings quoted, sizes and bandwidths also with a unit.
std::string format_value(const ParamSpec& spec, const ParamValue& value) {
  return std::visit(
      [&spec](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, bool>) {
          return v ? "true" : "false";
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
          const std::string unit = spec.type == ParamType::kSize ? binary_size(v) : std::string();
          return unit.empty() ? fmt::format("{}", v) : fmt::format("{} ({})", v, unit);
        } else if constexpr (std::is_same_v<T, double>) {
          const std::string unit =
              spec.type == ParamType::kBandwidth ? decimal_bandwidth(v) : std::string();
          return unit.empty() ? fmt::format("{}", v) : fmt::format("{} ({})", v, unit);
        } else {
          return fmt::format("\"{}\"", v);
        }
      },
      value);
}

std::string format_default(const ParamSpec& spec) {
  return spec.default_value ? format_value(spec, *spec.default_value) : "required";
}

std::string format_allowed(const ParamSpec& spec) {
  if (!spec.choices.empty()) {
    std::string out = "one of:";
    for (std::size_t i = 0; i < spec.choices.size(); ++i)
      out += (i == 0 ? " " : ", ") + spec.choices[i];
    return out;
  }
  if (spec.min && spec.max) return fmt::format("{} .. {}", *spec.min, *spec.max);
  if (spec.min) return fmt::format(">= {}", *spec.min);
  if (spec.max) return fmt::format("<= {}", *spec.max);
  return {};
}

// A Markdown table cell: '|' would end the cell and a newline the row.
std::string cell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n')
      out += ' ';
    else
      out += c;
  }
  return out;
}

std::string code(std::string_view text) {
  return text.empty() ? std::string() : "`" + cell(text) + "`";
}

std::string markdown_table(const Row& header, const std::vector<Row>& rows) {
  std::string out = "|";
  for (const auto& h : header) out += " " + h + " |";
  out += "\n|";
  for (std::size_t i = 0; i < header.size(); ++i) out += " --- |";
  out += '\n';
  for (const auto& row : rows) {
    out += "|";
    for (const auto& c : row) out += " " + c + " |";
    out += '\n';
  }
  return out;
}

}  // namespace

std::string format_plugin_list(const SchemaCatalog& catalog) {
  const auto entries = catalog.entries();
  if (entries.empty()) return "no plugin components found\n";
  std::vector<Row> rows{{"NAME", "VERSION", "KIND", "LIBRARY"}};
  for (const CatalogEntry* e : entries)
    rows.push_back({e->name, e->version, e->kind, e->library_path});
  return text_table(rows, "");
}

std::string format_describe(const CatalogEntry& entry) {
  std::string out =
      fmt::format("{} {} (kind {})\n  {}\n", entry.name, entry.version, entry.kind, entry.doc);
  if (!entry.library_path.empty()) out += "  library: " + entry.library_path + '\n';

  const Schema& schema = entry.schema;
  if (schema.params().empty()) {
    out += "\nparameters: none\n";
  } else {
    out += "\nparameters:\n";
    std::vector<Row> rows{{"NAME", "TYPE", "UNIT", "DEFAULT", "ALLOWED", "DESCRIPTION"}};
    for (const auto& p : schema.params())
      rows.push_back(
          {p.name, to_string(p.type), p.unit, format_default(p), format_allowed(p), p.doc});
    out += text_table(rows, "  ");
  }
  if (!schema.slots().empty() || !schema.engine_slots().empty()) {
    out += "\nslots:\n";
    std::vector<Row> rows{{"NAME", "KIND", "DESCRIPTION"}};
    for (const auto& s : schema.slots()) rows.push_back({s.name, s.kind, slot_doc(s)});
    if (!schema.engine_slots().empty())
      rows.push_back({"<kind>", "<kind>", schema.engine_slots() + " (optional)"});
    out += text_table(rows, "  ");
  }
  if (!schema.stats().empty()) {
    out += "\nstatistics:\n";
    std::vector<Row> rows{{"NAME", "KIND", "UNIT", "DESCRIPTION"}};
    for (const auto& s : schema.stats()) rows.push_back({s.name, to_string(s.kind), s.unit, s.doc});
    out += text_table(rows, "  ");
  }
  return out;
}

std::string format_reference_markdown(const SchemaCatalog& catalog) {
  std::string out =
      "# Manifest reference\n\n"
      "Generated by `simfa plugins --markdown` from the components' own schemas; do not edit "
      "by hand.\n\n"
      "Every component table of a manifest names its implementation with `plugin = \"NAME\"` "
      "and sets that implementation's parameters below. A parameter left out takes its "
      "default; one marked *required* must be set. Unknown keys are errors.\n";

  std::map<std::string, std::vector<const CatalogEntry*>> by_kind;
  for (const CatalogEntry* e : catalog.entries()) by_kind[e->kind].push_back(e);

  for (const auto& [kind, entries] : by_kind) {
    out += "\n## Kind `" + cell(kind) + "`\n";
    for (const CatalogEntry* e : entries) {
      const Schema& schema = e->schema;
      out += fmt::format("\n### `{}` {}\n\n{}\n", cell(e->name), e->version, e->doc);
      if (schema.params().empty()) {
        out += "\nNo parameters.\n";
      } else {
        std::vector<Row> rows;
        for (const auto& p : schema.params()) {
          const std::string def =
              p.default_value ? code(format_value(p, *p.default_value)) : "*required*";
          rows.push_back({code(p.name), to_string(p.type), cell(p.unit), def,
                          cell(format_allowed(p)), cell(p.doc)});
        }
        out += "\n" + markdown_table(
                          {"Parameter", "Type", "Unit", "Default", "Allowed", "Description"}, rows);
      }
      if (!schema.slots().empty() || !schema.engine_slots().empty()) {
        std::vector<Row> rows;
        for (const auto& s : schema.slots())
          rows.push_back({code(s.name), code(s.kind), cell(slot_doc(s))});
        if (!schema.engine_slots().empty())
          rows.push_back({"*kind*", "*kind*", cell(schema.engine_slots() + " (optional)")});
        out += "\n" + markdown_table({"Slot", "Kind", "Description"}, rows);
      }
      if (!schema.stats().empty()) {
        std::vector<Row> rows;
        for (const auto& s : schema.stats())
          rows.push_back({code(s.name), to_string(s.kind), cell(s.unit), cell(s.doc)});
        out += "\n" + markdown_table({"Statistic", "Kind", "Unit", "Description"}, rows);
      }
    }
  }
  return out;
}

}  // namespace simfa::kernel
