#include "docs_table.h"

#include <cstdio>
#include <vector>

#include "analytical/result_fields.h"
#include "analytical/sweep.h"
#include "test_gpus.h"

namespace simfa::analytical::testing {

namespace {
std::string mb(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", bytes / 1e6);
  return text;
}
}  // namespace

std::string dram_table() {
  // The same grid as: simfa analyze configs/h800.toml --workload fa3:model=llama3-8b,seqlen=512
  //   --sweep model=llama3-8b,llama3-70b,llama3-405b --sweep seqlen=512,...,131072 --csv FILE
  const WorkloadSpec base = parse_workload_spec("fa3:model=llama3-8b,seqlen=512");
  std::vector<SweepAxis> axes;
  axes.push_back(parse_sweep("seqlen=512,1024,2048,4096,8192,16384,24576,32768,40960,49152,65536,98304,131072",
                             WorkloadKind::fa3));
  axes.push_back(parse_sweep("model=llama3-8b,llama3-70b,llama3-405b", WorkloadKind::fa3));
  const SweepGrid grid(base, h800(), std::move(axes));

  std::string table =
      "| seqlen | working set, MB (8B, 70B, 405B) | re-use survival (8B, 70B, 405B) | regime | 8B "
      "ideal | 8B SimFA | 70B ideal | 70B SimFA | "
      "405B ideal | 405B SimFA | SimFA / ideal (8B, 70B, 405B) |\n"
      "|---:|:---|:---|:---|---:|---:|---:|---:|---:|---:|:---|\n";
  std::string working_sets, survivals, regimes, traffic, ratios;
  grid.for_each([&](const SweepPoint& p) {
    const AnalyticalResult& r = p.result;
    const std::string regime(regime_name(r.regime));
    const bool first = p.index[1] == 0;
    working_sets += (first ? "" : ", ") + mb(r.working_set_bytes);
    char survival[32];
    std::snprintf(survival, sizeof survival, "%.2f", r.reuse_survival);
    survivals += (first ? "" : ", ") + std::string(survival);
    regimes += first ? regime : regimes.ends_with(regime) ? "" : ", " + regime;
    traffic += mb(r.dram_ideal_bytes()) + " | " + mb(r.dram_bytes()) + " | ";
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%.2f", r.dram_to_ideal());
    ratios += (first ? "" : ", ") + std::string(ratio);
    if (p.index[1] + 1 == grid.axes()[1].values.size()) {
      table += "| " + std::to_string(p.workload.fa3.seqlen_q) + " | " + working_sets + " | " +
               survivals + " | " + regimes + " | " + traffic + ratios + " |\n";
      working_sets.clear();
      survivals.clear();
      regimes.clear();
      traffic.clear();
      ratios.clear();
    }
  });
  return table;
}

std::string keys_table() {
  std::string table = "| in | key | values | meaning |\n|:---|:---|:---|:---|\n";
  for (WorkloadKind kind : {WorkloadKind::fa3, WorkloadKind::gemm}) {
    for (const WorkloadKey& key : workload_keys(kind)) {
      std::string values = key.type == KeyType::integer ? "positive integer" : "true, false";
      if (key.type == KeyType::choice) {
        values.clear();
        for (std::string_view c : key.choices) values += (values.empty() ? "`" : ", `") + std::string(c) + "`";
      }
      table += "| `" + std::string(workload_kind_name(kind)) + ":` | `" + std::string(key.name) + "` | " + values +
               " | " + std::string(key.doc) + " |\n";
    }
  }
  static constexpr const char* kUnits[] = {"integer", "MHz, or 1.83GHz", "bytes, or 50MiB", "B/s, or 3.35TB/s",
                                           "number"};
  for (const GpuParam& param : gpu_params())
    table += "| `[gpu]` | `" + std::string(param.name) + "` | " + kUnits[static_cast<int>(param.unit)] + " | " +
             std::string(param.doc) + " |\n";
  return table;
}

std::string fields_table() {
  std::string table = "| field | unit | workloads | meaning |\n|:---|:---|:---|:---|\n";
  for (const ResultField& f : result_fields()) {
    const bool fa3 = f.applies_to(WorkloadKind::fa3), gemm = f.applies_to(WorkloadKind::gemm);
    table += "| `" + std::string(f.name) + "` | " + std::string(f.unit) + " | " +
             (fa3 && gemm ? "both" : fa3 ? "fa3" : "gemm") + " | " + std::string(f.doc) + " |\n";
  }
  return table;
}

}  // namespace simfa::analytical::testing
