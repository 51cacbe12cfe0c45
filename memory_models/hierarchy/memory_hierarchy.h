// `memory.hierarchy`: the memory system of DESIGN.md §5 assembled from its sub-slots:
// SM -> coalescer -> L2 (with its slice map) -> DRAM, and back.
#pragma once

#include "simfa/component.h"
#include "simfa/memory.h"

namespace simfa::memory_models {

class MemoryHierarchy final : public MemoryPort {
 public:
  explicit MemoryHierarchy(const BuildContext& context);
  static void describe(Schema& schema);

  void send(Cycle now, const MemRequest& request) override { coalescer_.send(now, request); }

 private:
  Coalescer& coalescer_;
};

}  // namespace simfa::memory_models
