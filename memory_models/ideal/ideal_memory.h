// `memory.ideal`: a memory port with a fixed latency and unlimited bandwidth. Every request is
// answered exactly `latency` cycles after it was sent; same-cycle responses keep send order.
// For tests, ablations and the level-1 TMA engine without a hierarchy behind it.
#pragma once

#include <cstdint>
#include <vector>

#include "simfa/component.h"
#include "simfa/memory.h"

namespace simfa::memory_models {

class IdealMemory final : public MemoryPort, private EventTarget {
 public:
  explicit IdealMemory(const BuildContext& context);
  static void describe(Schema& schema);

  void send(Cycle now, const MemRequest& request) override;

 private:
  /// The response of the request in slot `payload`.
  void on_event(Cycle now, std::uint64_t payload) override;

  EventQueue& events_;
  Cycle latency_;
  // Requests in flight live in pooled slots (the event payload is the slot index); freed slots
  // are reused, so the steady state allocates nothing.
  std::vector<MemRequest> slots_;
  std::vector<std::uint32_t> free_slots_;

  Counter& reads_;
  Counter& writes_;
  // There is no cache: every byte that arrives (the LLC's position in the stats contract) is
  // served by memory, so the llc and dram pairs are equal.
  Counter& llc_read_bytes_;
  Counter& llc_write_bytes_;
  Counter& dram_read_bytes_;
  Counter& dram_write_bytes_;
};

}  // namespace simfa::memory_models
