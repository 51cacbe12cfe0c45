// What every fuzz target shares (docs/reliability.md): the plugins loaded once from the build
// tree, the fuzz input written to a file of this process (the parsers read files, as the CLI
// hands them paths), and the one rule every input must keep: it parses, or it fails with a simfa
// input error that names where (file, and line:col where there is one). Any other exception, a
// crash, a sanitizer report, a hang or a leak is a bug.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "kernel/manifest.h"
#include "kernel/plugin_host.h"

namespace simfa::fuzz {

/// The plugins beside the executable (build/<preset>/lib/simfa/plugins), loaded on first use.
const kernel::PluginHost& plugins();

/// configs/h800.toml resolved once: the GPU the workload frontends build for.
const kernel::Manifest& h800();

/// This process's scratch directory (under $TMPDIR), holding a copy of configs/ so that a fuzzed
/// manifest can `extends` the real ones.
const std::string& scratch_dir();

/// Writes `size` bytes to `scratch_dir()/name` and returns the path.
std::string write_input(std::string_view name, const std::uint8_t* data, std::size_t size);
std::string write_input(std::string_view name, std::string_view text);

/// `text` as a TOML basic string, quotes included.
std::string toml_string(std::string_view text);

/// Writes `scratch_dir()/name`, a workload file: `[workload]`, `frontend = "FRONTEND"`, then
/// `body` (more `key = value` lines). Returns its path.
std::string write_workload_file(std::string_view name, std::string_view frontend,
                                std::string_view body);

/// Builds the workload `spec` names exactly as `simfa run --workload SPEC` does: the workload
/// spec parser, then the frontend plugin's constructor (which parses its files and expands the
/// first and last CTA), for the H800.
void build_workload(const std::string& spec);

/// Runs `fn`; returns normally when it succeeds or throws a located simfa input error. Anything
/// else (another exception, or an input error with no location) aborts with the message, which
/// libFuzzer reports as a crash and the corpus replay as a failure.
template <typename F>
void accept_input_errors(F&& fn);

[[noreturn]] void unexpected(const char* what, const std::string& message);
bool located(const std::string& message);
/// With SIMFA_FUZZ_VERBOSE set, each rejected input's message is printed (to see which inputs
/// parse: `SIMFA_FUZZ_VERBOSE=1 fuzz_trace_replay DIR`).
void note_rejected(const std::string& message);

template <typename F>
void accept_input_errors(F&& fn) {
  try {
    fn();
    note_rejected("");
  } catch (const kernel::ManifestError& e) {
    for (const std::string& m : e.messages)
      if (!located(m)) unexpected("manifest error without a location", m);
    note_rejected(e.what());
  } catch (const InputError& e) {
    if (!located(e.what())) unexpected("input error without a location", e.what());
    note_rejected(e.what());
  } catch (const std::exception& e) {
    unexpected("not a simfa input error", e.what());
  }
}

}  // namespace simfa::fuzz
