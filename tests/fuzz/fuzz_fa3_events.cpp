// fuzz_fa3_events: FlashAttention-3 per-warp event logs (frontends/fa3/fa3_event_log.cpp,
// docs/workloads.md), read by workload.fa3_events for the shape of tests/frontends/data/
// fa3_small_events.csv (2 query heads on 1 KV head, 128 queries, 352 keys) and translated CTA
// by CTA, as `simfa run --workload fa3_events:path=FILE,...` does.
#include <cstddef>
#include <cstdint>

#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace simfa::fuzz;
  const std::string log = write_input("input.csv", data, size);
  static const std::string workload =
      write_workload_file("fa3_workload.toml", "fa3_events",
                          "path = " + toml_string(log) +
                              "\nheads = 2\nkv_heads = 1\nseqlen_q = 128\nseqlen_k = 352\n");
  accept_input_errors([&] { build_workload(workload); });
  return 0;
}
