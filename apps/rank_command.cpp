#include "apps/rank_command.h"

#include <fmt/format.h>

#include <charconv>
#include <fstream>
#include <iostream>
#include <iterator>

#include "simfa/error.h"

namespace simfa::apps {

namespace {

constexpr int kExitOk = 0;

simfa::InputError workload_error(const std::string& spec, const std::string& what) {
  return simfa::InputError(simfa::SourceLocation{"--workload", 0, 0},
                           "'" + spec + "': " + what + " (expected gemm:m=M,n=N,k=K)");
}

}  // namespace

ranking::GemmProblem parse_rank_workload(const std::string& spec) {
  constexpr std::string_view kPrefix = "gemm:";
  if (!spec.starts_with(kPrefix))
    throw workload_error(spec, "simfa rank ranks the gemm space only");
  ranking::GemmProblem p;
  std::string_view rest = std::string_view(spec).substr(kPrefix.size());
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    const auto eq = item.find('=');
    if (eq == std::string_view::npos)
      throw workload_error(spec, "'" + std::string(item) + "' is not KEY=VALUE");
    const std::string_view key = item.substr(0, eq), value = item.substr(eq + 1);
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || end != value.data() + value.size() || v < 1 ||
        v > (std::int64_t{1} << 30))
      throw workload_error(spec,
                           fmt::format("{} = '{}' is not an integer in 1 .. 2^30", key, value));
    if (key == "m")
      p.m = v;
    else if (key == "n")
      p.n = v;
    else if (key == "k")
      p.k = v;
    else
      throw workload_error(
          spec, fmt::format("unknown key '{}': the space sets the tile, stages and warps", key));
  }
  if (p.m == 0 || p.n == 0 || p.k == 0) throw workload_error(spec, "m, n and k are required");
  if (p.k * ranking::kElementBytes % 16 != 0 || p.n * ranking::kElementBytes % 16 != 0)
    throw workload_error(spec, "k and n must be multiples of 8: TMA needs 16-byte row strides");
  return p;
}

std::string format_rank_csv(const std::vector<ranking::RankedConfig>& ranked) {
  std::string out = "block_m,block_n,block_k,stages,warps,predicted_us,rank";
  for (std::string_view name : ranking::feature_names())
    fmt::format_to(std::back_inserter(out), ",{}", name);
  out += "\n";
  for (const auto& r : ranked) {
    const auto& c = r.config;
    fmt::format_to(std::back_inserter(out), "{},{},{},{},{},{:.6g},{}", c.block_m, c.block_n,
                   c.block_k, c.stages, c.warps, r.predicted_us, r.rank);
    std::vector<std::string> values = ranking::feature_values(r.features);
    if (r.simulated_us >= 0) values[1] = fmt::format("{:.6g}", r.simulated_us);  // simulated_us
    for (const auto& v : values) fmt::format_to(std::back_inserter(out), ",{}", v);
    out += "\n";
  }
  return out;
}

int run_rank_command(const RankRequest& request, const ranking::SimulateFn& simulate) {
  const ranking::GemmProblem problem = parse_rank_workload(request.workload_spec);
  const auto ranked = ranking::rank_gemm(problem, request.gpu, request.options, simulate);
  const std::size_t space = ranking::triton_gemm_space().size();
  std::string out = fmt::format(
      "simfa rank: Triton TMA GEMM {}x{}x{} on {} ({} SMs at {} MHz), ranker {}: {} of {} configs "
      "valid (docs/ranking.md)\n",
      problem.m, problem.n, problem.k,
      request.gpu_name.empty() ? "the manifest's GPU" : request.gpu_name, request.gpu.sm_count,
      request.gpu.clock_mhz, ranking::ranker_name(request.options.ranker), ranked.size(), space);
  fmt::format_to(std::back_inserter(out), "{:>4}  {:<22} {:>12} {:>12}  {}\n", "rank", "config",
                 "predicted", "features", "why");
  const std::size_t top =
      std::min(ranked.size(), static_cast<std::size_t>(std::max(0, request.top)));
  for (std::size_t i = 0; i < top; ++i) {
    const auto& r = ranked[i];
    fmt::format_to(std::back_inserter(out), "{:>4}  {:<22} {:>9.2f} us {:>9.2f} us  {}{}\n", r.rank,
                   r.config.name(), r.predicted_us, r.features.predicted_us, ranking::explain(r),
                   r.simulated_us >= 0 ? " [simulated]" : "");
  }
  std::cout << out;
  if (!request.csv_path.empty()) {
    std::ofstream csv(request.csv_path);
    csv << format_rank_csv(ranked);
    if (!csv) throw simfa::InputError("cannot write '" + request.csv_path + "'");
  }
  return kExitOk;
}

}  // namespace simfa::apps
