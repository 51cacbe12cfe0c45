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
#include <type_traits>
#include <variant>
#include <vector>

namespace simfa::memory_models {

/// `Extra`: what a user keeps per SM beside the history (the L2 keeps where the predicted line
/// lies, docs/performance.md §17): read at each request with the history, it costs no host line
/// of its own. Records stay small: the SMs' requests come mostly in SM order, so neighbours
/// sharing a host line find it cached (a 64-byte record a SM cost more first-level misses than
/// two arrays of 16 and 24 bytes).
template <typename Extra = std::monostate>
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
    History& h = history(sm);
    const std::uint64_t next = line + (h.last - h.before);
    const std::uint64_t after_next = next + (line - h.last);
    h.before = h.last;
    h.last = line;
    return {next, after_next};
  }
  /// SM `sm`'s Extra.
  Extra& extra(std::uint32_t sm) { return history(sm).extra; }

 private:
  // 32 bytes with a 16-byte Extra: two SMs a host line, none straddling two.
  struct alignas(std::is_empty_v<Extra> ? 16 : 32) History {
    std::uint64_t last = 0, before = 0;
    [[no_unique_address]] Extra extra{};
  };
  History& history(std::uint32_t sm) {
    if (sm >= history_.size()) [[unlikely]]
      history_.resize(sm + 1);
    return history_[sm];
  }
  std::vector<History> history_;
};

}  // namespace simfa::memory_models
