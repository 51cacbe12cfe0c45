#include "dram_totals.h"

#include <utility>

namespace simfa::memory_models {

namespace {
const char* const kReadsDoc = "read requests";
const char* const kWritesDoc = "write requests";
const char* const kReadBytesDoc = "bytes read from DRAM";
const char* const kWriteBytesDoc = "bytes written to DRAM";
const char* const kElapsedDoc = "SM cycles of the run (set at the end), the bandwidth denominator";
const char* const kBandwidthDoc =
    "(dram_read_bytes + dram_write_bytes) / run time, at gpu.clock_mhz";
}  // namespace

DramTotals::DramTotals(const StatsScope& stats, double clock_mhz)
    : stats_(stats),
      clock_mhz_(clock_mhz),
      reads_(stats.counter("reads", "requests", kReadsDoc)),
      writes_(stats.counter("writes", "requests", kWritesDoc)),
      dram_read_bytes_(stats.counter("dram_read_bytes", "bytes", kReadBytesDoc)),
      dram_write_bytes_(stats.counter("dram_write_bytes", "bytes", kWriteBytesDoc)),
      elapsed_cycles_(stats.counter("elapsed_cycles", "cycles", kElapsedDoc)) {
  bandwidth_formula("achieved_bandwidth", {"dram_read_bytes", "dram_write_bytes"}, kBandwidthDoc);
}

void DramTotals::describe(Schema& schema) {
  schema.stat("reads", StatKind::kCounter, "requests", kReadsDoc);
  schema.stat("writes", StatKind::kCounter, "requests", kWritesDoc);
  schema.stat("dram_read_bytes", StatKind::kCounter, "bytes", kReadBytesDoc);
  schema.stat("dram_write_bytes", StatKind::kCounter, "bytes", kWriteBytesDoc);
  schema.stat("elapsed_cycles", StatKind::kCounter, "cycles", kElapsedDoc);
  schema.stat("achieved_bandwidth", StatKind::kFormula, "GB/s", kBandwidthDoc);
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

void DramTotals::bandwidth_formula(const std::string& name, std::vector<std::string> byte_counters,
                                   std::string_view doc) const {
  // bytes / (cycles / (clock_mhz * 1e6) s) / 1e9 = bytes / cycles * clock_mhz * 1e-3 GB/s.
  stats_.formula(name, "GB/s", doc, Formula{std::move(byte_counters), {"elapsed_cycles"}, clock_mhz_ * 1e-3});
}

}  // namespace simfa::memory_models
