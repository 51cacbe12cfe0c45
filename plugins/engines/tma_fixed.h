// `tma.fixed`: the level-0 TMA engine. No memory traffic: an op finishes its setup, then moves its
// bytes through one per-SM bandwidth queue, in issue order.
#pragma once

#include <cstdint>

#include "simfa/component.h"
#include "simfa/core.h"
#include "simfa/ring_queue.h"

#include "busy_time.h"
#include "tma_setup.h"

namespace simfa::engines {

class TmaFixed final : public TmaEngine, private EventTarget {
 public:
  explicit TmaFixed(const BuildContext& context);
  static void describe(Schema& schema);

  void connect(MemoryPort& memory, TmaClient& client) override;
  void issue(Cycle now, const TmaOp& op) override;
  std::uint64_t busy_cycles() const override { return busy_.cycles(); }
  std::uint64_t issued_bytes() const override { return bytes_.value(); }
  std::uint64_t line_requests() const override { return 0; }  // level 0: no memory traffic
  void finish(Cycle end) override;

 private:
  struct InFlight {
    std::uint64_t token = 0;
    std::uint32_t bytes = 0;
  };

  void on_event(Cycle now, std::uint64_t payload) override;

  EventQueue& events_;
  TmaSetup setup_;
  double bytes_per_cycle_;
  TmaClient* client_ = nullptr;
  /// When the bandwidth queue finishes its last accepted transfer (fractional cycles).
  double channel_free_ = 0.0;
  /// Completions are in issue order (each transfer starts after the previous one ends), so
  /// events pop this FIFO.
  RingQueue<InFlight> in_flight_;

  Counter& ops_;
  Counter& bytes_;
  BusyTime busy_;
};

}  // namespace simfa::engines
