#include "dram_totals.h"

#include <utility>

namespace simfa::memory_models {

DramTotals::DramTotals(const StatsScope& stats, double clock_mhz)
    : stats_(stats),
      clock_mhz_(clock_mhz),
      reads_(stats.counter("reads")),
      writes_(stats.counter("writes")),
      dram_read_bytes_(stats.counter("dram_read_bytes")),
      dram_write_bytes_(stats.counter("dram_write_bytes")),
      elapsed_cycles_(stats.counter("elapsed_cycles")) {
  bandwidth_formula("achieved_bandwidth", {"dram_read_bytes", "dram_write_bytes"});
}

void DramTotals::describe(Schema& schema) {
  schema.stat("reads", StatKind::kCounter, "requests", "read requests");
  schema.stat("writes", StatKind::kCounter, "requests", "write requests");
  schema.stat("dram_read_bytes", StatKind::kCounter, "bytes", "bytes read from DRAM");
  schema.stat("dram_write_bytes", StatKind::kCounter, "bytes", "bytes written to DRAM");
  schema.stat("elapsed_cycles", StatKind::kCounter, "cycles",
              "SM cycles of the run (set at the end), the bandwidth denominator");
  schema.stat("achieved_bandwidth", StatKind::kFormula, "GB/s",
              "(dram_read_bytes + dram_write_bytes) / run time, at gpu.clock_mhz");
}

void DramTotals::count(const MemRequest& request) {
  if (request.write) {
    writes_.add();
    dram_write_bytes_.add(request.bytes);
  } else {
    reads_.add();
    dram_read_bytes_.add(request.bytes);
  }
}

void DramTotals::bandwidth_formula(const std::string& name,
                                   std::vector<std::string> byte_counters) const {
  // bytes / (cycles / (clock_mhz * 1e6) s) / 1e9 = bytes / cycles * clock_mhz * 1e-3 GB/s.
  stats_.formula(name, Formula{std::move(byte_counters), {"elapsed_cycles"}, clock_mhz_ * 1e-3});
}

}  // namespace simfa::memory_models
