// `simfa rank MANIFEST --workload gemm:m=M,n=N,k=K [--ranker features|simulate|hybrid]
// [--top N] [--shortlist N] [--csv FILE]`: orders the valid configs of Triton's TMA GEMM for
// one problem without running them (docs/ranking.md). The CLI fills the request from the
// manifest; the simulator comes in as a callback.
#pragma once

#include <string>

#include "ranking/gemm_ranking.h"

namespace simfa::apps {

struct RankRequest {
  ranking::RankGpu gpu;
  std::string gpu_name;
  std::string workload_spec;  ///< "gemm:m=4096,n=4096,k=4096"
  ranking::RankOptions options;
  int top = 10;
  std::string csv_path;
};

/// Parses "gemm:m=M,n=N,k=K" (only those keys: the space fixes the rest). Throws
/// simfa::InputError naming the bad part.
ranking::GemmProblem parse_rank_workload(const std::string& spec);

/// The CSV: one row per valid config, best first; block_m, block_n, block_k, stages, warps,
/// predicted_us, rank, then every feature (ranking::feature_names()).
std::string format_rank_csv(const std::vector<ranking::RankedConfig>& ranked);

/// Runs the request: prints the top N with why, writes the CSV. Returns the exit code.
int run_rank_command(const RankRequest& request, const ranking::SimulateFn& simulate);

}  // namespace simfa::apps
