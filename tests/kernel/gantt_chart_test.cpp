// The Gantt chart's layout from hand-made spans: lanes per SM, CTA slot and WarpGroup, the
// roles, clipping to the cycle range, and the merging of spans narrower than a pixel (the
// pixel arithmetic is written beside each case; the plot is 1600 pixels wide).
#include "kernel/gantt_chart.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace simfa::kernel {
namespace {

GanttOptions range(Cycle begin, Cycle end, std::vector<int> sms = {0}) {
  GanttOptions o;
  o.sms = std::move(sms);
  o.begin = begin;
  o.end = end;
  o.clock_mhz = 1000;
  o.title = "test <&>";
  return o;
}

std::map<std::string, int> bars_by_kind(const GanttChart& chart) {
  std::map<std::string, int> n;
  for (const GanttChart::Bar& b : chart.bars()) ++n[b.name];
  return n;
}

TEST(GanttChart, LanesPerSlotAndWarpGroupWithRoles) {
  // SM 0: CTA 0 (a producer WG 0 and consumers WG 1, 2) over [0, 100); CTA 1 (WG 0, 1) over
  // [50, 150) overlaps it, so it takes slot 1; CTA 2 over [120, 200) fits slot 0 again (free
  // from 100). SM 1 is not drawn, SM 2 ran nothing.
  const std::vector<TimelineSpan> spans = {
      {0, 0, 0, "tma_issue", 0, 1}, {0, 1, 0, "wgmma", 10, 11},  {0, 2, 0, "wgmma", 20, 21},
      {0, 2, 0, "exit", 99, 100},   {0, 0, 1, "bubble", 50, 80}, {0, 1, 1, "tma_issue", 60, 61},
      {0, 1, 1, "wgmma", 70, 71},   {0, 0, 1, "exit", 149, 150}, {0, 0, 2, "wait:mb", 120, 200},
      {1, 0, 9, "wgmma", 0, 50},
  };
  const GanttChart chart(spans, range(0, 200, {0, 2}));
  ASSERT_EQ(chart.lanes().size(), 5u);
  const std::vector<std::tuple<int, int, std::string>> expected = {
      {0, 0, "producer"}, {0, 1, "consumer"}, {0, 2, "consumer"}, {1, 0, ""}, {1, 1, ""}};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(chart.lanes()[i].sm, 0);
    EXPECT_EQ(chart.lanes()[i].slot, std::get<0>(expected[i])) << i;
    EXPECT_EQ(chart.lanes()[i].warpgroup, std::get<1>(expected[i])) << i;
    EXPECT_EQ(chart.lanes()[i].role, std::get<2>(expected[i])) << i;
  }
  ASSERT_EQ(chart.ctas().size(), 3u);
  EXPECT_EQ(chart.ctas()[2].cta, 2u);
  EXPECT_EQ(chart.ctas()[2].slot, 0);
  EXPECT_EQ(chart.bars().size(), 9u);  // 8 pixels per cycle: nothing merges
  // The title is escaped for XML.
  EXPECT_NE(chart.svg().find("test &lt;&amp;&gt;"), std::string::npos);
}

TEST(GanttChart, ClipsToTheCycleRange) {
  const std::vector<TimelineSpan> spans = {{0, 0, 0, "wait:mb", 0, 100},
                                           {0, 0, 0, "wgmma", 100, 101},
                                           {0, 0, 0, "wgmma_flight", 100, 400},
                                           {0, 0, 0, "exit", 400, 401}};
  const GanttChart chart(spans, range(50, 200));
  ASSERT_EQ(chart.bars().size(), 3u);  // exit lies outside
  EXPECT_EQ(chart.bars()[0].begin, 50u);
  const GanttChart::Bar& flight = chart.bars()[2];
  EXPECT_EQ(flight.row, 2);  // the table's second flight span (TMA_LOAD's is the first)
  EXPECT_EQ(flight.begin, 100u);
  EXPECT_EQ(flight.end, 200u);
  // The CTA runs 0..401: neither its start nor its end is in the range, so no line is drawn.
  ASSERT_EQ(chart.ctas().size(), 1u);
  EXPECT_FALSE(chart.ctas()[0].starts);
  EXPECT_FALSE(chart.ctas()[0].ends);
  EXPECT_EQ(chart.svg().find("stroke-dasharray"), std::string::npos);
  EXPECT_TRUE(GanttChart(spans, range(0, 500)).ctas()[0].ends);
}

