// `simfa analyze MANIFEST --workload SPEC [--sweep AXIS]... [--json] [--csv FILE]`: the
// analytical fast path (docs/analytical.md). The CLI fills the request from the manifest's
// [gpu] table; this prints the report (text, JSON) or the sweep's CSV.
#pragma once

#include <string>
#include <vector>

#include "analytical/gpu.h"

namespace simfa::apps {

struct AnalyzeRequest {
  analytical::AnalyticalGpu gpu;
  std::string gpu_name;               ///< the manifest's [gpu] name, for the report
  std::string workload_spec;          ///< "fa3:model=llama3-70b,seqlen=32768" or "gemm:..."
  std::vector<std::string> sweeps;    ///< "seqlen=512..65536:x2", one per axis of the grid
  bool json = false;                  ///< JSON on stdout instead of text (or CSV)
  std::string csv_path;               ///< write the points as CSV to this file
};

/// Runs the request. Returns 0, or 1 on bad input after printing every problem to stderr
/// ("--workload: error: fa3: unknown key 'seqlem' (did you mean 'seqlen'?)").
int run_analyze_command(const AnalyzeRequest& request);

}  // namespace simfa::apps
