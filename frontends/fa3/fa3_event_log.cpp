#include "fa3_event_log.h"

#include <algorithm>
#include <array>
#include <charconv>

#include "simfa/error.h"
#include "simfa/warpgroup_streams.h"

namespace simfa::fa3 {

namespace {

constexpr int kFields = 5;
/// Grids an event log describes: a 128K-token FA3 run of Llama 3 70B has 2^16 CTAs (1024 Q tiles
/// x 64 heads). The tables and the check of every CTA grow with the grid: a log for 2^20 CTAs took
/// 10 s and 590 MB in the fuzz build (docs/reliability.md).
constexpr std::uint64_t kMaxCtas = std::uint64_t{1} << 18;
constexpr const char* kFieldNames[kFields] = {"cta", "warp", "timestamp", "event", "tile"};

struct Field {
  std::string_view text;
  std::uint32_t column = 0;  // 1-based
};

bool is_blank(char c) {
  return c == ' ' || c == '\t';
}

/// Splits a line at commas; each field without its surrounding blanks. Returns the field count
/// (at most kFields + 1: more are not told apart).
int split(std::string_view line, std::array<Field, kFields + 1>& fields) {
  int count = 0;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = line.find(',', start);
    const std::size_t end = comma == std::string_view::npos ? line.size() : comma;
    std::size_t b = start, e = end;
    while (b < e && is_blank(line[b])) ++b;
    while (e > b && is_blank(line[e - 1])) --e;
    if (count <= kFields)
      fields[count] = {line.substr(b, e - b), static_cast<std::uint32_t>(b + 1)};
    ++count;
    if (comma == std::string_view::npos) return count;
    start = comma + 1;
  }
}

/// Per warp: its last event's time and line (WarpGroupStreams counts its events).
struct WarpState {
  std::uint64_t timestamp = 0;
  std::uint32_t last_line = 0;
};

bool same_event(const EventRecord& a, const EventRecord& b) {
  return a.event == b.event && a.tile == b.tile;
}

}  // namespace

