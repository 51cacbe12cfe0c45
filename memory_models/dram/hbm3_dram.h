// `dram.hbm3`: HBM3 main memory of stacks x channels x pseudo-channels x bank groups x banks, with
// open-page row buffers and an FR-FCFS controller per channel (hbm3_channel.h), timed by name in
// memory-clock cycles from a preset (hbm3_config.h) whose every field a manifest key of the same
// name may override.
//
// Clock domains. The channels run in memory cycles of tCK; the SM clock is gpu.clock_mhz. Time
// is exact: a memory cycle m starts at m x tCK femtoseconds and an SM cycle c at
// floor(c x 1e15 / Hz) femtoseconds (simfa/clock.h). A request sent in SM cycle c reaches its
// channels at the first memory-clock edge strictly after c starts; it is answered in the first
// SM cycle that starts at or after the data of its last burst has crossed the bus (never before
// the cycle after the send), plus `controller_latency_ns` (the path between the L2 and the
// devices, which the bank timing leaves out). A request of B bytes at address A is the
// ceil((A % 32 + B) / 32) bursts covering it (32 B with the JESD238 pseudo-channel), each placed
// by the address map.
//
// Events. A channel is woken only while it has queued bursts, at the SM cycle of the next command
// it can issue; each wake issues every command due up to the current memory cycle. Nothing ticks
// while the memory is idle.
#pragma once

#include <cstdint>
#include <vector>

#include "dram_totals.h"
#include "hbm3_address_map.h"
#include "hbm3_channel.h"
#include "hbm3_config.h"
#include "simfa/clock.h"
#include "simfa/component.h"
#include "simfa/memory.h"
#include "simfa/slot_pool.h"

namespace simfa::memory_models {

class Hbm3Dram final : public DramBackend, private EventTarget, private DramBurstListener {
 public:
  explicit Hbm3Dram(const BuildContext& context);
  static void describe(Schema& schema);

  void send(Cycle now, const MemRequest& request) override;
  void finish(Cycle end) override;
  ByteTotals dram_bytes() const override { return totals_.bytes(); }

  const Hbm3Organization& organization() const { return organization_; }
  const Hbm3Timing& timing() const { return timing_; }
  /// Bytes per second with every pseudo-channel streaming.
  double peak_bandwidth() const { return hbm3_peak_bandwidth(organization_, timing_); }
  /// Reports every command of every channel to `observer` (nullptr: none).
  void set_command_observer(DramCommandObserver* observer);

 private:
  struct Pending {
    MemRequest request;
    Cycle sent = 0;
    MemCycle done = 0;  ///< latest data end of its bursts so far
    std::uint32_t bursts_left = 0;
  };
  struct Wake {
    Cycle at = kNever;             ///< kNever: none scheduled
    std::uint32_t generation = 0;  ///< in the payload: a wake of an older one is a no-op
  };

  /// A response (payload = request slot) or a channel wake (kWakeTag | generation << 32 |
  /// channel).
  void on_event(Cycle now, std::uint64_t payload) override;
  void on_burst_done(std::uint32_t request, MemCycle data_end) override;
  /// The last memory cycle that starts at or before SM cycle `c` starts.
  MemCycle horizon(Cycle c) const;
  /// The first SM cycle that starts at or after memory cycle `m` does.
  Cycle sm_cycle_of(MemCycle m) const;
  /// Issue what `channel` can up to SM cycle `now`, then keep exactly one wake scheduled, at
  /// the SM cycle of its next command, while it has bursts queued.
  void arm(std::uint32_t channel, Cycle now);

  static constexpr std::uint64_t kWakeTag = std::uint64_t{1} << 63;
  static constexpr std::uint32_t kGenerationMask = 0x7fffffff;  ///< payload bits 32..62

  EventQueue& events_;
  Hbm3Organization organization_;
  Hbm3Timing timing_;
  ClockDomain clock_;  ///< the SM clock
  Femtoseconds tck_;
  Femtoseconds controller_latency_;  ///< added to every response after its data end
  std::uint32_t burst_bytes_;
  Hbm3AddressMap map_;
  Cycle now_ = 0;  ///< the SM cycle being processed
  mutable Cycle horizon_cycle_ = kNever;  ///< horizon() remembers its last answer
  mutable MemCycle horizon_ = 0;

  DramTotals totals_;
  std::vector<Hbm3Channel> channels_;
  std::vector<Wake> wakes_;

  SlotPool<Pending> pending_;  ///< requests in flight; the slot is the response's payload
};

}  // namespace simfa::memory_models
