#include "kernel/manifest.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <toml++/toml.h>

#include <algorithm>
#include <boost/json/serialize.hpp>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <tuple>
#include <utility>
#include <variant>

#include "kernel/sha256.h"
#include "simfa/spelling.h"
#include "simfa/units.h"

namespace simfa::kernel {

namespace fs = std::filesystem;
namespace json = boost::json;
using Kind = DocValue::Kind;

namespace {

// GpuConfig stores these counts as int.
constexpr double kIntMax = 2147483647.0;

[[noreturn]] void fail(const SourceLocation& where, const std::string& message) {
  throw ManifestError({InputError(where, message).what()});
}

// ----------------------------------------------------------------------------------------------
// From TOML++ to the document model.

SourceLocation location_of(const toml::source_region& region) {
  return {region.path ? *region.path : std::string(), region.begin.line, region.begin.column};
}

DocValue to_doc_value(std::string key, const toml::node& node, const SourceLocation& key_where) {
  DocValue v;
  v.key = std::move(key);
  v.where = location_of(node.source());
  v.key_where = key_where;
  auto printed = [](const auto& x) {
    std::ostringstream out;
    out << x;
    return out.str();
  };
  switch (node.type()) {
    case toml::node_type::boolean:
      v.kind = Kind::kBool;
      v.boolean = node.as_boolean()->get();
      break;
    case toml::node_type::integer:
      v.kind = Kind::kInt;
      v.integer = node.as_integer()->get();
      break;
    case toml::node_type::floating_point:
      v.kind = Kind::kFloat;
      v.real = node.as_floating_point()->get();
      break;
    case toml::node_type::string:
      v.kind = Kind::kString;
      v.text = node.as_string()->get();
      break;
    case toml::node_type::date:
      v.kind = Kind::kDateTime;
      v.text = printed(*node.as_date());
      break;
    case toml::node_type::time:
      v.kind = Kind::kDateTime;
      v.text = printed(*node.as_time());
      break;
    case toml::node_type::date_time:
      v.kind = Kind::kDateTime;
      v.text = printed(*node.as_date_time());
      break;
    case toml::node_type::array:
      v.kind = Kind::kArray;
      for (const toml::node& item : *node.as_array())
        v.items.push_back(to_doc_value("", item, location_of(item.source())));
      break;
    case toml::node_type::table:
    case toml::node_type::none:
      v.kind = Kind::kTable;
      break;
  }
  return v;
}

// TOML++ bounds nested values (TOML_MAX_NESTED_VALUES) but not a header's dotted keys:
// `[a.a.a...]` of 20000 keys overflowed the stack here, of 100000 keys inside TOML++ (found
// reviewing beside fuzz_manifest, docs/reliability.md). Manifests nest tables two or three deep.
constexpr int kMaxTableDepth = 64;

/// Where the first key path of more than kMaxTableDepth dotted parts starts in TOML `text` (line
/// and column, 1-based), checked before TOML++ sees it. Outside strings and comments, dots
/// chained by bare keys and blanks can only be a key path: a value has one dot at most (1.5,
/// 07:32:00.999), and '=', ',', brackets and line ends break a chain.
std::optional<std::pair<std::uint32_t, std::uint32_t>> deep_key_path(std::string_view text) {
  std::uint32_t line = 1;
  std::size_t line_begin = 0;
  int dots = 0;
  std::pair<std::uint32_t, std::uint32_t> chain_start{1, 1};
  std::optional<std::pair<std::uint32_t, std::uint32_t>> word_start;  // of the chain's first part
  auto here = [&](std::size_t i) {
    return std::pair<std::uint32_t, std::uint32_t>{line,
                                                   static_cast<std::uint32_t>(i - line_begin + 1)};
  };
  auto bare = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == ' ' ||
           c == '\t';
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (!word_start && c != ' ' && c != '\t' && c != '.' && (bare(c) || c == '"' || c == '\''))
      word_start = here(i);
    if (c == '#') {
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
    } else if (c == '"' || c == '\'') {  // a string, perhaps a quoted key: the chain goes on
      const bool triple = text.substr(i, 3) == std::string(3, c);
      const std::string_view close = triple ? text.substr(i, 3) : text.substr(i, 1);
      std::size_t j = i + close.size();
      while (j < text.size() && text.substr(j, close.size()) != close) {
        if (c == '"' && text[j] == '\\') ++j;
        if (j < text.size() && text[j] == '\n') {
          ++line;
          line_begin = j + 1;
        }
        ++j;
      }
      i = std::min(j + close.size(), text.size()) - 1;
    } else if (c == '.') {
      if (dots == 0) chain_start = word_start.value_or(here(i));
      if (++dots >= kMaxTableDepth) return chain_start;
    } else if (!bare(c)) {
      dots = 0;
      word_start.reset();
      if (c == '\n') {
        ++line;
        line_begin = i + 1;
      }
    }
  }
  return std::nullopt;
}

void fill_table(DocTable& out, const toml::table& in, int depth = 0) {
  for (auto&& [key, node] : in) {
    if (const toml::table* sub = node.as_table()) {
      DocTable table;
      table.name = std::string(key.str());
      table.where = location_of(sub->source());
      if (depth == kMaxTableDepth)
        fail(table.where, fmt::format("tables nested more than {} deep", kMaxTableDepth));
      fill_table(table, *sub, depth + 1);
      out.tables.push_back(std::move(table));
    } else {
      out.values.push_back(to_doc_value(std::string(key.str()), node, location_of(key.source())));
    }
  }
}

void relocate(DocValue& v, const SourceLocation& where) {
  v.where = where;
  for (DocValue& item : v.items) relocate(item, where);
}

// ----------------------------------------------------------------------------------------------
// Editing the document.

DocValue* find_value(DocTable& table, std::string_view key) {
  for (DocValue& v : table.values)
    if (v.key == key) return &v;
  return nullptr;
}

DocTable* find_table(DocTable& table, std::string_view name) {
  for (DocTable& t : table.tables)
    if (t.name == name) return &t;
  return nullptr;
}

void erase_value(DocTable& table, std::string_view key) {
  std::erase_if(table.values, [&](const DocValue& v) { return v.key == key; });
}

void erase_table(DocTable& table, std::string_view name) {
  std::erase_if(table.tables, [&](const DocTable& t) { return t.name == name; });
}

void set_value(DocTable& table, DocValue value) {
  erase_table(table, value.key);
  if (DocValue* old = find_value(table, value.key))
    *old = std::move(value);
  else
    table.values.push_back(std::move(value));
}

std::optional<std::string> plugin_name(const DocValue& v) {
  if (v.kind == Kind::kString) return v.text;
  return v.typed;
}

std::optional<std::string> plugin_of(const DocTable& table) {
  const DocValue* v = table.value("plugin");
  return v ? plugin_name(*v) : std::nullopt;
}

// `over` is the derived layer. A different plugin replaces the table: its inherited keys and
// sub-slots were the old plugin's parameters.
void merge(DocTable& base, DocTable&& over) {
  const auto base_plugin = plugin_of(base), over_plugin = plugin_of(over);
  if (base_plugin && over_plugin && *base_plugin != *over_plugin) {
    base = std::move(over);
    return;
  }
  // A table the derived file only implies (by a [memory.l2] header) is still where the base
  // file wrote it.
  if (!over.values.empty()) base.where = over.where;
  for (DocValue& v : over.values) set_value(base, std::move(v));
  for (DocTable& t : over.tables) {
    erase_value(base, t.name);
    if (DocTable* old = find_table(base, t.name))
      merge(*old, std::move(t));
    else
      base.tables.push_back(std::move(t));
  }
}

std::string describe(const DocValue& v) {
  switch (v.kind) {
    case Kind::kBool:
      return fmt::format("bool {}", v.boolean);
    case Kind::kInt:
      return fmt::format("int {}", v.integer);
    case Kind::kFloat:
      return fmt::format("float {}", v.real);
    case Kind::kString:
      return fmt::format("string '{}'", v.text);
    case Kind::kDateTime:
      return fmt::format("date/time {}", v.text);
    case Kind::kArray:
      return "array";
    case Kind::kTable:
      return "table";
  }
  return "?";
}

// Resolves each directory of a plugin_path against `dir`, the directory of the manifest that
// names it, so an inherited plugin_path keeps pointing where its own file meant.
void resolve_plugin_path(DocValue& v, const fs::path& dir, Diagnostics& diagnostics) {
  if (v.kind != Kind::kArray) {
    diagnostics.error(
        v.where,
        fmt::format("[simfa] key 'plugin_path': expected array of strings, got {}", describe(v)));
    return;
  }
  for (DocValue& item : v.items) {
    if (item.kind != Kind::kString)
      diagnostics.error(item.where, fmt::format("[simfa] key 'plugin_path': expected array of "
                                                "strings, got {} in it",
                                                describe(item)));
    else
      item.text = (dir / item.text).lexically_normal().string();
  }
}

fs::path identity_of(const std::string& file) {
  std::error_code ec;
  fs::path canonical = fs::weakly_canonical(file, ec);
  return ec ? fs::absolute(file).lexically_normal() : canonical;
}

struct Chain {
  std::vector<std::string> files;
  std::vector<fs::path> identities;
};

// The old spelling (kOldSmEngineTables): a file's top-level [tma] is its [sm.tma], and so on.
// Each file is moved before it merges with the file it extends, so a derived file may use
// either spelling over a base written in the other. The moved table keeps its source location.
void move_old_engine_tables(DocTable& layer, Diagnostics& diagnostics) {
  for (std::string_view name : kOldSmEngineTables) {
    const DocTable* old = find_table(layer, name);
    if (!old) continue;
    DocTable moved = *old;
    erase_table(layer, name);
    DocTable* sm = find_table(layer, "sm");
    if (!sm) {
      layer.tables.push_back(DocTable{"sm", moved.where, {}, {}});
      sm = &layer.tables.back();
    }
    if (const DocTable* both = sm->table(name)) {
      diagnostics.error(moved.where,
                        fmt::format("[{0}] is the old spelling of [sm.{0}], which this file also "
                                    "writes at line {1}; the SM's engines are sub-slots of [sm]: "
                                    "write the keys in [sm.{0}] alone",
                                    name, both->where.line));
      continue;
    }
    sm->tables.push_back(std::move(moved));
  }
}

// Reads `file` and what it extends, returning the merged document.
DocTable load_layer(const std::string& file, const SourceLocation& cited_at, Chain& chain,
                    Diagnostics& diagnostics) {
  DocTable layer = read_toml_file(file, cited_at);
  move_old_engine_tables(layer, diagnostics);
  chain.files.push_back(file);
  chain.identities.push_back(identity_of(file));
  const fs::path dir = fs::path(file).parent_path();
  DocTable* simfa = find_table(layer, "simfa");
  if (!simfa) return layer;
  if (DocValue* plugin_path = find_value(*simfa, "plugin_path"))
    resolve_plugin_path(*plugin_path, dir, diagnostics);
  const DocValue* extends = simfa->value("extends");
  if (!extends) return layer;
  if (extends->kind != Kind::kString)
    fail(extends->where,
         fmt::format("[simfa] key 'extends': expected string, got {}", describe(*extends)));

  const std::string base_file = (dir / extends->text).lexically_normal().string();
  const auto seen =
      std::find(chain.identities.begin(), chain.identities.end(), identity_of(base_file));
  if (seen != chain.identities.end()) {
    std::vector<std::string> cycle(chain.files.begin() + (seen - chain.identities.begin()),
                                   chain.files.end());
    cycle.push_back(base_file);
    fail(extends->where, fmt::format("[simfa] extends cycle: {}", fmt::join(cycle, " -> ")));
  }
  const SourceLocation extends_where = extends->where;
  DocTable base = load_layer(base_file, extends_where, chain, diagnostics);
  merge(base, std::move(layer));
  return base;
}

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find(separator, start);
    parts.emplace_back(text.substr(start, end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

void apply_override(DocTable& root, const Override& given, Diagnostics& diagnostics) {
  const SourceLocation where{fmt::format("--set {}={}", given.key, given.value)};
  // The old spelling: --set tma.plugin=... is --set sm.tma.plugin=...
  Override o = given;
  const std::string_view head = std::string_view(o.key).substr(0, o.key.find('.'));
  if (std::find(kOldSmEngineTables.begin(), kOldSmEngineTables.end(), head) !=
          kOldSmEngineTables.end() &&
      head.size() < o.key.size())
    o.key = "sm." + o.key;
  const std::vector<std::string> path = split(o.key, '.');
  if (path.size() < 2 ||
      std::any_of(path.begin(), path.end(), [](const auto& p) { return p.empty(); })) {
    diagnostics.error(where, "expected --set TABLE.KEY=VALUE, e.g. --set memory.l2.assoc=8");
    return;
  }
  if (o.key == "simfa.extends") {
    diagnostics.error(where,
                      "[simfa] 'extends' cannot be overridden; write a manifest that "
                      "extends this one");
    return;
  }
  DocTable* table = &root;
  std::string table_path;
  for (std::size_t i = 0; i + 1 < path.size(); ++i) {
    table_path += (i ? "." : "") + path[i];
    if (table->value(path[i])) {
      diagnostics.error(where, fmt::format("'{}' is a key, not a table", table_path));
      return;
    }
    DocTable* next = find_table(*table, path[i]);
    if (!next) {
      table->tables.push_back(DocTable{path[i], where, {}, {}});
      next = &table->tables.back();
    }
    table = next;
  }
  if (table->table(path.back())) {
    diagnostics.error(where,
                      fmt::format("'{0}' is a table; set one of its keys, e.g. {0}.plugin", o.key));
    return;
  }
  DocValue value = parse_value_text(path.back(), o.value, where, where);
  if (o.key == "simfa.plugin_path") resolve_plugin_path(value, fs::path(), diagnostics);
  if (path.back() == "plugin") {
    const auto old = plugin_of(*table);
    if (old && *old != plugin_name(value)) {
      table->where = where;
      table->values.clear();
      table->tables.clear();
    }
  }
  set_value(*table, std::move(value));
}

// ----------------------------------------------------------------------------------------------
// Validation.

// The units simfa/units.h accepts, for type errors of quantities.
std::string_view unit_hint(ParamType type) {
  switch (type) {
    case ParamType::kSize:
      return " (bytes, or a string with a unit: B, KB, MB, GB, KiB, MiB, GiB)";
    case ParamType::kFrequency:
      return " (MHz, or a string with a unit: Hz, kHz, MHz, GHz)";
    case ParamType::kBandwidth:
      return " (bytes/s, or a string with a unit: B/s, KB/s, MB/s, GB/s, TB/s, KiB/s, MiB/s, "
             "GiB/s)";
    default:
      return "";
  }
}

bool is_quantity(ParamType type) {
  return type == ParamType::kSize || type == ParamType::kFrequency || type == ParamType::kBandwidth;
}

// A numeric or string value as the user wrote it, for range errors.
std::string written(const DocValue& v) {
  if (v.kind == Kind::kInt) return fmt::format("{}", v.integer);
  if (v.kind == Kind::kFloat) return fmt::format("{}", v.real);
  return fmt::format("'{}'", v.text);
}

struct TableContext {
  const std::string& path;
  const std::string& suffix;  // " [plugin NAME VERSION]" or ""
  Diagnostics& diagnostics;
};

bool has_choice(const ParamSpec& spec, std::string_view text) {
  return std::find(spec.choices.begin(), spec.choices.end(), text) != spec.choices.end();
}

std::optional<ParamValue> convert(const DocValue& v, const ParamSpec& spec,
                                  const TableContext& cx) {
  auto type_error = [&]() -> std::optional<ParamValue> {
    cx.diagnostics.error(
        v.where, fmt::format("[{}] key '{}': expected {}{}, got {}{}", cx.path, spec.name,
                             to_string(spec.type), unit_hint(spec.type), describe(v), cx.suffix));
    return std::nullopt;
  };
  const bool number = v.kind == Kind::kInt || v.kind == Kind::kFloat;
  const double number_value = v.kind == Kind::kInt ? static_cast<double>(v.integer) : v.real;
  ParamValue value;
  double magnitude = 0;
  switch (spec.type) {
    case ParamType::kBool:
      if (v.kind != Kind::kBool) return type_error();
      return ParamValue{v.boolean};
    case ParamType::kString: {
      std::string text;
      if (v.kind == Kind::kString)
        text = v.text;
      else if (v.typed)
        text = *v.typed;
      else if (v.kind == Kind::kBool && has_choice(spec, v.boolean ? "true" : "false"))
        text = v.boolean ? "true" : "false";  // a switch with an `auto`: `key = false` reads
      else
        return type_error();
      if (!spec.choices.empty() && !has_choice(spec, text)) {
        cx.diagnostics.error(
            v.where, fmt::format("[{}] key '{}' = '{}' is not one of {}{}{}", cx.path, spec.name,
                                 text, fmt::format("'{}'", fmt::join(spec.choices, "', '")),
                                 did_you_mean(text, spec.choices), cx.suffix));
        return std::nullopt;
      }
      return ParamValue{std::move(text)};
    }
    case ParamType::kInt:
      if (v.kind != Kind::kInt) return type_error();
      value = v.integer;
      magnitude = number_value;
      break;
    case ParamType::kFloat:
      if (!number || !std::isfinite(number_value)) return type_error();
      value = number_value;
      magnitude = number_value;
      break;
    case ParamType::kSize: {
      std::int64_t bytes = 0;
      if (v.kind == Kind::kInt)
        bytes = v.integer;
      else if (v.kind == Kind::kFloat && std::isfinite(v.real) && v.real == std::floor(v.real) &&
               std::fabs(v.real) < 9.2e18)
        bytes = static_cast<std::int64_t>(v.real);
      else if (v.kind != Kind::kString || !units::parse_size(v.text, bytes))
        return type_error();
      value = bytes;
      magnitude = static_cast<double>(bytes);
      break;
    }
    case ParamType::kFrequency:
    case ParamType::kBandwidth: {
      double quantity = number_value;
      if (v.kind == Kind::kString) {
        const bool parsed = spec.type == ParamType::kFrequency
                                ? units::parse_frequency_mhz(v.text, quantity)
                                : units::parse_bandwidth(v.text, quantity);
        if (!parsed) return type_error();
      } else if (!number) {
        return type_error();
      }
      if (!std::isfinite(quantity)) return type_error();
      value = quantity;
      magnitude = quantity;
      break;
    }
  }
  std::optional<double> lo = spec.min;
  const std::optional<double> hi = spec.max;
  if (is_quantity(spec.type)) lo = std::max(lo.value_or(0.0), 0.0);  // no negative bytes or MHz
  if ((lo && magnitude < *lo) || (hi && magnitude > *hi)) {
    std::string range = lo && hi ? fmt::format("is out of range [{}, {}]", *lo, *hi)
                        : lo     ? fmt::format("must be >= {}", *lo)
                                 : fmt::format("must be <= {}", *hi);
    if (!spec.unit.empty()) range += " " + spec.unit;
    std::string shown = written(v);
    if (v.kind == Kind::kString) shown += fmt::format(" (= {} {})", magnitude, spec.unit);
    cx.diagnostics.error(v.where, fmt::format("[{}] key '{}' = {} {}{}", cx.path, spec.name, shown,
                                              range, cx.suffix));
    return std::nullopt;
  }
  return value;
}

const SlotSpec* find_slot(const Schema& schema, std::string_view name) {
  for (const SlotSpec& slot : schema.slots())
    if (slot.name == name) return &slot;
  return nullptr;
}

// Checks every key and nested table of `table` against `schema`; sub-slot tables are left to
// the caller. `reserved` is a key that is not a parameter (the plugin selector). Returns the
// parameters that are valid, defaults included, in declaration order.
std::vector<Params::Entry> resolve_params(const DocTable& table, const std::string& path,
                                          const Schema& schema, std::string_view reserved,
                                          const std::string& suffix, Diagnostics& diagnostics,
                                          const std::vector<std::string>& engine_slots = {}) {
  const TableContext cx{path, suffix, diagnostics};
  std::vector<Params::Entry> entries;
  for (const ParamSpec& spec : schema.params()) {
    if (const DocValue* v = table.value(spec.name)) {
      if (auto value = convert(*v, spec, cx))
        entries.push_back({spec.name, std::move(*value), v->where});
    } else if (spec.default_value) {
      entries.push_back({spec.name, *spec.default_value, SourceLocation{}});
    } else {
      diagnostics.error(table.where, fmt::format("[{}] missing required key '{}' ({}{}){}", path,
                                                 spec.name, to_string(spec.type),
                                                 spec.doc.empty() ? "" : ": " + spec.doc, suffix));
    }
  }

  std::vector<std::string> keys;
  for (const ParamSpec& spec : schema.params()) keys.push_back(spec.name);
  if (!reserved.empty()) keys.emplace_back(reserved);
  std::vector<std::string> slot_names;
  for (const SlotSpec& slot : schema.slots()) slot_names.push_back(slot.name);

  for (const DocValue& v : table.values) {
    if (v.key == reserved || schema.find(v.key)) continue;
    if (const SlotSpec* slot = find_slot(schema, v.key)) {
      diagnostics.error(v.key_where,
                        fmt::format("[{0}] '{1}' must be a table [{0}.{1}] naming a plugin "
                                    "of kind '{2}'{3}",
                                    path, v.key, slot->kind, suffix));
      continue;
    }
    diagnostics.error(v.key_where, fmt::format("[{}] unknown key '{}'{}{}", path, v.key,
                                               did_you_mean(v.key, keys), suffix));
  }
  for (const DocTable& t : table.tables) {
    if (find_slot(schema, t.name) ||
        std::find(engine_slots.begin(), engine_slots.end(), t.name) != engine_slots.end())
      continue;
    const std::string guess = closest_name(t.name, slot_names);
    std::string hint;
    if (!guess.empty()) {
      hint = " (" + did_you_mean_text(fmt::format("{}.{}", path, guess), NameForm::kTable) + ")";
      // An engine for a plugin's instructions whose library is not loaded: say so.
      if (!schema.engine_slots().empty())
        hint += fmt::format(
            "; no loaded plugin adds instructions of kind '{}' (is its library on the plugin "
            "path?)",
            t.name);
    } else {
      // An SM plugin without the engine a manifest names: say which ones it has.
      std::vector<std::string> declared;
      for (const std::string& name : slot_names) declared.push_back("[" + path + "." + name + "]");
      for (const std::string& name : engine_slots) declared.push_back("[" + path + "." + name + "]");
      hint = declared.empty() ? "; its plugin declares no sub-slots"
                              : fmt::format("; its plugin declares {}", fmt::join(declared, ", "));
      if (!schema.engine_slots().empty())
        hint += engine_slots.empty()
                    ? ", and takes an engine for each kind of instruction a plugin adds (no "
                      "loaded plugin adds one)"
                    : ", and an engine for each kind of instruction a plugin adds";
    }
    diagnostics.error(
        t.where, fmt::format("[{0}] unknown table [{0}.{1}]{2}{3}", path, t.name, hint, suffix));
  }
  return entries;
}

// The plugin a component table names, checked against the catalog and the slot's kind.
const CatalogEntry* select_plugin(const DocTable& table, const std::string& path,
                                  std::string_view kind, const SchemaCatalog& catalog,
                                  Diagnostics& diagnostics) {
  std::vector<std::string> of_kind;
  for (const CatalogEntry* e : catalog.entries())
    if (e->kind == kind) of_kind.push_back(e->name);
  const std::string known = of_kind.empty()
                                ? fmt::format("no plugin of kind '{}' is loaded", kind)
                                : fmt::format("kind '{}': {}", kind, fmt::join(of_kind, ", "));
  const DocValue* v = table.value("plugin");
  if (!v) {
    diagnostics.error(table.where,
                      fmt::format("[{}] missing required key 'plugin' ({})", path, known));
    return nullptr;
  }
  const std::optional<std::string> name = plugin_name(*v);
  if (!name) {
    diagnostics.error(
        v->where, fmt::format("[{}] key 'plugin': expected string, got {}", path, describe(*v)));
    return nullptr;
  }
  const CatalogEntry* entry = catalog.find(*name);
  if (!entry) {
    const std::string guess = closest_name(*name, of_kind);
    diagnostics.error(v->where, fmt::format("[{}] unknown plugin '{}' ({})", path, *name,
                                            guess.empty() ? known : did_you_mean_text(guess)));
    return nullptr;
  }
  if (entry->kind != kind) {
    diagnostics.error(
        v->where, fmt::format("[{0}] plugin '{1}' is of kind '{2}'; [{0}] takes kind '{3}'", path,
                              *name, entry->kind, kind));
    return nullptr;
  }
  return entry;
}

// The default plugin of an optional sub-slot, checked like a named one: it must be loaded and of
// the slot's kind (else the parent plugin's schema is wrong, or its library is missing).
const CatalogEntry* default_plugin(const SlotSpec& sub, const std::string& path,
                                   const SourceLocation& where, const SchemaCatalog& catalog,
                                   const std::string& suffix, Diagnostics& diagnostics) {
  const CatalogEntry* entry = catalog.find(sub.default_plugin);
  if (!entry || entry->kind != sub.kind) {
    diagnostics.error(
        where, fmt::format("[{}] the default plugin '{}' (kind '{}') is {}; name a "
                           "plugin in [{}]{}",
                           path, sub.default_plugin, sub.kind,
                           entry ? "of kind '" + entry->kind + "'" : "not loaded", path, suffix));
    return nullptr;
  }
  return entry;
}

// ----------------------------------------------------------------------------------------------
// The resolved manifest. boost::json objects keep insertion order, so every object is built
// from a sorted map: the serialization, and so the hash, depends on the values alone.

using Fields = std::map<std::string, json::value>;

json::object sorted_object(Fields fields) {
  json::object object;
  object.reserve(fields.size());
  for (auto& [key, value] : fields) object.emplace(key, std::move(value));
  return object;
}

Fields fields_of(const Params& params) {
  Fields fields;
  for (const Params::Entry& e : params.entries())
    fields[e.name] = std::visit([](const auto& x) { return json::value(x); }, e.value);
  return fields;
}

json::object component_json(const std::vector<ComponentConfig>& components,
                            const ComponentConfig& c) {
  Fields fields = fields_of(c.params);
  fields["plugin"] = c.plugin;
  const std::string prefix = c.slot + ".";
  for (const ComponentConfig& child : components) {
    if (!child.slot.starts_with(prefix)) continue;
    const std::string name = child.slot.substr(prefix.size());
    if (name.find('.') == std::string::npos) fields[name] = component_json(components, child);
  }
  return sorted_object(std::move(fields));
}

json::object resolved_json(const Params& simfa, const Params& gpu,
                           const std::vector<ComponentConfig>& components) {
  Fields simfa_fields = fields_of(simfa);
  simfa_fields.erase("extends");  // flattened: the resolved manifest stands alone
  // plugin_path is left out: where the plugins were found is not what was simulated, and the
  // paths differ between checkouts of the same configuration.
  Fields top;
  top["simfa"] = sorted_object(std::move(simfa_fields));
  top["gpu"] = sorted_object(fields_of(gpu));
  for (const ComponentConfig& c : components)
    if (c.slot.find('.') == std::string::npos) top[c.slot] = component_json(components, c);
  return sorted_object(std::move(top));
}

}  // namespace

// ----------------------------------------------------------------------------------------------

const Schema& simfa_table_schema() {
  static const Schema schema = [] {
    Schema s;
    s.integer("manifest_version")
        .range(1, 1)
        .doc("format of this file; this simfa reads version 1");
    s.string("extends").def("").doc(
        "manifest to start from, relative to this file; this file's tables and keys override it");
    s.integer("seed").def(1).min(0).doc(
        "global seed; each component's PRNG is seeded from it and the component's path");
    s.integer("max_cycles")
        .unit("SM cycles")
        .def(0)
        .min(0)
        .doc("watchdog: stop the run after this many cycles; 0 = no limit");
    return s;
  }();
  return schema;
}

const Schema& gpu_table_schema() {
  static const Schema schema = [] {
    Schema s;
    s.string("name").doc("the GPU's name, for reports");
    s.integer("sm_count").unit("SMs").range(1, kIntMax).doc("streaming multiprocessors");
    s.frequency("clock_mhz").min(1).doc(
        "SM clock; the event queue and every latency in SM cycles count this clock");
    s.frequency("memory_clock_mhz")
        .def(0.0)
        .min(0)
        .doc("clock of the L2 slices, the request coalescer and the crossbar: latencies and rates "
             "in memory cycles count it; 0: the SM clock");
    s.size("smem_per_sm").doc("shared memory per SM available to CTAs");
    s.integer("regs_per_sm").unit("registers").min(1).doc("32-bit registers per SM");
    s.integer("max_ctas_per_sm").unit("CTAs").range(1, kIntMax).doc("resident CTAs per SM");
    s.integer("max_warpgroups_per_sm")
        .unit("warpgroups")
        .range(1, kIntMax)
        .doc("resident WarpGroups per SM");
    // Sim-FA section IV: "the Hopper L2 consists of two 25 MB partitions"; an H100/H800 reports
    // cudaDeviceProp::l2CacheSize = 52428800 (50 MiB). Section VIII takes one partition as the
    // effective LLC.
    s.size("l2_size")
        .def(std::int64_t{50} << 20)
        .min(1)
        .doc("L2 capacity (analytical model); default: H800, two 25 MiB partitions");
    s.integer("l2_partitions")
        .unit("partitions")
        .def(2)
        .range(1, kIntMax)
        .doc("L2 partitions; one is the analytical model's effective LLC; default: H800, 2");
    // NVIDIA H800 SXM5 datasheet: HBM3, 3.35 TB/s.
    s.bandwidth("dram_bandwidth")
        .def(3.35e12)
        .min(1)
        .doc("peak DRAM bandwidth (analytical model); default: H800 SXM HBM3, 3.35 TB/s");
    s.bandwidth("l2_bandwidth")
        .def(0.0)
        .min(0)
        .doc("L2 bandwidth for the analytical roofline; 0: unknown (no LLC bound)");
    // H800 SXM: 989.4 TFLOP/s dense FP16 = 132 SMs x 1830 MHz x 4096 FLOP per SM cycle.
    s.real("mma_flops_per_cycle_per_sm")
        .unit("FLOP/cycle")
        .def(4096.0)
        .min(1)
        .doc(
            "dense FP16 tensor-core FLOPs per SM cycle (analytical model); default: H800, 989.4 "
            "TFLOP/s / (132 SMs x 1830 MHz)");
    // 0 keeps a run's event time equal to its span; configs/h200.toml sets the constant
    // measured in validation/h200/launch_overhead.csv.
    s.real("launch_overhead_ns")
        .unit("ns")
        .def(0.0)
        .min(0)
        .doc("what a CUDA-event (or do_bench) timing of a kernel adds to its span from the first "
             "CTA's start to the last CTA's end: the stats' kernel.event_us = time_us + this");
    return s;
  }();
  return schema;
}

Override parse_override(std::string_view argument) {
  const std::size_t eq = argument.find('=');
  if (eq == std::string_view::npos)
    throw InputError(SourceLocation{"--set " + std::string(argument)},
                     "expected KEY=VALUE, e.g. --set memory.l2.assoc=8");
  return {std::string(argument.substr(0, eq)), std::string(argument.substr(eq + 1))};
}

const ComponentConfig* Manifest::find(std::string_view slot) const {
  for (const ComponentConfig& c : components)
    if (c.slot == slot) return &c;
  return nullptr;
}

ManifestError::ManifestError(std::vector<std::string> all)
    : Error(fmt::format("{}", fmt::join(all, "\n"))), messages(std::move(all)) {}

const DocValue* DocTable::value(std::string_view key) const {
  for (const DocValue& v : values)
    if (v.key == key) return &v;
  return nullptr;
}

const DocTable* DocTable::table(std::string_view table_name) const {
  for (const DocTable& t : tables)
    if (t.name == table_name) return &t;
  return nullptr;
}

Diagnostics::Diagnostics(std::vector<std::string> files) : files_(std::move(files)) {}

void Diagnostics::error(const SourceLocation& where, const std::string& message) {
  errors_.emplace_back(where, message);
}

void Diagnostics::throw_if_any() const {
  if (!errors_.empty()) raise();
}

void Diagnostics::raise() const {
  auto order = [&](const InputError& e) {
    const auto rank = std::find(files_.begin(), files_.end(), e.where().file) - files_.begin();
    return std::tuple(rank, e.where().line, e.where().column);
  };
  std::vector<const InputError*> sorted;
  for (const InputError& e : errors_) sorted.push_back(&e);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [&](const InputError* a, const InputError* b) { return order(*a) < order(*b); });
  std::vector<std::string> messages;
  for (const InputError* e : sorted) messages.emplace_back(e->what());
  throw ManifestError(std::move(messages));
}

std::vector<std::string> ManifestDocument::plugin_path() const {
  std::vector<std::string> dirs;
  const DocTable* simfa = root_.table("simfa");
  const DocValue* path = simfa ? simfa->value("plugin_path") : nullptr;
  if (!path) return dirs;
  for (const DocValue& item : path->items)
    if (item.kind == Kind::kString) dirs.push_back(item.text);
  return dirs;
}

DocTable read_toml_file(const std::string& path, const SourceLocation& cited_at) {
  std::error_code ec;
  if (fs::is_directory(path, ec))
    fail(cited_at, fmt::format("cannot read '{}': it is a directory", path));
  // A device or a pipe (`extends = "/dev/zero"`, found by fuzz_manifest) would be read forever.
  if (fs::exists(path, ec) && !fs::is_regular_file(path, ec))
    fail(cited_at, fmt::format("cannot read '{}': not a regular file", path));
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(cited_at, fmt::format("cannot read '{}': {}", path, std::strerror(errno)));
  std::ostringstream content;
  content << in.rdbuf();
  DocTable root;
  root.where = SourceLocation{path, 1, 1};
  if (const auto at = deep_key_path(content.str()))
    fail(SourceLocation{path, at->first, at->second},
         fmt::format("a key path of more than {} dotted parts: tables nested more than {} deep",
                     kMaxTableDepth, kMaxTableDepth));
  try {
    fill_table(root, toml::parse(content.str(), std::string_view(path)));
  } catch (const toml::parse_error& e) {
    SourceLocation where = location_of(e.source());
    if (where.file.empty()) where.file = path;
    fail(where, fmt::format("invalid TOML: {}", e.description()));
  }
  return root;
}

DocValue parse_value_text(std::string key, std::string_view text, const SourceLocation& where,
                          const SourceLocation& key_where) {
  DocValue v;
  v.kind = Kind::kString;
  v.text = std::string(text);
  try {
    // A key path too deep for TOML++ ("1\n[a.a.a...]") is no value of one key either.
    if (!deep_key_path(text)) {
      const toml::table parsed = toml::parse("v = " + std::string(text));
      const toml::node* node = parsed.get("v");
      // One plain value only: "1\nx = 2" or an inline table are not a value of one key.
      if (parsed.size() == 1 && node && !node->is_table()) v = to_doc_value(key, *node, key_where);
    }
  } catch (const toml::parse_error&) {
    // Not TOML: stays the bare string.
  }
  v.key = std::move(key);
  relocate(v, where);
  v.key_where = key_where;
  v.typed = std::string(text);
  return v;
}

ManifestDocument read_manifest(const std::string& path, const std::vector<Override>& overrides) {
  ManifestDocument document;
  document.path_ = path;
  Diagnostics diagnostics({path});
  Chain chain;
  document.root_ = load_layer(path, SourceLocation{path}, chain, diagnostics);
  document.files_ = std::move(chain.files);
  if (DocTable* simfa = find_table(document.root_, "simfa")) erase_value(*simfa, "extends");

  std::vector<const Override*> ordered;
  for (const Override& o : overrides) ordered.push_back(&o);
  std::stable_partition(ordered.begin(), ordered.end(),
                        [](const Override* o) { return o->key.ends_with(".plugin"); });
  for (const Override* o : ordered) apply_override(document.root_, *o, diagnostics);
  diagnostics.throw_if_any();
  return document;
}

void resolve_component(const DocTable& table, const std::string& slot, const CatalogEntry& entry,
                       std::string_view selector, const SchemaCatalog& catalog,
                       std::vector<ComponentConfig>& out, Diagnostics& diagnostics) {
  const std::string suffix = fmt::format(" [plugin {} {}]", entry.name, entry.version);
  // The engine slots it may take: the engine kinds of the run's instructions that none of its
  // declared slots has as name or kind (Schema::engine_slots): sm.warpgroup's "tma" and "wgmma"
  // engines are its [sm.tma] and [sm.tensor_core].
  std::vector<std::string> engine_slots;
  if (!entry.schema.engine_slots().empty())
    for (std::string& kind : catalog.engine_kinds()) {
      const auto& declared = entry.schema.slots();
      if (std::none_of(declared.begin(), declared.end(), [&](const SlotSpec& d) {
            return d.name == kind || d.kind == kind;
          }))
        engine_slots.push_back(std::move(kind));
    }
  std::vector<Params::Entry> entries =
      resolve_params(table, slot, entry.schema, selector, suffix, diagnostics, engine_slots);
  out.push_back(ComponentConfig{slot, entry.name, &entry, table.where,
                                Params(slot, table.where, std::move(entries))});
  for (const SlotSpec& sub : entry.schema.slots()) {
    const std::string sub_slot = slot + "." + sub.name;
    const DocTable* sub_table = table.table(sub.name);
    if (!sub_table && table.value(sub.name)) continue;  // reported as a key that must be a table
    if (!sub.default_plugin.empty() && (!sub_table || !sub_table->value("plugin"))) {
      // An optional slot left out, or a table of its parameters without `plugin`: the default.
      const DocTable implied{sub.name, table.where, {}, {}};
      if (const CatalogEntry* e =
              default_plugin(sub, sub_slot, table.where, catalog, suffix, diagnostics))
        resolve_component(sub_table ? *sub_table : implied, sub_slot, *e, "plugin", catalog, out,
                          diagnostics);
      continue;
    }
    if (!sub_table) {
      diagnostics.error(table.where,
                        fmt::format("[{}] missing required table [{}] (a plugin of kind "
                                    "'{}'){}",
                                    slot, sub_slot, sub.kind, suffix));
      continue;
    }
    if (const CatalogEntry* e = select_plugin(*sub_table, sub_slot, sub.kind, catalog, diagnostics))
      resolve_component(*sub_table, sub_slot, *e, "plugin", catalog, out, diagnostics);
  }
  for (const std::string& kind : engine_slots) {
    const DocTable* sub_table = table.table(kind);
    if (!sub_table) continue;  // optional: a program using the kind's instructions is refused
    const std::string sub_slot = slot + "." + kind;
    if (const CatalogEntry* e = select_plugin(*sub_table, sub_slot, kind, catalog, diagnostics))
      resolve_component(*sub_table, sub_slot, *e, "plugin", catalog, out, diagnostics);
  }
}

Manifest resolve_manifest(const ManifestDocument& document, const SchemaCatalog& catalog) {
  Diagnostics diagnostics(document.files());
  const DocTable& root = document.root();
  const SourceLocation file_start{document.path(), 1, 1};

  std::vector<std::string> tables{"simfa", "gpu"};
  for (const SlotInfo& slot : kGpuSlots) tables.emplace_back(slot.name);
  for (const DocValue& v : root.values)
    diagnostics.error(v.key_where,
                      fmt::format("key '{}' is outside any table; keys belong to a table "
                                  "such as [simfa] or [gpu]",
                                  v.key));
  for (const DocTable& t : root.tables) {
    if (std::find(tables.begin(), tables.end(), t.name) != tables.end()) continue;
    diagnostics.error(t.where, fmt::format("unknown table [{}]{}", t.name,
                                           did_you_mean(t.name, tables, NameForm::kTable)));
  }

  auto fixed_table = [&](const std::string& name, const Schema& schema, std::string_view reserved) {
    const DocTable* t = root.table(name);
    if (!t) {
      diagnostics.error(file_start, fmt::format("missing required table [{}]", name));
      return Params();
    }
    return Params(name, t->where, resolve_params(*t, name, schema, reserved, "", diagnostics));
  };
  // plugin_path was checked in phase 1: the plugins had to be loaded before this phase.
  const Params simfa = fixed_table("simfa", simfa_table_schema(), "plugin_path");
  const Params gpu = fixed_table("gpu", gpu_table_schema(), "");

  Manifest m;
  for (const SlotInfo& slot : kGpuSlots) {
    const std::string name(slot.name);
    const DocTable* t = root.table(name);
    if (!t) {
      diagnostics.error(
          file_start,
          fmt::format("missing required table [{}] (a plugin of kind '{}')", name, slot.kind));
      continue;
    }
    if (const CatalogEntry* e = select_plugin(*t, name, slot.kind, catalog, diagnostics))
      resolve_component(*t, name, *e, "plugin", catalog, m.components, diagnostics);
  }
  diagnostics.throw_if_any();

  m.path = document.path();
  m.seed = static_cast<std::uint64_t>(simfa.integer("seed"));
  m.max_cycles = static_cast<std::uint64_t>(simfa.integer("max_cycles"));
  m.gpu.name = gpu.string("name");
  m.gpu.sm_count = static_cast<int>(gpu.integer("sm_count"));
  m.gpu.clock_mhz = gpu.frequency_mhz("clock_mhz");
  m.gpu.memory_clock_mhz = gpu.frequency_mhz("memory_clock_mhz");
  m.gpu.smem_per_sm_bytes = gpu.size_bytes("smem_per_sm");
  m.gpu.regs_per_sm = gpu.integer("regs_per_sm");
  m.gpu.max_ctas_per_sm = static_cast<int>(gpu.integer("max_ctas_per_sm"));
  m.gpu.max_warpgroups_per_sm = static_cast<int>(gpu.integer("max_warpgroups_per_sm"));
  m.l2_bytes = gpu.size_bytes("l2_size");
  m.l2_partitions = static_cast<int>(gpu.integer("l2_partitions"));
  m.dram_bandwidth = gpu.bandwidth("dram_bandwidth");
  m.l2_bandwidth = gpu.bandwidth("l2_bandwidth");
  m.mma_flops_per_cycle_per_sm = gpu.real("mma_flops_per_cycle_per_sm");
  m.launch_overhead_ns = gpu.real("launch_overhead_ns");
  m.plugin_path = document.plugin_path();
  m.resolved = resolved_json(simfa, gpu, m.components);
  m.sha256 = sha256_hex(json::serialize(m.resolved));
  return m;
}

}  // namespace simfa::kernel
