// `memory.ideal`: a memory port with a fixed latency and unlimited bandwidth. Every request is
// answered exactly `latency` cycles after it was sent; same-cycle responses keep send order.
// For tests, ablations and the level-1 TMA engine without a hierarchy behind it.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

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
  /// Every request is answered `latency` after its send: a client may time its lines itself
  /// and only have them counted (docs/performance.md §20).
  std::optional<Cycle> fixed_latency() const override { return latency_; }
  void send_counted(Cycle now, const Burst& burst) override;
  /// The engines' steps cost no event each: those armed one after another are one
  /// (docs/performance.md §16).
  bool runs_steps() const override { return true; }
  void defer_step(Cycle when, MemClient& client) override { steps_.defer(when, client); }
  /// There is no cache: every byte that arrives (the last-level cache's place in the stats
  /// contract) is served by memory, so the llc and dram totals are equal.
  std::optional<MemoryTraffic> traffic() const override;
  /// Counts the counted lines up to `end`, the run's last cycle.
  void finish(Cycle end) override { fold_counted(end, true); }

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

  /// Moves into the counters and `bytes_` the runs whose lines all left by `at`, or with `all`
  /// (the end of the run) every line sent by then.
  void fold_counted(Cycle at, bool all);
  void count(bool write, std::uint64_t lines, std::uint64_t bytes);
  /// Lines counted ahead (send_counted, addrs null) whose cycles are not all past yet: each
  /// run's lines are counted at their own cycles, so that the byte totals read during a run (the
  /// bandwidth tracks) are those of the lines sent so far.
  std::vector<Burst> counted_;
  std::size_t fold_at_ = 64;  ///< fold when counted_ reaches this size

  Counter& reads_;
  Counter& writes_;
  ByteTotals bytes_;  ///< of the requests sent
};

}  // namespace simfa::memory_models
