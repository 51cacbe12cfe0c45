#include "kernel/gantt_chart.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string_view>
#include <tuple>

#include <fmt/format.h>

#include "simfa/error.h"
#include "simfa/int_math.h"

namespace simfa::kernel {

namespace {

// Colours for span kinds the table declares without one: apart from Hopper's and from the
// gray of undeclared spans (matplotlib's tab20 and tab20b, less those).
constexpr const char* kPalette[] = {
    "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#bcbd22", "#aec7e8", "#ffbb78", "#98df8a",
    "#ff9896", "#c5b0d5", "#dbdb8d", "#9edae5", "#393b79", "#637939", "#843c39", "#7b4173"};

// Layout, in pixels.
constexpr double kLeft = 200;  // lane labels
constexpr double kRight = 30;
constexpr double kTop = 64;  // title and axis labels
constexpr double kLaneHeight = 26;
constexpr double kSmGap = 12;
// Rows inside a lane: the thread row, then the flight rows share a band below it, half a pixel
// apart (two rows: 4.5 pixels each, at 15 and 20).
constexpr double kThreadY = 2, kThreadH = 12;
constexpr double kFlightTop = 15, kFlightBand = 9.5, kFlightGap = 0.5;
constexpr double kMinBarWidth = 0.6;  // a bar stays visible however short

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// A round step (1, 2 or 5 times a power of ten) that gives about `ticks` ticks over `range`.
Cycle tick_step(Cycle range, int ticks) {
  const double raw = static_cast<double>(range) / ticks;
  double p = std::pow(10.0, std::floor(std::log10(std::max(raw, 1.0))));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= raw) return static_cast<Cycle>(std::max(1.0, m * p));
  return static_cast<Cycle>(10 * p);
}

std::string us_label(double us, double step_us) {
  const int decimals = std::clamp(static_cast<int>(std::ceil(-std::log10(step_us))) + 1, 0, 6);
  return fmt::format("{:.{}f} µs", us, decimals);
}

}  // namespace

std::vector<GanttChart::SpanKind> GanttChart::span_kinds(const InstructionSet& instructions) {
  std::vector<SpanKind> kinds;
  std::vector<bool> derived;  // kinds[i] declares no colour
  Row flights = 0;
  // `issue`: the instruction's span; `flight`: its flight span; neither: its wait span.
  auto add = [&](const InstructionSpec& in, const SpanSpec& span, bool issue, bool flight) {
    if (!span.name) return;
    const bool copy = issue && in.copy;
    const bool compute = issue && !copy && std::string_view(in.engine) != "sm";
    for (SpanKind& k : kinds)
      if (k.name == span.name) {  // declared again: one legend entry, the first declaration's
        k.copy |= copy;
        k.compute |= compute;
        return;
      }
    const std::string name = in.name;
    std::string label = span.label   ? span.label
                        : flight     ? name + " in flight"
                        : !issue     ? "wait: " + name
                        : span.lasts ? name
                                     : name + " issue";
    std::string what = !flight ? "" : span.what ? span.what : name + "s";
    kinds.push_back({span.name, span.color ? span.color : "", std::move(label),
                     flight ? ++flights : kThread, issue && !span.lasts, copy, compute,
                     std::move(what)});
    derived.push_back(!span.color);
  };
  for (const InstructionSpec& in : instructions.specs()) {
    add(in, in.span, true, false);
    add(in, in.flight, false, true);
    add(in, in.wait_span, false, false);
  }
  // Derived colours, in legend order: the palette entry the name hashes to, or the next one no
  // kind has yet, so that a plugin's spans differ from Hopper's and from each other.
  std::set<std::string> used;
  for (const SpanKind& k : kinds)
    if (!k.color.empty()) used.insert(k.color);
  constexpr std::size_t kColors = std::size(kPalette);
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    if (!derived[i]) continue;
    const std::size_t first = fnv1a(kinds[i].name) % kColors;
    std::size_t pick = first;
    for (std::size_t step = 0; step < kColors; ++step)
      if (!used.count(kPalette[(first + step) % kColors])) {
        pick = (first + step) % kColors;
        break;
      }
    kinds[i].color = kPalette[pick];
    used.insert(kinds[i].color);
  }
  return kinds;
}

