// The statistics every DRAM backend produces: request counts, the byte counters of the stats
// contract (docs/stats.md: dram_read_bytes, dram_write_bytes) and the bandwidth achieved over
// the run.
#pragma once

#include <string>
#include <vector>

#include "simfa/memory.h"
#include "simfa/params.h"
#include "simfa/stats.h"

namespace simfa::memory_models {

class DramTotals {
 public:
  DramTotals(const StatsScope& stats, double clock_mhz);
  static void describe(Schema& schema);

  /// A request arriving.
  void count(const MemRequest& request);
  /// Records the run's length, the denominator of every achieved-bandwidth formula.
  void finish(Cycle end) { elapsed_cycles_.set(end); }
  /// The bytes counted so far (DramBackend::dram_bytes).
  ByteTotals bytes() const { return {dram_read_bytes_.value(), dram_write_bytes_.value()}; }

  /// Binds the formula `name` (declared in GB/s) = 1e-9 * sum(byte counters) / run time. The
  /// counters are named relative to `stats`, the scope given to the constructor.
  void bandwidth_formula(const std::string& name, std::vector<std::string> byte_counters) const;

 private:
  StatsScope stats_;
  double clock_mhz_;
  Counter& reads_;
  Counter& writes_;
  Counter& dram_read_bytes_;
  Counter& dram_write_bytes_;
  Counter& elapsed_cycles_;
};

}  // namespace simfa::memory_models
