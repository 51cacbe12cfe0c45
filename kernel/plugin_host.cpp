#include "kernel/plugin_host.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <exception>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <utility>

#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>
#include <fmt/format.h>

#include "simfa/error.h"
#include "simfa/plugin.h"

namespace simfa::kernel {

namespace fs = std::filesystem;

namespace {

// The alias SIMFA_PLUGIN exports (sdk plugin.h).
constexpr const char* kEntryAlias = "simfa_plugin_descriptor";

SourceLocation at(const fs::path& file) {
  SourceLocation where;
  where.file = file.string();
  return where;
}

// dlopen reports an unreadable file as "cannot open shared object file", the same words as for
// a missing one; checking first names the actual cause. O_NONBLOCK: a fifo must not block us.
std::optional<std::string> unreadable_reason(const fs::path& file) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return std::error_code(errno, std::generic_category()).message();
  struct stat st {};
  const int rc = ::fstat(fd, &st);
  const int fstat_errno = errno;
  ::close(fd);
  if (rc != 0) return std::error_code(fstat_errno, std::generic_category()).message();
  if (S_ISDIR(st.st_mode)) return "is a directory";
  if (!S_ISREG(st.st_mode)) return "not a regular file";
  return std::nullopt;
}

// Boost.DLL wraps dlerror() as "...load() failed (dlerror system message: MSG): <errc text>";
// the user needs MSG alone, without the path it repeats.
std::string loader_message(const std::string& what, const fs::path& file) {
  static constexpr std::string_view kMarker = "(dlerror system message: ";
  std::string message = what;
  const auto begin = what.find(kMarker);
  const auto end = what.rfind(')');
  if (begin != std::string::npos && end != std::string::npos && end > begin)
    message = what.substr(begin + kMarker.size(), end - begin - kMarker.size());
  const std::string own_prefix = file.string() + ": ";
  if (message.starts_with(own_prefix)) message.erase(0, own_prefix.size());
  return message;
}

// "kind.impl": lowercase segments of [a-z0-9_] joined by '.', at least two of them.
bool valid_component_name(std::string_view name) {
  if (name.find('.') == std::string_view::npos) return false;
  bool segment_empty = true;
  for (char c : name) {
    if (c == '.') {
      if (segment_empty) return false;
      segment_empty = true;
    } else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_') {
      segment_empty = false;
    } else {
      return false;
    }
  }
  return !segment_empty;
}

// An instruction is written in traces as an upper-case identifier: TMA_LOAD, UMMA_COMMIT.
bool valid_instruction_name(std::string_view name) {
  if (name.empty() || name.front() < 'A' || name.front() > 'Z') return false;
  for (char c : name)
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

}  // namespace

struct PluginHost::Library {
  fs::path path;  // canonical
  boost::dll::shared_library dll;
};

PluginHost::PluginHost() = default;
PluginHost::~PluginHost() = default;

std::vector<fs::path> PluginHost::search_path(
    const std::vector<std::string>& manifest_plugin_path) {
  boost::dll::fs::error_code ec;
  const auto program = boost::dll::program_location(ec);
  if (ec) return search_path(manifest_plugin_path, fs::path());
  // SIMFA_PLUGIN_DIR_FROM_BINDIR is set by kernel/CMakeLists.txt from the install layout.
  return search_path(
      manifest_plugin_path,
      (fs::path(program.native()).parent_path() / SIMFA_PLUGIN_DIR_FROM_BINDIR).lexically_normal());
}

std::vector<fs::path> PluginHost::search_path(const std::vector<std::string>& manifest_plugin_path,
                                              const fs::path& plugin_dir) {
  std::vector<fs::path> dirs(manifest_plugin_path.begin(), manifest_plugin_path.end());
  if (const char* env = std::getenv("SIMFA_PLUGIN_PATH")) {
    std::string_view rest(env);
    while (!rest.empty()) {
      const auto colon = rest.find(':');
      const std::string_view entry = rest.substr(0, colon);
      if (!entry.empty()) dirs.emplace_back(entry);
      rest = colon == std::string_view::npos ? std::string_view{} : rest.substr(colon + 1);
    }
  }
  if (!plugin_dir.empty()) dirs.push_back(plugin_dir);
  return dirs;
}

void PluginHost::load_directories(const std::vector<fs::path>& dirs) {
  for (const auto& dir : dirs) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    std::vector<fs::path> files;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (name.starts_with("lib") && name.ends_with(".so")) files.push_back(it->path());
    }
    if (ec) {
      errors_.push_back(dir.string() + ": cannot list directory (" + ec.message() + ")");
      continue;
    }
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
      try {
        load_library(file);
      } catch (const InputError& e) {
        errors_.push_back(e.where().str() + ": " + e.message());
      }
    }
  }
}

