// `dram.fixed`: main memory as one FIFO bandwidth queue plus a fixed latency. A request of B bytes
// arriving at time a occupies the queue for B / bandwidth from max(a, queue free) and is answered
// `latency_ns` + `controller_latency_ns` after its transfer ends:
//
//     completion = max(arrival, queue free) + bytes / bandwidth + latency + controller latency
//
// (`controller_latency_ns` is dram.hbm3's parameter of that name, so a manifest that swaps the
// backend keeps its L2-to-DRAM path.)
//
// Time is kept in femtoseconds and mapped to SM cycles at gpu.clock_mhz (simfa/clock.h), rounding
// the completion up to the first SM cycle that starts at or after it, and never earlier than the
// cycle after the send. For ablations (configs/ablations/fixed_dram.toml) and calibration.
#pragma once

#include <cstdint>

#include "dram_totals.h"
#include "simfa/clock.h"
#include "simfa/component.h"
#include "simfa/memory.h"
#include "simfa/slot_pool.h"

namespace simfa::memory_models {

class FixedDram final : public DramBackend, private EventTarget {
 public:
  explicit FixedDram(const BuildContext& context);
  static void describe(Schema& schema);

  void send(Cycle now, const MemRequest& request) override;
  void finish(Cycle end) override;
  ByteTotals dram_bytes() const override { return totals_.bytes(); }

 private:
  /// The response of the request in slot `payload`.
  void on_event(Cycle now, std::uint64_t payload) override;

  EventQueue& events_;
  ClockDomain clock_;  ///< the SM clock
  Femtoseconds latency_;  ///< latency_ns + controller_latency_ns
  std::uint64_t bytes_per_second_;
  Femtoseconds queue_free_ = 0;  ///< when the queue finishes the last transfer accepted so far

  SlotPool<MemRequest> in_flight_;  ///< the event payload is the slot

  DramTotals totals_;
  Histogram& queue_delay_;
};

}  // namespace simfa::memory_models
