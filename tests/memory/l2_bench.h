// A MemoryBench for the L2s: their `replacement` sub-slot filled as the kernel fills it, with
// replacement.lru unless the test picks another policy.
#pragma once

#include <memory>

#include "lru_replacement.h"
#include "memory_harness.h"

namespace simfa::test {

template <typename Policy = memory_models::LruReplacement>
class L2Bench : public MemoryBench {
 public:
  explicit L2Bench(int sm_count = 132, const ParamOverrides& policy = {})
      : MemoryBench(sm_count), replacement(make<Policy>(policy, 1, "c.replacement")) {
    slots.add("replacement", *replacement);
  }
  std::unique_ptr<Policy> replacement;
};

}  // namespace simfa::test
