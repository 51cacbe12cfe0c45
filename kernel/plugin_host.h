// The plugin host: loads plugin libraries (Boost.DLL), checks their sdk ABI, reads their
// component descriptions and builds components through their factories.
//
// Lifetime: the host owns every loaded library and unloads them when it is destroyed. Every
// object a plugin created (components, their vtables, anything holding plugin code) must be
// destroyed before the host; the run loop keeps the host alive for the whole run. Exceptions
// thrown by a plugin are turned into simfa errors inside create(), while the library is loaded.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kernel/schema_catalog.h"
#include "simfa/component.h"
#include "simfa/instruction_set.h"

namespace simfa::kernel {

class PluginHost final : public SchemaCatalog {
 public:
  PluginHost();
  ~PluginHost() override;
  PluginHost(const PluginHost&) = delete;
  PluginHost& operator=(const PluginHost&) = delete;

  /// Where plugins are looked for, in order: the manifest's `plugin_path` entries (as given),
  /// the entries of SIMFA_PLUGIN_PATH (':'-separated, empty entries ignored), then the plugin
  /// directory beside the running executable (<prefix>/bin -> <prefix>/lib/simfa/plugins; the
  /// build tree has the same layout).
  static std::vector<std::filesystem::path> search_path(
      const std::vector<std::string>& manifest_plugin_path);
  /// The same with `plugin_dir` last instead of the directory beside the executable: a program
  /// that is not simfa's (python3 running the `simfa` module) names where its plugins lie.
  static std::vector<std::filesystem::path> search_path(
      const std::vector<std::string>& manifest_plugin_path,
      const std::filesystem::path& plugin_dir);

  /// Loads every lib*.so of each existing directory, directories in order and files by name.
  /// A library that fails to load, or that provides a component name already loaded, is
  /// skipped and its error recorded in errors(); the first provider of a name wins. A library
  /// already loaded from the same file is skipped silently.
  void load_directories(const std::vector<std::filesystem::path>& dirs);

  /// Loads one library. Throws simfa::InputError naming the path and the cause: no such file,
  /// cannot read, the loader's message (e.g. an undefined symbol), not a simfa plugin, another
  /// sdk ABI, an invalid or duplicate component name. A library is added whole or not at all.
  void load_library(const std::filesystem::path& file);

  /// The failures of load_directories, one "<library path>: <cause>" each, in load order.
  const std::vector<std::string>& errors() const { return errors_; }

  const CatalogEntry* find(std::string_view name) const override;
  std::vector<const CatalogEntry*> entries() const override;
  std::vector<std::string> engine_kinds() const override;

  /// Builds a component with `entry`'s factory; `entry` must come from this host. A
  /// simfa::InputError from the plugin is rethrown with "[plugin NAME VERSION]" appended, any
  /// other exception as a simfa::Error naming the plugin.
  std::unique_ptr<Component> create(const CatalogEntry& entry, const BuildContext& context) const;

  /// The instruction table: Hopper's instructions, then those the loaded libraries add, in load
  /// order (simfa/instruction_set.h).
  const InstructionSet& instructions() const { return instructions_; }

 private:
  struct Library;

  // Declared first so it is destroyed last: entries_ point into the libraries' static data.
  std::vector<std::unique_ptr<Library>> libraries_;
  // A map: entries keep their address while more libraries load.
  std::map<std::string, CatalogEntry, std::less<>> entries_;
  std::vector<std::string> errors_;
  InstructionSet instructions_;  ///< its specs point into the libraries' static data
};

}  // namespace simfa::kernel
