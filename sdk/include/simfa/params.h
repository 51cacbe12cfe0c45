// The parameter-schema API. Each component declares every parameter once (name, type, unit,
// default, range, doc); the manifest loader validates tables against that declaration, expands
// defaults, and hands the component a `Params` view with typed reads and source locations.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "simfa/error.h"
#include "simfa/types.h"

namespace simfa {

enum class ParamType : std::uint8_t {
  kBool,
  kInt,
  kFloat,
  kString,     ///< free text, or one of `choices` when given
  kSize,       ///< bytes; written as an integer or with a unit ("50MiB")
  kFrequency,  ///< MHz; written as a number (MHz) or with a unit ("1.83GHz")
  kBandwidth,  ///< bytes per second; written as a number or with a unit ("3.35TB/s")
};

inline const char* to_string(ParamType t) {
  switch (t) {
    case ParamType::kBool: return "bool";
    case ParamType::kInt: return "int";
    case ParamType::kFloat: return "float";
    case ParamType::kString: return "string";
    case ParamType::kSize: return "size";
    case ParamType::kFrequency: return "frequency";
    case ParamType::kBandwidth: return "bandwidth";
  }
  return "?";
}

/// A resolved value: bool for kBool; int64 for kInt and kSize (bytes); double for kFloat,
/// kFrequency (MHz) and kBandwidth (B/s); string for kString.
using ParamValue = std::variant<bool, std::int64_t, double, std::string>;

struct ParamSpec {
  std::string name;
  ParamType type = ParamType::kInt;
  std::string unit;  ///< shown in --describe and docs ("cycles", "bytes", "ways")
  std::string doc;
  std::optional<ParamValue> default_value;  ///< none: the key is required
  std::optional<double> min, max;           ///< inclusive range for numeric types
  std::vector<std::string> choices;         ///< allowed values for kString, when non-empty
};

/// Fluent declaration of one parameter: `s.integer("assoc").unit("ways").def(16).range(1, 64)`.
class ParamBuilder {
 public:
  explicit ParamBuilder(ParamSpec& spec) : spec_(&spec) {}
  ParamBuilder& doc(std::string text) { spec_->doc = std::move(text); return *this; }
  ParamBuilder& unit(std::string u) { spec_->unit = std::move(u); return *this; }
  ParamBuilder& range(double lo, double hi) { spec_->min = lo; spec_->max = hi; return *this; }
  ParamBuilder& min(double lo) { spec_->min = lo; return *this; }
  ParamBuilder& choices(std::vector<std::string> c) { spec_->choices = std::move(c); return *this; }
  ParamBuilder& def(bool v) { spec_->default_value = ParamValue{v}; return *this; }
  ParamBuilder& def(int v) { return def(static_cast<std::int64_t>(v)); }
  ParamBuilder& def(std::int64_t v) {
    if (spec_->type == ParamType::kFloat || spec_->type == ParamType::kFrequency ||
        spec_->type == ParamType::kBandwidth)
      spec_->default_value = ParamValue{static_cast<double>(v)};
    else
      spec_->default_value = ParamValue{v};
    return *this;
  }
  ParamBuilder& def(double v) { spec_->default_value = ParamValue{v}; return *this; }
  ParamBuilder& def(const char* v) { spec_->default_value = ParamValue{std::string(v)}; return *this; }
  ParamBuilder& required() { spec_->default_value.reset(); return *this; }

