// The Gantt chart of `simfa run --gantt out.svg` (docs/pictures.md): the timeline's spans drawn
// as an SVG, one lane per WarpGroup of the chosen SMs, like the paper's Fig. 9. Each lane has a
// row for what the WarpGroup does (issues, bubbles, waits by kind), then one per flight span of
// the instruction table (Hopper's: its TMA loads in flight, its WGMMAs in flight). Spans narrower
// than a pixel are merged so that a whole FA3 tile loop stays readable and the file stays small.
// The span kinds, their colours and legend come from the run's instruction table
// (simfa/instruction_set.h), a plugin's instructions included.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernel/timeline.h"
#include "simfa/instruction_set.h"

namespace simfa::kernel {

struct GanttOptions {
  std::vector<int> sms{0};   ///< SMs drawn, in this order
  Cycle begin = 0, end = 0;  ///< the cycles drawn: [begin, end); end > begin
  double clock_mhz = 1;      ///< SM clock, for the axis in microseconds
  std::string title;
  double plot_width = 1600;  ///< pixels for the cycle range
  /// The run's instruction table, whose spans the chart draws; null: Hopper's.
  const InstructionSet* instructions = nullptr;
};

class GanttChart {
 public:
  /// The row of a lane a span is drawn in: kThread (what the WarpGroup does), then one row per
  /// flight span of the instruction table, in its order (Hopper's: TMA's, then WGMMA's).
  using Row = std::uint8_t;
  static constexpr Row kThread = 0;
  /// How the chart draws one kind of span, as the instruction table declares it
  /// (InstructionSpec::span, wait_span and flight; SpanSpec).
  struct SpanKind {
    std::string name;   ///< as the timeline names it: "wgmma"
    std::string color;  ///< declared, or derived from the name
    std::string label;  ///< the legend's text, declared or derived from the instruction
    Row row = kThread;
    /// An issue cycle: merged among the instants and drawn over the WarpGroup's waits.
    bool instant = false;
    bool copy = false;     ///< issued by a copy (InstructionSpec::copy): its lane produces
    bool compute = false;  ///< issued by another engine's instruction: its lane consumes
    /// A flight row's contents, in the plural, for the note under the legend: "TMA loads"
    /// (SpanSpec::what, or the instruction's name and an s); empty for the thread row.
    std::string what{};
  };
  /// The span kinds of `instructions`, in legend order: per instruction in opcode order, its
  /// span, flight and wait span; a name declared again is the first declaration's. A colour not
  /// declared is taken from a palette at a place hashed from the name, the next free one when
  /// an earlier kind has it.
  static std::vector<SpanKind> span_kinds(const InstructionSet& instructions);
  struct Lane {
    int sm;
    int slot;  ///< CTAs resident at the same time on one SM take different slots
    int warpgroup;
    std::string role;  ///< "producer" (copies, no WGMMA), "consumer" (WGMMA) or "" (both, alone)
  };
  /// One drawn bar: `spans` spans of kind `name` merged, from `begin` to `end`, and `folded`
  /// spans of other kinds too short to draw beside it.
  struct Bar {
    std::size_t lane;
    Row row;
    const char* name;
    Cycle begin, end;
    std::uint32_t spans;
    std::uint32_t folded = 0;
  };
  /// A CTA's first and last cycle on its SM, within the range; `starts` / `ends`: its real
  /// start / end lies in the range (a dashed line is drawn there).
  struct CtaExtent {
    int sm, slot;
    std::uint64_t cta;
    Cycle begin, end;
    bool starts, ends;
  };

  GanttChart(const std::vector<TimelineSpan>& spans, GanttOptions options);

  const std::vector<Lane>& lanes() const { return lanes_; }
  const std::vector<Bar>& bars() const { return bars_; }
  const std::vector<CtaExtent>& ctas() const { return ctas_; }
  const std::vector<SpanKind>& kinds() const { return kinds_; }
  std::string svg() const;
  void write(const std::string& path) const;

 private:
  double x(Cycle c) const;
  /// The kind named `name`; "other" (gray) for a span the table does not declare.
  const SpanKind& kind_of(const char* name) const;

  GanttOptions options_;
  std::vector<SpanKind> kinds_;
  Row flight_rows_ = 0;
  std::vector<Lane> lanes_;
  std::vector<Bar> bars_;
  std::vector<CtaExtent> ctas_;
};

}  // namespace simfa::kernel
