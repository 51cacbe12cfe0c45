// NextLinePredictor: the line an SM will most likely request next, so that a level of the memory
// hierarchy can start fetching the host memory that request's lookups will read (its L2 set, its
// merge-window bucket) while other SMs' requests are handled. Only the host's caches see it: a
// wrong guess costs one wasted prefetch, never a different result.
//
// A TMA engine sends the lines of a box row by row: runs of consecutive lines separated by the
// tensor's row pitch, so the lines' deltas repeat with period 1 (one line a row) or 2 (two lines a
// row: +1, then the pitch - 1). The prediction repeats the delta of two requests back, which
// follows both.
#pragma once

#include <cstdint>
#include <vector>

namespace simfa::memory_models {

class NextLinePredictor {
 public:
  explicit NextLinePredictor(std::size_t sms = 0) : history_(sms) {}

  /// Records `line` as SM `sm`'s latest request and returns the line predicted to follow it.
  std::uint64_t next(std::uint32_t sm, std::uint64_t line) { return next_two(sm, line).next; }

  struct Lines {
    std::uint64_t next, after_next;
  };
  /// As next(), with the line predicted to follow that one too (the deltas alternating).
  Lines next_two(std::uint32_t sm, std::uint64_t line) {
    if (sm >= history_.size()) history_.resize(sm + 1);
    History& h = history_[sm];
    const std::uint64_t next = line + (h.last - h.before);
    const std::uint64_t after_next = next + (line - h.last);
    h.before = h.last;
    h.last = line;
    return {next, after_next};
  }

 private:
  struct History {
    std::uint64_t last = 0, before = 0;
  };
  std::vector<History> history_;
};

}  // namespace simfa::memory_models
