#include "kernel/timeline.h"

#include <fstream>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "simfa/error.h"

namespace simfa::kernel {

void Timeline::span(int sm, std::uint64_t cta, int warpgroup, const char* name, Cycle begin,
                    Cycle end) {
  spans_.push_back({sm, warpgroup, cta, name, begin, end});
}

void Timeline::write(const std::string& path, double clock_mhz) const {
  std::ofstream out(path);
  if (!out) throw InputError("cannot write timeline file '" + path + "'");
  // Written by hand rather than through a JSON DOM: timelines reach millions of spans.
  out << "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"time_unit\":\"1 us in the viewer = 1 SM "
         "cycle\",\"clock_mhz\":"
      << clock_mhz << "},\"traceEvents\":[\n";
  std::set<std::tuple<int, std::uint64_t, int>> threads;
  std::set<int> sms;
  bool first = true;
  auto tid = [](std::uint64_t cta, int wg) { return cta * 8 + static_cast<std::uint64_t>(wg); };
  for (const Span& s : spans_) {
    threads.emplace(s.sm, s.cta, s.warpgroup);
    sms.insert(s.sm);
    out << (first ? "" : ",\n")
        << fmt::format(R"({{"name":"{}","ph":"X","pid":{},"tid":{},"ts":{},"dur":{}}})", s.name,
                       s.sm, tid(s.cta, s.warpgroup), s.begin, s.end - s.begin);
    first = false;
  }
  for (int sm : sms) {
    out << (first ? "" : ",\n")
        << fmt::format(R"({{"name":"process_name","ph":"M","pid":{},"args":{{"name":"SM {}"}}}})",
                       sm, sm);
    first = false;
  }
  for (const auto& [sm, cta, wg] : threads) {
    out << ",\n"
        << fmt::format(
               R"({{"name":"thread_name","ph":"M","pid":{},"tid":{},"args":{{"name":"CTA {} WG {}"}}}})",
               sm, tid(cta, wg), cta, wg);
  }
  out << "\n]}\n";
  if (!out) throw InputError("cannot write timeline file '" + path + "'");
}

}  // namespace simfa::kernel
