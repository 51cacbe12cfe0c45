// Chrome trace events (the JSON that Perfetto and chrome://tracing open) for selected SMs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "simfa/core.h"

namespace simfa::kernel {

class Timeline final : public TimelineSink {
 public:
  void span(int sm, std::uint64_t cta, int warpgroup, const char* name, Cycle begin,
            Cycle end) override;
  /// Writes {"traceEvents": [...]}: one process per SM, one thread per (CTA, WarpGroup);
  /// timestamps are SM cycles (1 us in the viewer = 1 cycle).
  void write(const std::string& path, double clock_mhz) const;
  std::size_t size() const { return spans_.size(); }

 private:
  struct Span {
    int sm;
    int warpgroup;
    std::uint64_t cta;
    const char* name;
    Cycle begin, end;
  };
  std::vector<Span> spans_;
};

}  // namespace simfa::kernel