Fa3EventLog::Fa3EventLog(std::string_view text, const std::string& file, const Fa3Kernel& kernel)
    : file_(file) {
  const std::uint64_t cta_count = kernel.cta_count();
  // Before the per-CTA tables are sized by the grid (mistaken shape keys made a grid of 5 x 10^11
  // CTAs, a 13 TB allocation, docs/reliability.md). A CTA that attends a KV tile records one line
  // at least: a grid beyond the bound is most often a log of other shape keys.
  if (cta_count > kMaxCtas) {
    const auto lines = static_cast<std::uint64_t>(std::count(text.begin(), text.end(), '\n'));
    if (kernel.ctas_attending_kv() > lines)
      throw InputError(SourceLocation{file_},
                       "the shape keys give " + std::to_string(kernel.ctas_attending_kv()) +
                           " CTAs that attend K/V tiles, more than the log's " +
                           std::to_string(lines) +
                           " lines can record: it lacks CTAs or was recorded for other shape keys");
    throw InputError(SourceLocation{file_},
                     "the shape keys give a grid of " + std::to_string(cta_count) +
                         " CTAs; an event log describes at most " + std::to_string(kMaxCtas));
  }
  const std::uint32_t warpgroups = 1 + kernel.consumers();
  const std::uint32_t warps = warpgroups * kWarpsPerWarpGroup;
  std::vector<WarpGroupStreams<EventRecord>> streams(cta_count, {warpgroups, warps});
  std::vector<WarpState> state(cta_count * warps);

  std::uint32_t line_no = 0;
  bool header = false;
  auto fail = [&](std::uint32_t column, const std::string& message) {
    throw InputError(SourceLocation{file_, line_no, column}, message);
  };
  auto number = [&](const Field& f, int index, std::uint64_t max) {
    std::uint64_t v = 0;
    const char* end = f.text.data() + f.text.size();
    const auto [ptr, ec] = std::from_chars(f.text.data(), end, v);
    if (f.text.empty() || ec != std::errc() || ptr != end || v > max)
      fail(f.column, std::string("bad ") + kFieldNames[index] + " '" + std::string(f.text) +
                         "': expected an integer in 0.." + std::to_string(max));
    return v;
  };

  std::size_t pos = 0;
  while (pos < text.size()) {
    ++line_no;
    const std::size_t newline = text.find('\n', pos);
    const bool ended = newline != std::string_view::npos;
    std::string_view line = text.substr(pos, (ended ? newline : text.size()) - pos);
    pos = ended ? newline + 1 : text.size();
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::size_t first = 0;
    while (first < line.size() && is_blank(line[first])) ++first;
    if (first == line.size() || line[first] == '#') continue;

    std::array<Field, kFields + 1> f;
    const int count = split(line, f);
    if (!ended)
      fail(static_cast<std::uint32_t>(line.size() + 1),
           "truncated log: the last line has no line end" +
               std::string(count == kFields ? ""
                                            : " and " + std::to_string(count) + " of the " +
                                                  std::to_string(kFields) + " fields"));
    if (!header) {
      bool matches = count == kFields;
      for (int i = 0; matches && i < kFields; ++i) matches = f[i].text == kFieldNames[i];
      if (!matches) fail(1, "expected the header line '" + std::string(kLogHeader) + "'");
      header = true;
      continue;
    }
    if (count != kFields)
      fail(count > kFields ? f[kFields].column - 1 : static_cast<std::uint32_t>(line.size() + 1),
           "expected " + std::to_string(kFields) + " fields (" + std::string(kLogHeader) +
               "), found " + std::to_string(count));

    const std::uint64_t cta = number(f[0], 0, ~std::uint64_t{0});
    if (cta >= cta_count)
      fail(f[0].column, "CTA " + std::to_string(cta) + " is outside the grid of " +
                            std::to_string(cta_count) + " CTAs that the shape keys give");
    const auto warp = static_cast<std::uint32_t>(number(f[1], 1, ~std::uint32_t{0}));
    if (warp >= warps)
      fail(f[1].column, "warp " + std::to_string(warp) + " is outside the CTA's " +
                            std::to_string(warps) + " warps (a producer and " +
                            std::to_string(kernel.consumers()) + " consumer WarpGroups)");
    const std::uint64_t timestamp = number(f[2], 2, ~std::uint64_t{0});
    Fa3Event event{};
    if (!find_event(f[3].text, event)) {
      std::string names;
      for (int i = 0; i < kEventTypes; ++i)
        names += std::string(i ? ", " : "") + event_name(static_cast<Fa3Event>(i));
      fail(f[3].column, "unknown event '" + std::string(f[3].text) + "' (events: " + names + ")");
    }
    const auto tile = static_cast<std::uint32_t>(number(f[4], 4, ~std::uint32_t{0}));
    ++records_;

    WarpState& ws = state[cta * warps + warp];
    WarpGroupStreams<EventRecord>& merged = streams[cta];
    const std::uint32_t position = merged.recorded(warp);  // of this event in its stream
    if (position > 0 && timestamp < ws.timestamp)
      fail(f[2].column,
           "timestamp " + std::to_string(timestamp) + " of warp " + std::to_string(warp) +
               " of CTA " + std::to_string(cta) + " is earlier than that of its previous event (" +
               std::to_string(ws.timestamp) + ", line " + std::to_string(ws.last_line) +
               "): a warp's events must be in time order");
    // The warps of a WarpGroup must record one stream.
    const std::uint32_t wg = warp / kWarpsPerWarpGroup;
    const EventRecord record{
        event, static_cast<std::uint8_t>(warp),
        static_cast<std::uint16_t>(std::min<std::uint32_t>(f[3].column, 0xffff)), tile, line_no};
    if (merged.add(wg, warp, record, same_event) ==
        WarpGroupStreams<EventRecord>::Merge::kDiffers) {
      const EventRecord& other = merged.stream(wg)[position];
      fail(f[3].column,
           "warp " + std::to_string(warp) + " disagrees with warp " + std::to_string(other.warp) +
               " of its WarpGroup (CTA " + std::to_string(cta) + ", WarpGroup " +
               std::to_string(wg) + "): its event " + std::to_string(position + 1) + " is " +
               event_name(event) + " tile " + std::to_string(tile) + ", warp " +
               std::to_string(other.warp) + "'s (line " + std::to_string(other.line) + ") is " +
               event_name(other.event) + " tile " + std::to_string(other.tile));
    }
    ws.timestamp = timestamp;
    ws.last_line = line_no;
  }
  if (!header) {
    line_no = std::max<std::uint32_t>(line_no, 1);
    fail(1, "the event log is empty: no header line '" + std::string(kLogHeader) + "'");
  }

  ctas_.reserve(cta_count);
  for (std::uint64_t cta = 0; cta < cta_count; ++cta) {
    const WarpGroupStreams<EventRecord>& merged = streams[cta];
    bool any = false;
    for (std::uint32_t wg = 0; wg < warpgroups; ++wg) {
      const std::vector<EventRecord>& stream = merged.stream(wg);
      if (stream.empty()) continue;
      any = true;
      for (std::uint32_t warp = wg * kWarpsPerWarpGroup; warp < (wg + 1) * kWarpsPerWarpGroup;
           ++warp) {
        const std::uint32_t events = merged.recorded(warp);
        // Every consumer warp runs the instrumented code; of the producer's, only the warp that
        // issues the TMA loads records.
        if (events == 0 && wg == 0) continue;
        if (events == stream.size()) continue;
        const EventRecord& missing = stream[events];
        line_no = events == 0 ? stream.back().line : state[cta * warps + warp].last_line;
        fail(1, "warp " + std::to_string(warp) + " of CTA " + std::to_string(cta) +
                    " is missing events: it stops after " + std::to_string(events) +
                    " events, while warp " + std::to_string(missing.warp) +
                    " of its WarpGroup goes on with " + event_name(missing.event) + " tile " +
                    std::to_string(missing.tile) + " (line " + std::to_string(missing.line) +
                    "); the warps of a WarpGroup record the same events");
      }
    }
    const Fa3Kernel::Tile t = kernel.tile_of(cta);
    if (!any && kernel.n_block_max(t.m_block) > 0)
      fail(
          1,
          "CTA " + std::to_string(cta) + " (Q tile " + std::to_string(t.m_block) + ", head " +
              std::to_string(t.head) + ", batch " + std::to_string(t.batch) +
              ") has no events, but attends " + std::to_string(kernel.n_block_max(t.m_block)) +
              " K/V tiles: the log is truncated, lacks CTAs, or was recorded for other shape keys");
    ctas_.push_back(streams[cta].take());
  }
}

}  // namespace simfa::fa3