const GanttChart::SpanKind& GanttChart::kind_of(const char* name) const {
  static const SpanKind other{"other", "#7f7f7f", "other"};
  for (const SpanKind& k : kinds_)
    if (k.name == name) return k;
  return other;
}

GanttChart::GanttChart(const std::vector<TimelineSpan>& spans, GanttOptions options)
    : options_(std::move(options)),
      kinds_(
          span_kinds(options_.instructions ? *options_.instructions : InstructionSet::hopper())) {
  for (const SpanKind& k : kinds_) flight_rows_ = std::max(flight_rows_, k.row);
  if (options_.end <= options_.begin) throw Error("internal: an empty Gantt cycle range");
  const Cycle b = options_.begin, e = options_.end;
  // The spans drawn, clipped to the range, per SM.
  std::map<int, std::vector<TimelineSpan>> per_sm;
  std::map<std::pair<int, std::uint64_t>, std::pair<Cycle, Cycle>> lifetime;  // unclipped
  for (const TimelineSpan& s : spans) {
    if (std::find(options_.sms.begin(), options_.sms.end(), s.sm) == options_.sms.end()) continue;
    auto [it, fresh] = lifetime.try_emplace({s.sm, s.cta}, s.begin, s.end);
    it->second.first = std::min(it->second.first, s.begin);
    it->second.second = std::max(it->second.second, s.end);
    if (s.end <= b || s.begin >= e) continue;
    TimelineSpan c = s;
    c.begin = std::max(c.begin, b);
    c.end = std::min(c.end, e);
    per_sm[s.sm].push_back(c);
  }

  const double cycles_per_px = static_cast<double>(e - b) / options_.plot_width;
  for (int sm : options_.sms) {
    auto it = per_sm.find(sm);
    if (it == per_sm.end()) continue;
    std::vector<TimelineSpan>& list = it->second;
    // Each CTA's extent and WarpGroups; CTAs that overlap in time take different slots.
    struct Cta {
      Cycle begin = kNever, end = 0;
      int warpgroups = 0;
      int slot = 0;
    };
    std::map<std::uint64_t, Cta> ctas;
    for (const TimelineSpan& s : list) {
      Cta& c = ctas[s.cta];
      c.begin = std::min(c.begin, s.begin);
      c.end = std::max(c.end, s.end);
      c.warpgroups = std::max(c.warpgroups, s.warpgroup + 1);
    }
    std::vector<std::pair<Cycle, std::uint64_t>> order;
    for (const auto& [id, c] : ctas) order.emplace_back(c.begin, id);
    std::sort(order.begin(), order.end());
    std::vector<Cycle> slot_free;  // per slot: the end of its last CTA
    std::vector<int> slot_warpgroups;
    for (const auto& [start, id] : order) {
      Cta& c = ctas[id];
      std::size_t slot = 0;
      while (slot < slot_free.size() && slot_free[slot] > start) ++slot;
      if (slot == slot_free.size()) {
        slot_free.push_back(0);
        slot_warpgroups.push_back(0);
      }
      slot_free[slot] = c.end;
      slot_warpgroups[slot] = std::max(slot_warpgroups[slot], c.warpgroups);
      c.slot = static_cast<int>(slot);
      const auto& [first, last] = lifetime.at({sm, id});
      ctas_.push_back({sm, c.slot, id, c.begin, c.end, first >= b, last <= e});
    }
    // Lanes: per slot, per WarpGroup index; the role from what the lane's spans issue.
    std::map<std::pair<int, int>, std::size_t> lane_of;
    for (std::size_t slot = 0; slot < slot_warpgroups.size(); ++slot)
      for (int wg = 0; wg < slot_warpgroups[slot]; ++wg) {
        lane_of[{static_cast<int>(slot), wg}] = lanes_.size();
        lanes_.push_back({sm, static_cast<int>(slot), wg, ""});
      }
    std::map<std::size_t, std::pair<bool, bool>> issues;  // lane: a copy, another engine's
    for (const TimelineSpan& s : list) {
      const std::size_t lane = lane_of.at({ctas[s.cta].slot, s.warpgroup});
      const SpanKind& kind = kind_of(s.name);
      issues[lane].first |= kind.instant && kind.copy;
      issues[lane].second |= kind.instant && kind.compute;
    }
    // A WarpGroup that issues copies (TMA) and no other engine's instruction (WGMMA) produces;
    // one that issues another engine's consumes when it issues no copy (an epilogue's TMA_STORE
    // aside: when its slot has a producer).
    std::set<int> has_producer;
    for (const auto& [lane, io] : issues)
      if (io.first && !io.second) {
        lanes_[lane].role = "producer";
        has_producer.insert(lanes_[lane].slot);
      }
    for (const auto& [lane, io] : issues)
      if (io.second && (!io.first || has_producer.count(lanes_[lane].slot)))
        lanes_[lane].role = "consumer";

    // Bars: per lane and row (the instants of the thread row apart), in time order; spans of one
    // kind closer than a pixel merge, and a span under a pixel wide that ends within the pixel
    // after the previous bar is folded into it.
    std::map<std::tuple<std::size_t, Row, bool>, std::vector<const TimelineSpan*>> rows;
    for (const TimelineSpan& s : list) {
      const SpanKind& kind = kind_of(s.name);
      rows[{lane_of.at({ctas[s.cta].slot, s.warpgroup}), kind.row, kind.instant}].push_back(&s);
    }
    for (auto& [key, row] : rows) {
      std::stable_sort(row.begin(), row.end(), [](const TimelineSpan* l, const TimelineSpan* r) {
        return l->begin < r->begin;
      });
      bool open = false;
      Bar bar{};
      for (const TimelineSpan* s : row) {
        const double width = static_cast<double>(s->end - s->begin) / cycles_per_px;
        if (open) {
          const double gap =
              (static_cast<double>(s->begin) - static_cast<double>(bar.end)) / cycles_per_px;
          const bool same = std::strcmp(bar.name, s->name) == 0;
          if (same && gap < 1.0 && width < 2.0) {
            bar.end = std::max(bar.end, s->end);
            ++bar.spans;
            continue;
          }
          if (width < 1.0 &&
              (static_cast<double>(s->end) - static_cast<double>(bar.end)) / cycles_per_px < 1.0) {
            ++bar.folded;  // too small to see beside the bar: counted in it
            continue;
          }
          if (same && gap < 0) {  // overlapping flights of one kind: their union
            bar.end = std::max(bar.end, s->end);
            ++bar.spans;
            continue;
          }
          bars_.push_back(bar);
        }
        bar = Bar{std::get<0>(key), std::get<1>(key), s->name, s->begin, s->end, 1, 0};
        open = true;
      }
      if (open) bars_.push_back(bar);
    }
  }
}