TEST(GanttChart, MergesWhatWouldBeSubPixel) {
  // 400 one-cycle WGMMA issues back to back, then a bubble, in cycles [0, 1000).
  std::vector<TimelineSpan> spans;
  for (Cycle c = 0; c < 400; ++c) spans.push_back({0, 0, 0, "wgmma", c, c + 1});
  spans.push_back({0, 0, 0, "bubble", 400, 1000});
  // [0, 400): 4 pixels a cycle, each issue is its own bar.
  EXPECT_EQ(bars_by_kind(GanttChart(spans, range(0, 400)))["wgmma"], 400);
  // [0, 16000): 0.1 pixel a cycle: one bar holds all 400 issues.
  const GanttChart far(spans, range(0, 16000));
  ASSERT_EQ(far.bars().size(), 2u);
  EXPECT_EQ(far.bars()[0].spans + far.bars()[1].spans, 401u);
  for (const GanttChart::Bar& b : far.bars()) {
    if (std::string(b.name) == "wgmma") {
      EXPECT_EQ(b.end, 400u);
    }
  }

  // A wait, a bubble one cycle long, a wait: at 0.1 pixel a cycle the bubble is folded into the
  // first wait's bar (counted in it, not drawn); the second wait starts its own bar.
  const std::vector<TimelineSpan> waits = {{0, 0, 0, "wait:mb", 0, 1000},
                                           {0, 0, 0, "bubble", 1000, 1001},
                                           {0, 0, 0, "wait:mb", 1001, 2000}};
  const GanttChart folded(waits, range(0, 16000));
  ASSERT_EQ(folded.bars().size(), 2u);
  EXPECT_EQ(folded.bars()[0].spans, 1u);
  EXPECT_EQ(folded.bars()[0].folded, 1u);
  EXPECT_EQ(bars_by_kind(folded)["bubble"], 0);
  // Over [990, 1010), 80 pixels a cycle, all three are drawn.
  EXPECT_EQ(GanttChart(waits, range(990, 1010)).bars().size(), 3u);
}

TEST(GanttChart, MergingLosesNoSpan) {
  // Random spans on three WarpGroups: whatever the zoom, the bars hold every span in range, as
  // merged into a bar of its kind or folded into a neighbour.
  std::mt19937_64 rng(7);
  const char* names[] = {"tma_issue",    "wgmma",      "bubble",      "wait:mb",
                         "wait:barrier", "tma_flight", "wgmma_flight"};
  std::vector<TimelineSpan> spans;
  for (int i = 0; i < 5000; ++i) {
    const Cycle begin = rng() % 100000;
    const char* name = names[rng() % 7];
    spans.push_back({0, static_cast<int>(rng() % 3), 0, name, begin, begin + 1 + rng() % 300});
  }
  for (Cycle end : {1000u, 20000u, 100300u}) {
    std::size_t in_range = 0;
    for (const TimelineSpan& s : spans) in_range += s.begin < end;
    std::size_t drawn = 0;
    const GanttChart chart(spans, range(0, end));
    for (const GanttChart::Bar& b : chart.bars()) drawn += b.spans + b.folded;
    EXPECT_EQ(drawn, in_range) << end;
    // Per lane and row at most a bar per pixel, plus the bars wider than one.
    EXPECT_LT(chart.bars().size(), 3u * 3u * 1700u) << end;
  }
}

