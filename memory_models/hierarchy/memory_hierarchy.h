// `memory.hierarchy`: the memory system of DESIGN.md §5 assembled from its sub-slots:
// SM -> coalescer -> L2 (with its slice map) -> DRAM, and back.
#pragma once

#include <optional>

#include "simfa/burst_wheel.h"
#include "simfa/component.h"
#include "simfa/memory.h"

namespace simfa::memory_models {

class MemoryHierarchy final : public MemoryPort {
 public:
  explicit MemoryHierarchy(const BuildContext& context);
  static void describe(Schema& schema);

  void send(Cycle now, const MemRequest& request) override { coalescer_.send(now, request); }
  bool accepts_bursts() const override { return bursts_.has_value(); }
  void send_burst(Cycle now, const Burst& burst) override { bursts_->book(now, burst); }
  std::optional<CacheUse> cache_use() const override { return l2_.cache_use(); }
  std::optional<MemoryTraffic> traffic() const override {
    return MemoryTraffic{l2_.llc_bytes(), dram_.dram_bytes()};
  }
  void count_loading_sm(int delta) override { sms_loading_ += delta; }
  std::uint32_t sms_loading() const override { return sms_loading_; }

 private:
  Coalescer& coalescer_;
  L2Cache& l2_;
  DramBackend& dram_;
  std::optional<BurstWheel> bursts_;  ///< bursts = true: the booked lines, sent at their cycles
  std::uint32_t sms_loading_ = 0;     ///< the TMA engines' census (count_loading_sm)
};

}  // namespace simfa::memory_models
