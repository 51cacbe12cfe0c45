// One row of docs/crosscheck.md's DRAM table: simulates a workload on configs/h800.toml (with
// --set overrides) and evaluates the analytical model on the same manifest, printing a Markdown
// table row. tools/crosscheck_table.sh runs one process per row, several at once, and splices the
// rows into the document.
//
//   crosscheck_dram_table --header
//   crosscheck_dram_table [--set KEY=VALUE]... WORKLOAD
//
// WORKLOAD is an inline spec both models accept ("fa3:heads=4,kv_heads=1,seqlen=8192").
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "crosscheck.h"

namespace {

using namespace simfa;

std::string mb(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", bytes / 1e6);
  return text;
}

std::string fixed(double v, const char* format) {
  char text[32];
  std::snprintf(text, sizeof text, format, v);
  return text;
}

int usage() {
  std::fprintf(stderr, "usage: crosscheck_dram_table --header | [--set KEY=VALUE]... WORKLOAD\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--header") == 0) {
    std::printf(
        "| seqlen | CTAs / waves | working set, MB | regime | ideal, MB | wave model, MB | SimFA, MB | "
        "simulated, MB | simulated / ideal | simulated / wave model | LLC reads, MB: simulated vs analytical | "
        "simulated cycles | wall, s |\n"
        "|---:|---:|---:|:---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    return 0;
  }
  std::vector<kernel::Override> sets;
  std::string workload;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--set") == 0 && i + 1 < argc) {
      sets.push_back(kernel::parse_override(argv[++i]));
    } else if (workload.empty() && argv[i][0] != '-') {
      workload = argv[i];
    } else {
      return usage();
    }
  }
  if (workload.empty()) return usage();
  try {
    const analytical::AnalyticalResult a = crosscheck::analyze(sets, workload);
    const crosscheck::SimTotals s = crosscheck::simulate(sets, workload);
    if (!s.completed) {
      std::fprintf(stderr, "%s: the simulation did not complete\n", workload.c_str());
      return 1;
    }
    const double sim_reads = static_cast<double>(s.dram_read_bytes);
    const double llc = static_cast<double>(s.llc_read_bytes);
    // The LLC column holds one number when both models agree, both when they do not.
    const std::string llc_text = llc == a.llc_read_bytes ? mb(llc) : mb(llc) + " vs " + mb(a.llc_read_bytes);
    std::printf("| %lld | %lld / %lld | %s | %s | %s | %s | %s | %s | %s | %s | %s | %llu | %s |\n",
                static_cast<long long>(a.kind == analytical::WorkloadKind::fa3
                                           ? analytical::resolve_workload(analytical::parse_workload_spec(workload))
                                                 .fa3.seqlen_k
                                           : 0),
                static_cast<long long>(a.ctas), static_cast<long long>(a.waves), mb(a.working_set_bytes).c_str(),
                std::string(analytical::regime_name(a.regime)).c_str(), mb(a.dram_ideal_read_bytes).c_str(),
                mb(a.dram_wave_read_bytes).c_str(), mb(a.dram_read_bytes).c_str(), mb(sim_reads).c_str(),
                fixed(sim_reads / a.dram_ideal_read_bytes, "%.2f").c_str(),
                fixed(sim_reads / a.dram_wave_read_bytes, "%.2f").c_str(), llc_text.c_str(),
                static_cast<unsigned long long>(s.cycles), fixed(s.wall_seconds, "%.1f").c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