TEST(GanttChart, HopperSpanKindsComeFromTheInstructionTable) {
  // The colours docs/gantt-fa3.png shows, as simfa/instruction_set.h declares them, in the
  // table's order (per instruction: span, flight, wait span).
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"tma_issue", "#1f77b4"},        {"tma_flight", "#9ecae1"}, {"wait:stage", "#e7ba52"},
      {"wait:mb", "#bdbdbd"},          {"wgmma", "#d62728"},      {"wgmma_flight", "#fc9272"},
      {"wait:tensor_core", "#c49c94"}, {"wait:wgmma", "#f7b6d2"}, {"wait:barrier", "#9467bd"},
      {"bubble", "#2ca02c"},           {"exit", "#000000"}};
  const auto kinds = GanttChart::span_kinds(InstructionSet::hopper());
  ASSERT_EQ(kinds.size(), expected.size());
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    EXPECT_EQ(kinds[i].name, expected[i].first) << i;
    EXPECT_EQ(kinds[i].color, expected[i].second) << kinds[i].name;
  }
  auto kind = [&](const std::string& name) {
    return *std::find_if(kinds.begin(), kinds.end(),
                         [&](const GanttChart::SpanKind& k) { return k.name == name; });
  };
  EXPECT_TRUE(kind("tma_issue").instant && kind("tma_issue").copy);
  EXPECT_FALSE(kind("wgmma").copy);
  EXPECT_TRUE(kind("wgmma").instant && kind("wgmma").compute);
  EXPECT_TRUE(kind("exit").instant && !kind("exit").compute);
  EXPECT_FALSE(kind("bubble").instant);  // it lasts the BUBBLE's cycles
  EXPECT_EQ(kind("tma_flight").row, 1);
  EXPECT_EQ(kind("wgmma_flight").row, 2);
  EXPECT_EQ(kind("wait:mb").row, GanttChart::kThread);
  EXPECT_EQ(kind("wait:mb").label, "wait: stage data (MB_WAIT)");
}

TEST(GanttChart, APluginsInstructionGetsItsOwnLegendEntryAndColour) {
  // An instruction a plugin adds (as examples/external_engine does) names its spans and nothing
  // more: the chart draws them in colours of their own, labelled from the instruction.
  static constexpr InstructionSpec kUmma{
      .name = "UMMA", .engine = "umma", .span = "umma", .wait_span = "wait:umma_full"};
  static constexpr InstructionSpec kUmmaWait{
      .name = "UMMA_WAIT", .engine = "umma", .wait_span = {"wait:umma", "#123456"}};
  InstructionSet set;
  set.add(kUmma);
  set.add(kUmmaWait);
  const auto kinds = GanttChart::span_kinds(set);
  ASSERT_EQ(kinds.size(), 14u);  // Hopper's 11, then the plugin's
  std::set<std::string> colors;
  for (const auto& k : kinds) colors.insert(k.color);
  EXPECT_EQ(colors.size(), kinds.size()) << "every kind has a colour of its own";
  EXPECT_EQ(colors.count("#7f7f7f"), 0u) << "gray is for spans the table does not declare";
  EXPECT_EQ(kinds[11].name, "umma");
  EXPECT_EQ(kinds[11].label, "UMMA issue");
  EXPECT_TRUE(kinds[11].instant && kinds[11].compute);
  EXPECT_EQ(kinds[12].label, "wait: UMMA");
  EXPECT_EQ(kinds[13].color, "#123456");  // declared
  EXPECT_EQ(kinds[13].label, "wait: UMMA_WAIT");
  // Derived colours depend on the names alone: the same table gives the same colours.
  EXPECT_EQ(GanttChart::span_kinds(set)[11].color, kinds[11].color);

  // A WarpGroup issuing UMMAs and waiting on them: its own legend entries, no gray "other".
  const std::vector<TimelineSpan> spans = {{0, 0, 0, "umma", 0, 1},
                                           {0, 0, 0, "wait:umma_full", 1, 40},
                                           {0, 0, 0, "umma", 40, 41},
                                           {0, 0, 0, "exit", 99, 100}};
  GanttOptions o = range(0, 100);
  o.instructions = &set;
  const GanttChart chart(spans, o);
  const std::string svg = chart.svg();
  EXPECT_NE(svg.find(">UMMA issue</text>"), std::string::npos);
  EXPECT_NE(svg.find(">wait: UMMA</text>"), std::string::npos);
  EXPECT_NE(svg.find("data-kind=\"umma\""), std::string::npos);
  EXPECT_NE(svg.find("fill=\"" + kinds[11].color + "\"><title>umma"), std::string::npos);
  EXPECT_EQ(svg.find("other spans"), std::string::npos);
  EXPECT_EQ(chart.lanes()[0].role, "consumer");  // it issues another engine's instruction
  // Without the plugin's table the same spans are "other", drawn gray.
  EXPECT_NE(GanttChart(spans, range(0, 100)).svg().find("gray: other spans"), std::string::npos);
}

