#include "fuzz_support.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <variant>
#include <vector>

#include "kernel/event_queue.h"
#include "kernel/stats_registry.h"
#include "kernel/workload_spec.h"
#include "simfa/error.h"

namespace simfa::fuzz {

namespace fs = std::filesystem;

const kernel::PluginHost& plugins() {
  static const kernel::PluginHost* host = [] {
    auto* h = new kernel::PluginHost();  // never destroyed: components die before exit
    h->load_directories(kernel::PluginHost::search_path({}));
    for (const auto& e : h->errors()) std::fprintf(stderr, "warning: %s\n", e.c_str());
    if (!h->find("workload.trace")) unexpected("setup", "no plugins found beside the executable");
    return h;
  }();
  return *host;
}

const kernel::Manifest& h800() {
  static const kernel::Manifest manifest = [] {
    const std::string path = std::string(SIMFA_SOURCE_DIR) + "/configs/h800.toml";
    return kernel::resolve_manifest(kernel::read_manifest(path, {}), plugins());
  }();
  return manifest;
}

const std::string& scratch_dir() {
  static const std::string dir = [] {
    const fs::path d = fs::temp_directory_path() / ("simfa-fuzz-" + std::to_string(::getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    fs::copy(fs::path(SIMFA_SOURCE_DIR) / "configs", d / "configs", fs::copy_options::recursive);
    static const fs::path remove_at_exit = d;
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(remove_at_exit, ec);
    });
    return d.string();
  }();
  return dir;
}

std::string write_input(std::string_view name, std::string_view text) {
  const std::string path = scratch_dir() + "/" + std::string(name);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!out) unexpected("setup", "cannot write " + path);
  return path;
}

std::string write_input(std::string_view name, const std::uint8_t* data, std::size_t size) {
  return write_input(name, std::string_view(reinterpret_cast<const char*>(data), size));
}

std::string toml_string(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string write_workload_file(std::string_view name, std::string_view frontend,
                                std::string_view body) {
  return write_input(name, "[workload]\nfrontend = " + toml_string(frontend) + "\n" +
                               std::string(body));
}

// A frontend's bound on one CTA's instructions, lowered to kMaxInstructions: the fuzzer looks for
// inputs that crash or hang, and a legal workload of 2^24 instructions per CTA (a 32 MiB pointer
// chase) is neither, only slow.
constexpr std::int64_t kMaxInstructions = 20000;

Params bounded(const Params& params) {
  std::vector<Params::Entry> entries = params.entries();
  for (Params::Entry& e : entries)
    if (e.name == "max_instructions_per_cta")
      if (auto* v = std::get_if<std::int64_t>(&e.value)) *v = std::min(*v, kMaxInstructions);
  return Params(params.path(), params.where(""), std::move(entries));
}

void build_workload(const std::string& spec) {
  const kernel::PluginHost& host = plugins();
  const kernel::Manifest& gpu = h800();
  kernel::ComponentConfig config = kernel::parse_workload_spec(spec, host);
  config.params = bounded(config.params);
  kernel::StatsRegistryImpl stats;
  // One queue for every input: no frontend schedules an event while it is built, and a fresh
  // queue's 4096-bucket wheel was 3 to 5 % of fuzz_ttgir's time.
  static kernel::CalendarQueue events;
  const BuildContext context{config.params, events, StatsScope(stats, "workload"), gpu.gpu, 1, -1};
  auto workload = host.create(*config.entry, context);
}

bool located(const std::string& message) {
  // "FILE: error: ..." or "FILE:LINE:COL: error: ...", never the bare "error: ..." of an
  // InputError built without a SourceLocation, nor "<unknown>: error: ...".
  const auto at = message.find(": error: ");
  return at != std::string::npos && at > 0 && !message.starts_with("<unknown>");
}

void note_rejected(const std::string& message) {
  static const bool verbose = std::getenv("SIMFA_FUZZ_VERBOSE") != nullptr;
  if (verbose) std::fprintf(stderr, "  %s\n", message.empty() ? "accepted" : message.c_str());
}

void unexpected(const char* what, const std::string& message) {
  std::fprintf(stderr, "simfa fuzz: %s:\n%s\n", what, message.c_str());
  std::abort();
}

}  // namespace simfa::fuzz
