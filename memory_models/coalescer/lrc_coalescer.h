// `coalescer.lrc`: Hopper's L2 Request Coalescer. The paper models one coalescing unit per SM
// pair (section VI-D: group = sm / group_size); `group_sizes` gives groups of any sizes instead
// (the H200's: one per GPC, docs/memory-hierarchy.md §1). A read arriving while a read of the same
// line from its group is in flight, and within that read's bytes, merges into it instead of going
// to the L2, up to `max_merged` reads a forwarded one; the next is forwarded and opens the line's
// next window. The merge window of a line opens when its read is forwarded and closes when the
// L2's response returns; that one response answers every merged requester, each with its own
// request (token, client) back, first the forwarded one, then the merged ones in arrival order.
// Writes, and reads the in-flight read does not cover, pass through unmerged.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <vector>

#include "line_table.h"
#include "next_line.h"
#include "simfa/component.h"
#include "simfa/memory.h"
#include "simfa/slot_pool.h"

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
  // token), or one merged into a forwarded read. Pooled, and packed (40 bytes): one is read back
  // at each response, long after it was written.
  struct Entry {
    Addr addr = 0;
    std::uint64_t token = 0;
    MemClient* client = nullptr;
    std::uint32_t bytes = 0;
    // Forwarded read: the last of its merged requests (kNone: none). Merged request: the one
    // merged before it (kNone: the first). Appending so touches the forwarded read alone, and
    // the response, which reads every merged request anyway, answers them from a copy in
    // arrival order.
    std::uint32_t next = kNone;
    std::uint32_t window_link = kNone;  ///< forwarded read owning a window: its bucket chain
    std::uint16_t sm = 0;
    // Forwarded read: its merged requests while max_merged limits them (<= 1024), else 0.
    std::uint16_t merged : 14 = 0;
    std::uint16_t write : 1 = 0;
    std::uint16_t window : 1 = 0;  ///< forwarded read that owns its line's merge window

    MemRequest request() const {
      return MemRequest{addr, bytes, sm, write != 0, false, token, client};
    }
  };
  static_assert(sizeof(Entry) == 40);

  void on_response(Cycle now, const MemRequest& response) override;
  /// Fetches the entry and the merge window's bucket the response will read.
  void prefetch_response(const MemRequest& response) override;
  // In the header, both: called for every request and every response, and GCC inlined neither
  // out of the .cpp (allocate for the pool's growth path, window_table for its resize), which
  // cost a call and the Entry's copy through the stack each time (docs/performance.md §17).
  std::uint32_t allocate(const MemRequest& request) {
    Entry entry;
    entry.addr = request.addr;
    entry.token = request.token;
    entry.client = request.client;
    entry.bytes = request.bytes;
    entry.sm = request.sm;
    entry.write = request.write ? 1 : 0;
    return entries_.add(entry);
  }
  void release(std::uint32_t e) { entries_.release(e); }
  void forward(Cycle now, const MemRequest& request, std::uint32_t e);
  std::uint32_t group_of(std::uint32_t sm) const;
  LineChains& window_table(std::uint32_t sm) {
    if (sm < sm_group_.size()) [[likely]]
      return windows_[sm_group_[sm]];
    return added_window_table(sm);
  }
  /// The table of an SM beyond gpu.sm_count, its group added if new.
  LineChains& added_window_table(std::uint32_t sm);
  std::uint64_t line_of(Addr addr) const {
    return line_shift_ >= 0 ? addr >> line_shift_ : addr / line_bytes_;
  }
  auto window_line() const {
    return [this](std::uint32_t e) { return line_of(entries_[e].addr); };
  }
  auto window_link() {
    return [this](std::uint32_t e) -> std::uint32_t& { return entries_[e].window_link; };
  }

  MemoryPort* l2_ = nullptr;
  std::vector<std::uint32_t> group_period_;  ///< group of SM s within a period, s < its size
  std::uint32_t groups_per_period_;
  std::uint32_t max_merged_;  ///< 0: no limit
  std::uint32_t line_bytes_;
  int line_shift_ = -1;  ///< log2(line_bytes_) when a power of two
  std::vector<LineChains> windows_;  ///< per group: line -> the forwarded read's entry
  // Per SM: its group, so that a request's table costs a load rather than group_of's divisions.
  std::vector<std::uint32_t> sm_group_;
  // Four buckets per open window: a read finding no window (nearly all) mostly reads no entry.
  static constexpr std::size_t kBucketsPerWindow = 4;
  // Free entries are a stack (the latest freed is taken first): a request mostly takes the entry
  // a response has just read, still in the host's cache, where taking them in a circle wrote a
  // line untouched for a whole round of the pool and searched a bitmap for it (docs/
  // performance.md §9). The stack is the pool's own array, not a list through the entries: taking
  // an entry reads no entry (docs/performance.md §14). Entry numbers are only tokens: which one a
  // request gets changes no result.
  SlotPool<Entry> entries_;
  std::vector<MemRequest> answering_;  ///< on_response's copies of merged requests, reused
  // The entries prefetch_response fetched lately, a ring: a few hints on, an entry is cached and
  // its merged requests (a chain through `next`) can be fetched in turn.
  static constexpr std::uint32_t kHinted = 8;
  std::array<std::uint32_t, kHinted> hinted_{};
  std::uint32_t hints_ = 0;

  Counter& requests_;
  Counter& merged_;
  Counter& forwarded_;
  NextLinePredictor<> predictor_;
};

}  // namespace simfa::memory_models