TEST(GanttChart, APluginsCopyEngineMakesItsLaneAProducer) {
  // A plugin's copy into tensor memory on an engine of its own kind ("tmem"), which declares
  // itself a copy, and its MMA: the copying WarpGroup produces, the computing one consumes, as
  // TMA and WGMMA lanes do. Without `copy` the copy engine's lane would consume.
  static constexpr InstructionSpec kCopy{
      .name = "TM_COPY", .engine = "tmem", .copy = true, .span = "tm_copy"};
  static constexpr InstructionSpec kNotCopy{.name = "TM_COPY", .engine = "tmem", .span = "tm_copy"};
  static constexpr InstructionSpec kUmma{.name = "UMMA", .engine = "umma", .span = "umma"};
  const std::vector<TimelineSpan> spans = {{0, 0, 0, "tm_copy", 0, 1},
                                           {0, 1, 0, "umma", 10, 11},
                                           {0, 0, 0, "exit", 98, 99},
                                           {0, 1, 0, "exit", 99, 100}};
  for (const bool copy : {true, false}) {
    InstructionSet set;
    set.add(copy ? kCopy : kNotCopy);
    set.add(kUmma);
    GanttOptions o = range(0, 100);
    o.instructions = &set;
    const GanttChart chart(spans, o);
    ASSERT_EQ(chart.lanes().size(), 2u);
    EXPECT_EQ(chart.lanes()[0].role, copy ? "producer" : "consumer");
    EXPECT_EQ(chart.lanes()[1].role, "consumer");
  }
}

TEST(GanttChart, TheNoteUnderTheLegendNamesTheLanesRowsFromTheTable) {
  const std::vector<TimelineSpan> spans = {{0, 0, 0, "exit", 99, 100}};
  // Hopper's: the thread row, then TMA's flight row (declared "TMA loads") and WGMMA's (derived).
  EXPECT_NE(GanttChart(spans, range(0, 100))
                .svg()
                .find(">Each lane: the WarpGroup's instructions and waits (top), its TMA loads in "
                      "flight, its WGMMAs in flight. Dashed lines"),
            std::string::npos);
  // A plugin's flight rows follow, named as declared or after the instruction.
  static constexpr InstructionSpec kUmma{
      .name = "UMMA", .engine = "umma", .span = "umma", .flight = "umma_flight"};
  static constexpr InstructionSpec kCopy{
      .name = "TM_COPY",
      .engine = "umma",
      .flight = {"tm_copy_flight", nullptr, nullptr, false, "copies to tensor memory"}};
  InstructionSet set;
  set.add(kUmma);
  set.add(kCopy);
  GanttOptions o = range(0, 100);
  o.instructions = &set;
  const GanttChart chart(spans, o);
  EXPECT_EQ(chart.kinds()[12].row, 3);  // umma_flight, after Hopper's two
  EXPECT_NE(chart.svg().find(", its WGMMAs in flight, its UMMAs in flight, its copies to tensor "
                             "memory in flight. Dashed lines"),
            std::string::npos);
}

}  // namespace
}  // namespace simfa::kernel