 private:
  ParamSpec* spec_;
};

enum class StatKind : std::uint8_t { kCounter, kHistogram, kFormula };

inline const char* to_string(StatKind k) {
  switch (k) {
    case StatKind::kCounter: return "counter";
    case StatKind::kHistogram: return "histogram";
    case StatKind::kFormula: return "formula";
  }
  return "?";
}

/// A statistic a component promises to produce (for --describe and docs).
struct StatSpec {
  std::string name;  ///< relative to the component, may contain "[i]" placeholders
  StatKind kind = StatKind::kCounter;
  std::string unit;
  std::string doc;
};

/// A sub-component slot (e.g. `l2.slice_map`), filled by a plugin of `kind`.
struct SlotSpec {
  std::string name;
  std::string kind;
  std::string doc;
  /// The plugin built when the manifest has no table for the slot, or a table without `plugin`;
  /// "" when the manifest must name one.
  std::string default_plugin;
};

/// A component's self-description: parameters, sub-slots and statistics.
class Schema {
 public:
  ParamBuilder boolean(std::string name) { return add(std::move(name), ParamType::kBool); }
  ParamBuilder integer(std::string name) { return add(std::move(name), ParamType::kInt); }
  ParamBuilder real(std::string name) { return add(std::move(name), ParamType::kFloat); }
  ParamBuilder string(std::string name) { return add(std::move(name), ParamType::kString); }
  ParamBuilder size(std::string name) { return add(std::move(name), ParamType::kSize).unit("bytes"); }
  ParamBuilder frequency(std::string name) {
    return add(std::move(name), ParamType::kFrequency).unit("MHz");
  }
  ParamBuilder bandwidth(std::string name) {
    return add(std::move(name), ParamType::kBandwidth).unit("B/s");
  }
  /// A sub-slot the manifest must fill, or, with `default_plugin`, one it may leave out.
  void slot(std::string name, std::string kind, std::string doc, std::string default_plugin = {}) {
    slots_.push_back({std::move(name), std::move(kind), std::move(doc), std::move(default_plugin)});
  }
  /// Besides its declared slots, the component takes an optional sub-slot for each engine kind
  /// that the run's instructions name (InstructionSpec::engine) and it does not declare itself,
  /// named after the kind and filled by a plugin of that kind: an SM runs a plugin's UMMA on the
  /// engine in [sm.umma]. `doc` says so in --describe.
  void engine_slots(std::string doc) { engine_slots_ = std::move(doc); }
  void stat(std::string name, StatKind kind, std::string unit, std::string doc) {
    stats_.push_back({std::move(name), kind, std::move(unit), std::move(doc)});
  }

  const std::vector<ParamSpec>& params() const { return params_; }
  const std::vector<SlotSpec>& slots() const { return slots_; }
  const std::vector<StatSpec>& stats() const { return stats_; }
  /// The doc of engine_slots(); "" when the component takes none.
  const std::string& engine_slots() const { return engine_slots_; }
  const ParamSpec* find(std::string_view name) const {
    for (const auto& p : params_)
      if (p.name == name) return &p;
    return nullptr;
  }

 private:
  ParamBuilder add(std::string name, ParamType type) {
    ParamSpec spec;
    spec.name = std::move(name);
    spec.type = type;
    params_.push_back(std::move(spec));
    return ParamBuilder(params_.back());
  }
  // std::vector of specs: builders are used immediately, before the next add().
  std::vector<ParamSpec> params_;
  std::vector<SlotSpec> slots_;
  std::vector<StatSpec> stats_;
  std::string engine_slots_;
};

/// The validated, default-expanded parameters of one component table. Reads of names the schema
/// did not declare, or with the wrong type, are programming errors and throw simfa::Error.
class Params {
 public:
  struct Entry {
    std::string name;
    ParamValue value;
    SourceLocation where;
  };

  Params() = default;
  Params(std::string path, SourceLocation table_where, std::vector<Entry> entries)
      : path_(std::move(path)), table_where_(std::move(table_where)), entries_(std::move(entries)) {}

  /// The component's table path, e.g. "l2" or "l2.slice_map".
  const std::string& path() const { return path_; }
  const std::vector<Entry>& entries() const { return entries_; }

  bool boolean(std::string_view name) const { return get<bool>(name); }
  std::int64_t integer(std::string_view name) const { return get<std::int64_t>(name); }
  std::int64_t size_bytes(std::string_view name) const { return get<std::int64_t>(name); }
  double real(std::string_view name) const { return get<double>(name); }
  double frequency_mhz(std::string_view name) const { return get<double>(name); }
  double bandwidth(std::string_view name) const { return get<double>(name); }
  const std::string& string(std::string_view name) const { return get<std::string>(name); }

  /// Where a key was set (file:line:col), or the table itself when it took its default.
  SourceLocation where(std::string_view name) const {
    const Entry* e = find(name);
    return e && !e->where.file.empty() ? e->where : table_where_;  // defaults have no file
  }

  /// Throw an InputError at `name`'s location, e.g. for a cross-field constraint.
  [[noreturn]] void fail(std::string_view name, const std::string& message) const {
    throw InputError(where(name), "[" + path_ + "] " + message);
  }

 private:
  const Entry* find(std::string_view name) const {
    for (const auto& e : entries_)
      if (e.name == name) return &e;
    return nullptr;
  }
  template <typename T>
  const T& get(std::string_view name) const {
    const Entry* e = find(name);
    if (!e) throw Error("internal: parameter '" + std::string(name) + "' of [" + path_ + "] is not declared");
    const T* v = std::get_if<T>(&e->value);
    if (!v) throw Error("internal: parameter '" + std::string(name) + "' of [" + path_ + "] read with the wrong type");
    return *v;
  }

  std::string path_;
  SourceLocation table_where_;
  std::vector<Entry> entries_;
};

}  // namespace simfa
