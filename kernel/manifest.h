// The manifest loader. Phase 1 reads a TOML manifest and the chain of manifests it `extends`
// and applies --set overrides, keeping the source location of every key. Phase 2, once the
// plugins are loaded, validates every table against its schema, collecting all errors, and
// produces the configuration the run loop builds from, plus the resolved manifest (defaults
// expanded) and its SHA-256 for the stats file.
#pragma once

#include <array>
#include <boost/json/object.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernel/schema_catalog.h"
#include "simfa/component.h"
#include "simfa/error.h"
#include "simfa/params.h"

namespace simfa::kernel {

/// A top-level component table of a manifest and the kind of plugin it takes.
struct SlotInfo {
  std::string_view name;
  std::string_view kind;
};

/// The GPU's component slots, all required. Plugins declare sub-slots (Schema::slots()), which
/// are nested tables: [memory.l2] is slot "memory.l2", and the SM's engines are the sub-slots
/// its plugin declares, [sm.scheduler], [sm.tma], [sm.tensor_core] for sm.warpgroup.
inline constexpr std::array<SlotInfo, 3> kGpuSlots{
    {{"sm", "sm"}, {"dispatch", "dispatch"}, {"memory", "memory"}}};

/// The old spelling (sdk ABI 10 and before): the SM's engines as top-level tables. The loader
/// reads a top-level [scheduler], [tma] or [tensor_core] of a manifest file, and a --set key
/// starting with one of them, as [sm.scheduler], [sm.tma], [sm.tensor_core] (docs/manifests.md,
/// "The SM and its engines").
inline constexpr std::array<std::string_view, 3> kOldSmEngineTables{"scheduler", "tma",
                                                                    "tensor_core"};

/// The [simfa] table: manifest_version, extends, seed, max_cycles. Its `plugin_path` (an array
/// of directories, relative to the file) is outside the schema: the sdk has no array type.
const Schema& simfa_table_schema();
/// The [gpu] table: the limits of GpuConfig plus the analytical model's numbers.
const Schema& gpu_table_schema();

/// One `--set KEY=VALUE`. KEY is a dotted table path and key ("memory.l2.assoc"); VALUE is read
/// as a TOML value, or as a bare string when it is not one ("50MiB", "slice.linear").
struct Override {
  std::string key;
  std::string value;
};

/// Splits a --set argument at its first '='. Throws InputError when there is none.
Override parse_override(std::string_view argument);

/// One validated component table.
struct ComponentConfig {
  std::string slot;    ///< "tma", "memory.l2", "workload"
  std::string plugin;  ///< "tma.traffic"
  const CatalogEntry* entry = nullptr;
  SourceLocation where;  ///< the table
  Params params;         ///< every declared parameter, defaults expanded
};

struct Manifest {
  std::string path;
  std::uint64_t seed = 1;
  std::uint64_t max_cycles = 0;  ///< 0: no limit
  GpuConfig gpu;
  // [gpu]'s numbers for the analytical model.
  std::int64_t l2_bytes = 0;
  int l2_partitions = 1;
  double dram_bandwidth = 0;  ///< bytes per second
  double l2_bandwidth = 0;    ///< bytes per second; 0 = unknown
  double mma_flops_per_cycle_per_sm = 0;
  /// What a CUDA-event timing adds to the kernel's span (launch, grid ramp-up, drain), in ns.
  double launch_overhead_ns = 0;
  /// Directories, each resolved against the manifest that names it.
  std::vector<std::string> plugin_path;
  /// Every slot in kGpuSlots order, each followed by its sub-slots (depth first): "sm",
  /// "sm.scheduler", "sm.tma", "sm.tensor_core", "dispatch", "memory", "memory.coalescer", ...
  std::vector<ComponentConfig> components;
  /// Every table, defaults expanded (sizes in bytes, frequencies in MHz, bandwidths in B/s),
  /// `extends` flattened, keys sorted.
  boost::json::object resolved;
  /// Lower-case hex SHA-256 of boost::json::serialize(resolved).
  std::string sha256;

  const ComponentConfig* find(std::string_view slot) const;
};

/// Every error of a manifest or workload, each "file:line:col: error: ...", in source order.
/// what() is the messages, one per line.
class ManifestError : public Error {
 public:
  explicit ManifestError(std::vector<std::string> messages);
  std::vector<std::string> messages;
};

/// A value as read from TOML or the command line, before it is checked against a schema.
struct DocValue {
  enum class Kind : std::uint8_t { kBool, kInt, kFloat, kString, kDateTime, kArray, kTable };

