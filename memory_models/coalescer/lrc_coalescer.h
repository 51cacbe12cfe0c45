// `coalescer.lrc`: Hopper's L2 Request Coalescer as the paper models it (section VI-D: one
// coalescing unit per SM pair). SMs are grouped (group = sm / group_size); a read arriving while
// a read of the same line from its group is in flight, and within that read's bytes, merges into
// it instead of going to the L2. The merge window of a line opens when its read is forwarded and
// closes when the L2's response returns; that one response answers every merged requester, each
// with its own request (token, client) back, first the forwarded one, then the merged ones in
// arrival order. Writes, and reads the in-flight read does not cover, pass through unmerged.
#pragma once

#include <cstdint>
#include <vector>

#include "line_table.h"
#include "simfa/component.h"
#include "simfa/memory.h"

namespace simfa::memory_models {

class LrcCoalescer final : public Coalescer, private MemClient {
 public:
  explicit LrcCoalescer(const BuildContext& context);
  static void describe(Schema& schema);

  void connect(MemoryPort& l2) override { l2_ = &l2; }
  void send(Cycle now, const MemRequest& request) override;

 private:
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};

  // A request the coalescer answers later: one it forwarded (the L2 returns its index as the
  // token), or one merged into a forwarded read. Pooled; `next` chains a read's merged requests.
  struct Entry {
    MemRequest request;
    std::uint32_t next = kNone;  ///< forwarded read: its first merged request; merged: the next
    std::uint32_t tail = kNone;  ///< forwarded read: its last merged request (itself when none)
    bool window = false;         ///< forwarded read that owns its line's merge window
  };

  void on_response(Cycle now, const MemRequest& response) override;
  std::uint32_t allocate(const MemRequest& request);
  LineTable& window_table(std::uint32_t sm);

  MemoryPort* l2_ = nullptr;
  std::uint32_t group_size_;
  std::uint32_t line_bytes_;
  std::vector<LineTable> windows_;  ///< per group: line -> the forwarded read's entry
  std::vector<Entry> entries_;
  std::vector<std::uint32_t> free_entries_;

  Counter& requests_;
  Counter& merged_;
  Counter& forwarded_;
};

}  // namespace simfa::memory_models