void PluginHost::load_library(const fs::path& file) {
  auto fail = [&file](const std::string& cause) { return InputError(at(file), cause); };

  std::error_code ec;
  if (!fs::exists(file, ec)) throw fail("no such file");
  if (auto why = unreadable_reason(file)) throw fail("cannot read (" + *why + ")");
  const fs::path canonical = fs::canonical(file, ec);
  if (ec) throw fail("cannot resolve path (" + ec.message() + ")");
  for (const auto& loaded : libraries_)
    if (loaded->path == canonical) return;

  auto library = std::make_unique<Library>();
  library->path = canonical;
  try {
    // rtld_now: an undefined symbol fails here, with the loader's message, not mid-run.
    library->dll.load(boost::dll::fs::path(canonical.native()), boost::dll::load_mode::rtld_now);
  } catch (const std::exception& e) {
    throw fail(loader_message(e.what(), canonical));
  }
  if (!library->dll.has(kEntryAlias))
    throw fail(std::string("not a simfa plugin (no ") + kEntryAlias + ")");

  const PluginDescriptor* descriptor = library->dll.get_alias<PluginEntry>(kEntryAlias)();
  if (descriptor == nullptr) throw fail(std::string(kEntryAlias) + " returned no descriptor");
  // The only member every ABI shares: nothing else is read before it matches.
  if (descriptor->abi_version != kSdkAbiVersion)
    throw fail(fmt::format("built for sdk ABI {}, this simfa has ABI {}", descriptor->abi_version,
                           kSdkAbiVersion));
  if (descriptor->component_count > 0 && descriptor->components == nullptr)
    throw fail("descriptor lists components but provides none");

  std::vector<CatalogEntry> added;
  std::set<std::string, std::less<>> names;
  for (std::size_t i = 0; i < descriptor->component_count; ++i) {
    const ComponentInfo& info = descriptor->components[i];
    if (info.name == nullptr) throw fail(fmt::format("component #{} has no name", i));
    const std::string name = info.name;
    if (!valid_component_name(name))
      throw fail("invalid component name '" + name +
                 "' (expected kind.impl in lowercase letters, digits and '_', e.g. l2.unified)");
    if (info.version == nullptr || info.doc == nullptr || info.describe == nullptr ||
        info.create == nullptr)
      throw fail("component '" + name + "' lacks a version, doc, describe or create function");
    if (!names.insert(name).second) throw fail("component '" + name + "' is listed twice");
    if (const CatalogEntry* other = find(name))
      throw fail("component '" + name + "' is already provided by " + other->library_path);

    CatalogEntry entry;
    entry.name = name;
    entry.kind = name.substr(0, name.find('.'));
    entry.version = info.version;
    entry.doc = info.doc;
    entry.library_path = canonical.string();
    entry.info = &info;
    try {
      info.describe(entry.schema);
    } catch (const std::exception& e) {
      throw fail("describing component '" + name + "' failed: " + e.what());
    } catch (...) {
      throw fail("describing component '" + name + "' failed with an unknown exception");
    }
    added.push_back(std::move(entry));
  }

  if (descriptor->instruction_count > 0 && descriptor->instructions == nullptr)
    throw fail("descriptor lists instructions but provides none");
  InstructionSet instructions = instructions_;  // the library is added whole or not at all
  for (std::size_t i = 0; i < descriptor->instruction_count; ++i) {
    const InstructionSpec& spec = descriptor->instructions[i];
    if (spec.name == nullptr || spec.engine == nullptr)
      throw fail(fmt::format("instruction #{} has no name or engine", i));
    if (!valid_instruction_name(spec.name))
      throw fail("invalid instruction name '" + std::string(spec.name) +
                 "' (expected upper-case letters, digits and '_', e.g. TMA_LOAD)");
    try {
      instructions.add(spec);
    } catch (const Error& e) {
      throw fail(e.what());
    }
  }

  libraries_.push_back(std::move(library));
  instructions_ = std::move(instructions);
  for (auto& entry : added) {
    std::string key = entry.name;
    entries_.emplace(std::move(key), std::move(entry));
  }
}

const CatalogEntry* PluginHost::find(std::string_view name) const {
  const auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : &it->second;
}

std::vector<std::string> PluginHost::engine_kinds() const {
  std::vector<std::string> kinds;
  for (const InstructionSpec& spec : instructions_.specs())
    if (std::string_view(spec.engine) != "sm" &&
        std::find(kinds.begin(), kinds.end(), spec.engine) == kinds.end())
      kinds.emplace_back(spec.engine);
  return kinds;
}

std::vector<const CatalogEntry*> PluginHost::entries() const {
  std::vector<const CatalogEntry*> out;
  out.reserve(entries_.size());
  for (const auto& [name, entry] : entries_) out.push_back(&entry);
  return out;
}

std::unique_ptr<Component> PluginHost::create(const CatalogEntry& entry,
                                              const BuildContext& context) const {
  if (find(entry.name) != &entry)
    throw Error("internal: component '" + entry.name + "' was not loaded by this plugin host");
  const std::string tag = " [plugin " + entry.name + " " + entry.version + "]";
  const std::string table = "[" + context.params.path() + "] ";
  std::unique_ptr<Component> component;
  // Each handler copies what it needs into a kernel-owned exception: the plugin's exception
  // object (and its type's code) must not outlive this call.
  try {
    component = entry.info->create(context);
  } catch (const InputError& e) {
    if (e.where().file.empty()) throw InputError(e.message() + tag);
    throw InputError(e.where(), e.message() + tag);
  } catch (const Error& e) {
    throw Error(std::string(e.what()) + tag);
  } catch (const std::exception& e) {
    throw Error("error: " + table + e.what() + tag);
  } catch (...) {
    throw Error("error: " + table + "unknown exception while building the component" + tag);
  }
  if (!component) throw Error("error: " + table + "the factory returned no component" + tag);
  return component;
}

}  // namespace simfa::kernel
