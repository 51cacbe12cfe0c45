#include "kernel/timeline.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "kernel/counter_tracks.h"
#include "simfa/error.h"

namespace simfa::kernel {

bool is_flight_span(const InstructionSet& instructions, const char* name) {
  for (const InstructionSpec& spec : instructions.specs())
    if (spec.flight.name && std::strcmp(spec.flight.name, name) == 0) return true;
  return false;
}

void Timeline::span(int sm, std::uint64_t cta, int warpgroup, const char* name, Cycle begin,
                    Cycle end) {
  spans_.push_back({sm, warpgroup, cta, name, begin, end});
}

void Timeline::write(const std::string& path, double clock_mhz, const std::vector<int>& sms,
                     const CounterTracks* counters, const InstructionSet& instructions) const {
  std::ofstream out(path);
  if (!out) throw InputError("cannot write timeline file '" + path + "'");
  auto wanted = [&](int sm) { return std::find(sms.begin(), sms.end(), sm) != sms.end(); };
  // Written by hand rather than through a JSON DOM: timelines reach millions of spans.
  out << "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"time_unit\":\"1 us in the viewer = 1 SM "
         "cycle\",\"clock_mhz\":"
      << clock_mhz << "},\"traceEvents\":[\n";
  std::set<std::tuple<int, std::uint64_t, int>> threads;
  std::set<int> processes;
  bool first = true;
  auto next = [&]() -> std::ostream& {
    out << (first ? "" : ",\n");
    first = false;
    return out;
  };
  auto tid = [](std::uint64_t cta, int wg) { return cta * 8 + static_cast<std::uint64_t>(wg); };
  std::uint64_t async_id = 0;
  for (const TimelineSpan& s : spans_) {
    if (!wanted(s.sm)) continue;
    threads.emplace(s.sm, s.cta, s.warpgroup);
    processes.insert(s.sm);
    if (is_flight_span(instructions, s.name)) {
      // Work in flight overlaps the WarpGroup's own spans: async slices, which Perfetto stacks.
      ++async_id;
      for (const auto& [ph, ts] : {std::pair{'b', s.begin}, std::pair{'e', s.end}})
        next() << fmt::format(
            R"({{"name":"{}","cat":"flight","ph":"{}","id":{},"pid":{},"tid":{},"ts":{},"args":{{"cta":{},"warpgroup":{}}}}})",
            s.name, ph, async_id, s.sm, tid(s.cta, s.warpgroup), ts, s.cta, s.warpgroup);
      continue;
    }
    next() << fmt::format(R"({{"name":"{}","ph":"X","pid":{},"tid":{},"ts":{},"dur":{}}})", s.name,
                          s.sm, tid(s.cta, s.warpgroup), s.begin, s.end - s.begin);
  }
  // GPU-wide counter tracks go to a process of their own after the SMs'.
  const int gpu_pid = processes.empty() ? 0 : *processes.rbegin() + 1;
  bool gpu_tracks = false;
  if (counters)
    for (const CounterTracks::Track& t : counters->tracks()) {
      if (t.sm >= 0 && !wanted(t.sm)) continue;
      const int pid = t.sm >= 0 ? t.sm : gpu_pid;
      if (t.sm >= 0) processes.insert(t.sm);
      gpu_tracks |= t.sm < 0;
      // Perfetto names a counter track "<name> <arg>": "L2 bandwidth GB/s".
      for (const CounterTracks::Point& p : counters->series(t))
        next() << fmt::format(R"({{"name":"{}","ph":"C","pid":{},"ts":{},"args":{{"{}":{}}}}})",
                              t.name, pid, p.begin, t.unit, p.value);
    }
  for (int sm : processes)
    next() << fmt::format(
        R"({{"name":"process_name","ph":"M","pid":{},"args":{{"name":"SM {}"}}}})", sm, sm);
  if (gpu_tracks)
    next() << fmt::format(R"({{"name":"process_name","ph":"M","pid":{},"args":{{"name":"GPU"}}}})",
                          gpu_pid);
  for (const auto& [sm, cta, wg] : threads)
    next() << fmt::format(
        R"({{"name":"thread_name","ph":"M","pid":{},"tid":{},"args":{{"name":"CTA {} WG {}"}}}})",
        sm, tid(cta, wg), cta, wg);
  out << "\n]}\n";
  if (!out) throw InputError("cannot write timeline file '" + path + "'");
}

}  // namespace simfa::kernel
