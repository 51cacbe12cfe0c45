// `memory.ideal`: a memory port with a fixed latency and unlimited bandwidth. Every request is
// answered exactly `latency` cycles after it was sent; same-cycle responses keep send order.
// For tests, ablations and the level-1 TMA engine without a hierarchy behind it.
#pragma once

#include <cstdint>
#include <optional>

#include "simfa/burst_wheel.h"
#include "simfa/component.h"
#include "simfa/memory.h"
#include "simfa/ring_queue.h"
#include "simfa/step_batch.h"

namespace simfa::memory_models {

class IdealMemory final : public MemoryPort, private EventTarget {
 public:
  explicit IdealMemory(const BuildContext& context);
  static void describe(Schema& schema);

  void send(Cycle now, const MemRequest& request) override;
  bool accepts_bursts() const override { return bursts_.has_value(); }
  void send_burst(Cycle now, const Burst& burst) override { bursts_->book(now, burst); }
  /// The engines' steps cost no event each: those armed one after another are one
  /// (docs/performance.md §16).
  bool runs_steps() const override { return true; }
  void defer_step(Cycle when, MemClient& client) override { steps_.defer(when, client); }
  /// There is no cache: every byte that arrives (the last-level cache's place in the stats
  /// contract) is served by memory, so the llc and dram totals are equal.
  std::optional<MemoryTraffic> traffic() const override { return MemoryTraffic{bytes_, bytes_}; }

 private:
  /// The responses of the batch at the front of `batches_`.
  void on_event(Cycle now, std::uint64_t payload) override;

  EventQueue& events_;
  Cycle latency_;
  // Every response comes `latency_` after its send, so the requests in flight are answered in
  // send order: one FIFO. The responses due in one cycle were all sent in one cycle and are one
  // event, a batch (`batches_`: responses per batch, in firing order), scheduled with the first
  // of them. Between those sends, other components may schedule events for the same cycle and
  // priority; they touch nothing a response reads (docs/performance.md §7).
  RingQueue<MemRequest> in_flight_;
  RingQueue<std::uint32_t> batches_;
  Cycle last_batch_ = kNever;  ///< the cycle of the batch scheduled last
  std::optional<BurstWheel> bursts_;  ///< bursts = true: the booked lines, sent at their cycles
  StepBatch steps_;

  Counter& reads_;
  Counter& writes_;
  ByteTotals bytes_;  ///< of the requests sent
};

}  // namespace simfa::memory_models