double GanttChart::x(Cycle c) const {
  return kLeft + static_cast<double>(c - options_.begin) * options_.plot_width /
                     static_cast<double>(options_.end - options_.begin);
}

std::string GanttChart::svg() const {
  // Lane y positions: SMs apart by a gap.
  std::vector<double> lane_y(lanes_.size());
  double y = kTop;
  for (std::size_t i = 0; i < lanes_.size(); ++i) {
    if (i > 0 && lanes_[i].sm != lanes_[i - 1].sm) y += kSmGap;
    lane_y[i] = y;
    y += kLaneHeight;
  }
  const double lanes_bottom = y;
  std::set<std::string> present;
  for (const Bar& b : bars_) present.insert(kind_of(b.name).name);
  const double legend_top = lanes_bottom + 34;
  constexpr int kLegendColumns = 3;
  const double legend_rows = std::ceil(static_cast<double>(present.size()) / kLegendColumns);
  const double width = kLeft + options_.plot_width + kRight;
  const double height = legend_top + 18 * legend_rows + 30;
  const double us_per_cycle = 1.0 / options_.clock_mhz;

  std::string s;
  s.reserve(256 * bars_.size() + 8192);
  s += fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" "
      "viewBox=\"0 0 {0:.0f} {1:.0f}\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" "
      "font-size=\"11\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n",
      width, height);
  s += fmt::format("<text x=\"{}\" y=\"18\" font-size=\"14\" font-weight=\"bold\">{}</text>\n",
                   kLeft, escape(options_.title));
  s += fmt::format(
      "<text x=\"{}\" y=\"34\" fill=\"#555555\">cycles {}..{} of the SM clock ({:.3f}..{:.3f} µs "
      "at "
      "{} MHz)</text>\n",
      kLeft, options_.begin, options_.end, static_cast<double>(options_.begin) * us_per_cycle,
      static_cast<double>(options_.end) * us_per_cycle, options_.clock_mhz);

  // Lane backgrounds and labels.
  s += "<g class=\"lanes\">\n";
  for (std::size_t i = 0; i < lanes_.size(); ++i) {
    const Lane& l = lanes_[i];
    s += fmt::format(
        "<rect class=\"lane\" data-sm=\"{}\" data-slot=\"{}\" data-warpgroup=\"{}\" x=\"{}\" "
        "y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>\n",
        l.sm, l.slot, l.warpgroup, kLeft, lane_y[i], options_.plot_width, kLaneHeight - 1,
        i % 2 ? "#f4f4f4" : "#fafafa");
    std::string label = fmt::format("SM {}", l.sm);
    if (l.slot > 0 || (i + 1 < lanes_.size() && lanes_[i + 1].sm == l.sm && lanes_[i + 1].slot > 0))
      label += fmt::format(" slot {}", l.slot);
    label += fmt::format(" WG {}", l.warpgroup);
    if (!l.role.empty()) label += " " + l.role;
    s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", kLeft - 8,
                     lane_y[i] + 15, label);
  }
  s += "</g>\n";

  // The cycle axis (top) with microseconds, and grid lines.
  const Cycle range = options_.end - options_.begin;
  const Cycle step = tick_step(range, 10);
  s += "<g class=\"axis\" fill=\"#333333\">\n";
  for (Cycle c = round_up(options_.begin, step); c <= options_.end; c += step) {
    const double cx = x(c);
    s += fmt::format(
        "<line x1=\"{0:.2f}\" y1=\"{1}\" x2=\"{0:.2f}\" y2=\"{2}\" stroke=\"#dddddd\"/>\n"
        "<text x=\"{0:.2f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n"
        "<text x=\"{0:.2f}\" y=\"{5}\" text-anchor=\"middle\" fill=\"#777777\">{6}</text>\n",
        cx, kTop - 4, lanes_bottom, kTop - 18, c, kTop - 6,
        us_label(static_cast<double>(c) * us_per_cycle, static_cast<double>(step) * us_per_cycle));
  }
  s += fmt::format(
      "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#333333\">cycle</text>\n"
      "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#777777\">time</text>\n",
      kLeft - 28, kTop - 18, kLeft - 28, kTop - 6);
  s += "</g>\n";

  // Bars.
  s += "<g class=\"bars\">\n";
  // Row geometry: the thread row, then the flight rows in the band below it.
  const double flight_h =
      flight_rows_ ? (kFlightBand - kFlightGap * (flight_rows_ - 1)) / flight_rows_ : 0;
  auto row_y = [&](Row r) {
    return r == kThread ? kThreadY : kFlightTop + (r - 1) * (flight_h + kFlightGap);
  };
  for (const Bar& b : bars_) {
    const SpanKind& k = kind_of(b.name);
    const double x0 = x(b.begin);
    const double w = std::max(x(b.end) - x0, kMinBarWidth);
    s += fmt::format(
        "<rect class=\"bar\" data-kind=\"{}\" data-spans=\"{}\" data-folded=\"{}\" "
        "data-lane=\"{}\" "
        "data-begin=\"{}\" data-end=\"{}\" x=\"{:.2f}\" y=\"{}\" "
        "width=\"{:.2f}\" height=\"{}\" fill=\"{}\"><title>{}{}: cycles {}..{} ({:.3f}..{:.3f} "
        "µs)</title></rect>\n",
        b.name, b.spans, b.folded, b.lane, b.begin, b.end, x0, lane_y[b.lane] + row_y(b.row), w,
        b.row == kThread ? kThreadH : flight_h, k.color, b.name,
        b.spans > 1 ? fmt::format(" x{}", b.spans) : std::string(), b.begin, b.end,
        static_cast<double>(b.begin) * us_per_cycle, static_cast<double>(b.end) * us_per_cycle);
  }
  s += "</g>\n";

  // CTA boundaries: a line where each CTA starts and ends across its slot's lanes.
  s += "<g class=\"ctas\">\n";
  for (const CtaExtent& c : ctas_) {
    double top = -1, bottom = 0;
    for (std::size_t i = 0; i < lanes_.size(); ++i)
      if (lanes_[i].sm == c.sm && lanes_[i].slot == c.slot) {
        if (top < 0) top = lane_y[i];
        bottom = lane_y[i] + kLaneHeight - 1;
      }
    s += fmt::format("<g class=\"cta\" data-cta=\"{}\" data-sm=\"{}\">", c.cta, c.sm);
    for (const auto& [at, real] : {std::pair{c.begin, c.starts}, std::pair{c.end, c.ends}})
      if (real)
        s += fmt::format(
            "<line x1=\"{0:.2f}\" y1=\"{1}\" x2=\"{0:.2f}\" y2=\"{2}\" stroke=\"#333333\" "
            "stroke-width=\"1\" stroke-dasharray=\"3,2\"/>",
            x(at), top, bottom);
    if (x(c.end) - x(c.begin) > 48)
      s += fmt::format("<text x=\"{:.2f}\" y=\"{}\" font-size=\"9\" fill=\"#333333\">CTA {}</text>",
                       x(c.begin) + 3, top + 10, c.cta);
    s += "</g>\n";
  }
  s += "</g>\n";

  // Legend.
  s += "<g class=\"legend\">\n";
  int n = 0;
  for (const SpanKind& k : kinds_) {
    if (!present.count(k.name)) continue;
    const double lx = kLeft + (n % kLegendColumns) * (options_.plot_width / kLegendColumns);
    const double ly = legend_top + 18 * (n / kLegendColumns);
    s += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"10\" fill=\"{}\"/><text x=\"{}\" "
        "y=\"{}\">{}</text>\n",
        lx, ly, k.color, lx + 20, ly + 9, escape(k.label));
    ++n;
  }
  if (present.count("other"))
    s += fmt::format("<text x=\"{}\" y=\"{}\">gray: other spans</text>\n", kLeft,
                     legend_top + 18 * legend_rows);
  // The lane's rows: the thread row, then the table's flight rows in their order.
  std::string rows = "the WarpGroup's instructions and waits (top)";
  for (const SpanKind& k : kinds_)
    if (k.row != kThread) rows += ", its " + k.what + " in flight";
  s += fmt::format(
      "<text x=\"{}\" y=\"{}\" fill=\"#777777\">Each lane: {}. Dashed lines: CTA start and end. "
      "Spans under a pixel are merged; hover a bar for its cycles.</text>\n",
      kLeft, legend_top + 18 * legend_rows + 12, escape(rows));
  s += "</g>\n</svg>\n";
  return s;
}

void GanttChart::write(const std::string& path) const {
  std::ofstream out(path);
  if (!out) throw InputError("cannot write Gantt chart '" + path + "'");
  out << svg();
  if (!out) throw InputError("cannot write Gantt chart '" + path + "'");
}

}  // namespace simfa::kernel