  std::string key;
  Kind kind = Kind::kString;
  bool boolean = false;
  std::int64_t integer = 0;
  double real = 0;
  std::string text;             ///< kString: the string; kDateTime: as TOML++ prints it
  std::vector<DocValue> items;  ///< kArray; a table inside an array is an item of kind kTable
  /// Values from the command line keep the text as typed: a string parameter takes it verbatim,
  /// so `--set gpu.name=1234` names the GPU "1234" instead of failing as an int.
  std::optional<std::string> typed;
  SourceLocation where;      ///< the value
  SourceLocation key_where;  ///< the key
};

/// A table as read: keys and nested tables (headers, dotted keys and inline tables alike).
struct DocTable {
  std::string name;      ///< the last component of its path; "" for the root
  SourceLocation where;  ///< its header, or where it was first implied
  std::vector<DocValue> values;
  std::vector<DocTable> tables;

  const DocValue* value(std::string_view key) const;
  const DocTable* table(std::string_view table_name) const;
};

/// Collects the errors of a validation pass and throws them together.
class Diagnostics {
 public:
  /// `files` orders the report: errors of files[0] first, then files[1], ..., then the others
  /// (--set, --workload) in the order reported. Within a file, by line and column.
  explicit Diagnostics(std::vector<std::string> files = {});
  void error(const SourceLocation& where, const std::string& message);
  bool empty() const { return errors_.empty(); }
  /// Throws ManifestError with every error collected, if any.
  void throw_if_any() const;
  /// Throws ManifestError with every error collected; call after at least one error().
  [[noreturn]] void raise() const;

 private:
  std::vector<std::string> files_;
  std::vector<InputError> errors_;
};

/// The result of phase 1: the manifest and everything it extends merged into one document,
/// overrides applied, every key still carrying its source location.
class ManifestDocument {
 public:
  /// The manifest named on the command line.
  const std::string& path() const { return path_; }
  /// path(), then the manifest it extends, and so on.
  const std::vector<std::string>& files() const { return files_; }
  const DocTable& root() const { return root_; }
  /// [simfa] plugin_path, each entry resolved against the manifest that names it (entries from
  /// --set against the working directory), for loading plugins before phase 2.
  std::vector<std::string> plugin_path() const;

 private:
  friend ManifestDocument read_manifest(const std::string& path,
                                        const std::vector<Override>& overrides);
  std::string path_;
  std::vector<std::string> files_;
  DocTable root_;
};

/// Phase 1. `extends` paths are relative to the including file; a table of a derived manifest
/// (or a --set) that names a different plugin replaces the inherited table, whose keys belonged
/// to the old plugin; otherwise keys merge, the derived one winning. --set KEY.plugin overrides
/// apply before the others, so every other --set validates against the new plugin. Throws
/// ManifestError: unreadable file, TOML syntax, an `extends` cycle (naming the chain), a
/// malformed override, a plugin_path that is not an array of strings.
ManifestDocument read_manifest(const std::string& path, const std::vector<Override>& overrides);

/// Phase 2: validates [simfa], [gpu] and every slot against `catalog` and builds the Manifest.
/// Throws ManifestError with every error found.
Manifest resolve_manifest(const ManifestDocument& document, const SchemaCatalog& catalog);

// Building blocks shared with workload specs.

/// Parses a TOML file. A file that cannot be read is reported at `cited_at` (where it was
/// named); a syntax error at its own file:line:col. Throws ManifestError.
DocTable read_toml_file(const std::string& path, const SourceLocation& cited_at);

/// A command-line value: TOML ("8", "true", "1.5", "\"x\"", "[\"a\"]") or else the bare text
/// as a string. `typed` is set to `text`.
DocValue parse_value_text(std::string key, std::string_view text, const SourceLocation& where,
                          const SourceLocation& key_where);

/// Validates `table` against `entry`'s schema as slot `slot`, then its sub-slots recursively.
/// `selector` is the key that chose the plugin ("plugin"; "frontend" for workload files) and is
/// not a parameter. Appends the component, then its sub-slots, to `out`; errors to
/// `diagnostics` (a component with errors is still appended, without the bad parameters).
void resolve_component(const DocTable& table, const std::string& slot, const CatalogEntry& entry,
                       std::string_view selector, const SchemaCatalog& catalog,
                       std::vector<ComponentConfig>& out, Diagnostics& diagnostics);

}  // namespace simfa::kernel
