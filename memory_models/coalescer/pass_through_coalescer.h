// `coalescer.none`: no coalescing; every request goes to the L2 as it is. Nothing is restored on
// the way back, so the request keeps its own client and the L2 answers the requester directly.
// The ablation of the paper's LRC (section VI-D: without it the FA3 MAPE rises to 16.8%).
#pragma once

#include "simfa/component.h"
#include "simfa/memory.h"

namespace simfa::memory_models {

class PassThroughCoalescer final : public Coalescer {
 public:
  explicit PassThroughCoalescer(const BuildContext& context);
  static void describe(Schema& schema);

  void connect(MemoryPort& l2) override { l2_ = &l2; }
  void send(Cycle now, const MemRequest& request) override {
    requests_.add();
    l2_->send(now, request);
  }

 private:
  MemoryPort* l2_ = nullptr;
  Counter& requests_;
};

}  // namespace simfa::memory_models
