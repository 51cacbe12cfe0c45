// `l2.unified`: one sliced L2 shared by every SM, each line in the slice its slice map picks.
// Every request sees the same hit latency wherever it comes from (SlicedCache has the timing).
#pragma once

#include "simfa/component.h"
#include "simfa/memory.h"
#include "sliced_cache.h"

namespace simfa::memory_models {

class UnifiedL2 final : public SlicedCache {
 public:
  explicit UnifiedL2(const BuildContext& context) : SlicedCache(context) {}
  static void describe(Schema& schema) { SlicedCache::describe(schema); }

  void send(Cycle now, const MemRequest& request) override {
    const std::uint64_t line = line_of(request.addr);
    const Placement& predicted = predicted_placement(request.sm);
    const Placement here = predicted.line == line ? predicted : place(line);
    const std::uint64_t next = count_arrival(request);
    Placement& ahead = predicted_placement(request.sm);
    ahead = place(next);
    prefetch_block(ahead.base + ahead.home);
    enqueue(now, here.home, here.base + here.home, request, Route{});
  }
};

}  // namespace simfa::memory_models
