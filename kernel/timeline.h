// Chrome trace events (the JSON that Perfetto and chrome://tracing open) for selected SMs: the
// WarpGroups' spans and, when sampled, counter tracks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "simfa/core.h"
#include "simfa/instruction_set.h"

namespace simfa::kernel {

class CounterTracks;

/// One span an SM reported: a WarpGroup's issue, bubble or wait, or work it has in flight
/// ("tma_flight", "wgmma_flight"). `name` is a string literal.
struct TimelineSpan {
  int sm;
  int warpgroup;
  std::uint64_t cta;
  const char* name;
  Cycle begin, end;
};

/// Whether a span is work in flight on an engine (it overlaps the WarpGroup's own spans): an
/// instruction's flight span in `instructions` (InstructionSpec::flight).
bool is_flight_span(const InstructionSet& instructions, const char* name);

class Timeline final : public TimelineSink {
 public:
  void span(int sm, std::uint64_t cta, int warpgroup, const char* name, Cycle begin,
            Cycle end) override;
  /// Writes {"traceEvents": [...]}: one process per SM of `sms`, one thread per (CTA,
  /// WarpGroup) with its spans, the flight spans as async events, and the counter tracks of
  /// `counters` (may be null). Timestamps are SM cycles (1 us in the viewer = 1 cycle).
  /// `instructions` is the run's table, which says which spans are flights.
  void write(const std::string& path, double clock_mhz, const std::vector<int>& sms,
             const CounterTracks* counters, const InstructionSet& instructions) const;
  const std::vector<TimelineSpan>& spans() const { return spans_; }
  std::size_t size() const { return spans_.size(); }

 private:
  std::vector<TimelineSpan> spans_;
};

}  // namespace simfa::kernel
