// What the manifest loader needs from the plugin host: the self-description of every known
// component, by name. The PluginHost implements it; tests use a hand-built catalog.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "simfa/params.h"
#include "simfa/plugin.h"

namespace simfa::kernel {

struct CatalogEntry {
  std::string name;     ///< "l2.unified"
  std::string kind;     ///< "l2": the part of the name before the first '.'
  std::string version;  ///< "1.0.0"
  std::string doc;      ///< one line
  Schema schema;        ///< parameters, sub-slots, statistics
  std::string library_path;
  const ComponentInfo* info = nullptr;  ///< the factory; null in hand-built test catalogs
};

class SchemaCatalog {
 public:
  virtual ~SchemaCatalog() = default;
  virtual const CatalogEntry* find(std::string_view name) const = 0;
  /// Every entry, sorted by name.
  virtual std::vector<const CatalogEntry*> entries() const = 0;
  /// The engine kinds the run's instructions name besides "sm" (InstructionSpec::engine), each
  /// once, in table order: the sub-slots a component with Schema::engine_slots may take.
  virtual std::vector<std::string> engine_kinds() const { return {}; }
};

}  // namespace simfa::kernel
