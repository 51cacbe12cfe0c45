// The deduplication of per-warp event records (the paper's sections V and VI-B), for the frontends
// that read what an instrumented kernel recorded (FA3 event logs, Proton traces): the four warps
// of a WarpGroup run one instruction stream, so they record the same events, which become one
// stream. The first warp to reach a position of its WarpGroup's stream writes the event there;
// every other warp must record the same event at that position. Header-only.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace simfa {

/// One CTA's WarpGroup streams, merged from its warps' records. `Event` is the frontend's record;
/// which of its fields must agree is the `same` predicate's to say.
template <typename Event>
class WarpGroupStreams {
 public:
  enum class Merge : std::uint8_t {
    kAppended,  ///< the warp is the first at this position: the event extends the stream
    kMatched,   ///< another warp wrote the same event here
    kDiffers,   ///< another warp wrote a different event here (not merged)
  };

  /// `warpgroups` empty streams; `warps` warps (indexed as the caller numbers them) that have
  /// recorded nothing.
  WarpGroupStreams(std::uint32_t warpgroups, std::uint32_t warps)
      : streams_(warpgroups), recorded_(warps, 0) {}

  /// Merges `warp`'s next event into WarpGroup `warpgroup`'s stream; `same(a, b)` says whether
  /// two records are the same event. A differing event leaves the warp where it was.
  template <typename Same>
  Merge add(std::uint32_t warpgroup, std::uint32_t warp, const Event& event, Same&& same) {
    std::vector<Event>& stream = streams_[warpgroup];
    std::uint32_t& position = recorded_[warp];
    if (position < stream.size()) {
      if (!same(stream[position], event)) return Merge::kDiffers;
      ++position;
      return Merge::kMatched;
    }
    stream.push_back(event);
    ++position;
    return Merge::kAppended;
  }

  /// Events `warp` has merged: the position of its next one in its WarpGroup's stream. A warp
  /// that recorded all its WarpGroup's events has merged the stream's size.
  std::uint32_t recorded(std::uint32_t warp) const { return recorded_[warp]; }
  const std::vector<Event>& stream(std::uint32_t warpgroup) const { return streams_[warpgroup]; }
  std::uint32_t warpgroups() const { return static_cast<std::uint32_t>(streams_.size()); }

  /// The streams, moved out, one per WarpGroup.
  std::vector<std::vector<Event>> take() { return std::move(streams_); }

 private:
  std::vector<std::vector<Event>> streams_;
  std::vector<std::uint32_t> recorded_;  ///< per warp
};

}  // namespace simfa
