#include "kernel/ablation.h"

#include <algorithm>
#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "kernel/workload_spec.h"
#include "simfa/error.h"
#include "simfa/memory.h"

namespace simfa::kernel {

namespace fs = std::filesystem;

std::vector<std::string> find_ablations(const std::string& base, const std::vector<std::string>& only) {
  const fs::path dir = fs::path(base).parent_path() / "ablations";
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".toml") found.push_back(e.path().string());
  if (ec) throw InputError("cannot list ablations in '" + dir.string() + "': " + ec.message());
  std::sort(found.begin(), found.end());
  if (only.empty()) return found;
  std::vector<std::string> chosen;
  for (const auto& name : only) {
    auto it = std::find_if(found.begin(), found.end(),
                           [&](const std::string& f) { return fs::path(f).stem() == name; });
    if (it == found.end()) {
      std::string known;
      for (const auto& f : found) known += (known.empty() ? "" : ", ") + fs::path(f).stem().string();
      throw InputError(fmt::format("no ablation '{}' in {} (there: {})", name, dir.string(), known));
    }
    chosen.push_back(*it);
  }
  return chosen;
}

AblationRow run_for_ablation(const std::string& manifest, const std::string& workload) {
  PluginHost host;  // outlives the simulation built from its libraries
  ManifestDocument doc = read_manifest(manifest, {});
  host.load_directories(PluginHost::search_path(doc.plugin_path()));
  const Manifest m = resolve_manifest(doc, host);
  const ComponentConfig w = parse_workload_spec(workload, host);
  Simulation sim(m, w, host, RunOptions{});
  const RunResult r = sim.run();
  AblationRow row;
  row.manifest = manifest;
  row.outcome = r.outcome;
  row.cycles = r.cycles;
  if (const std::optional<double> rate = sim.l2_hit_rate()) {
    row.has_l2 = true;
    row.l2_hit_rate = *rate;
  }
  const MemoryTraffic bytes = sim.traffic();
  row.dram_bytes = bytes.dram.read + bytes.dram.write;
  return row;
}

std::string format_ablation_table(const std::vector<AblationRow>& rows) {
  std::size_t width = 8;
  for (const auto& r : rows) width = std::max(width, r.manifest.size());
  std::string s = fmt::format("{:<{}}  {:>12}  {:>9}  {:>11}  {:>14}\n", "manifest", width, "cycles",
                              "vs base", "L2 hit rate", "DRAM bytes");
  for (const auto& r : rows) {
    const double base = rows.empty() ? 0.0 : static_cast<double>(rows.front().cycles);
    std::string cycles = r.outcome == RunOutcome::kCompleted ? fmt::format("{}", r.cycles)
                                                              : outcome_name(r.outcome);
    std::string change = &r == &rows.front() || r.outcome != RunOutcome::kCompleted
                             ? std::string("-")
                             : fmt::format("{:+.1f}%", 100.0 * (static_cast<double>(r.cycles) - base) / base);
    std::string hit = r.has_l2 ? fmt::format("{:.1f}%", 100.0 * r.l2_hit_rate) : std::string("n/a");
    s += fmt::format("{:<{}}  {:>12}  {:>9}  {:>11}  {:>14}\n", r.manifest, width, cycles, change,
                     hit, r.dram_bytes);
  }
  return s;
}

}  // namespace simfa::kernel
