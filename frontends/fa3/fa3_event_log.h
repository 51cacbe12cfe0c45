// Reads a FlashAttention-3 event log (docs/workloads.md), written by the generator or by an
// instrumented kernel, and deduplicates it per WarpGroup (the paper's section VI-B): the four
// warps of a WarpGroup record the same events, which become one stream. Every defect is an
// InputError at file:line:column: a malformed or truncated line, an unknown event, a warp whose
// events disagree with its WarpGroup's or stop early, timestamps that go back, missing CTAs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fa3_events.h"
#include "fa3_kernel.h"

namespace simfa::fa3 {

class Fa3EventLog {
 public:
  /// Parses `text`, the contents of `file`, for `kernel`'s grid and WarpGroups.
  Fa3EventLog(std::string_view text, const std::string& file, const Fa3Kernel& kernel);

  const std::string& file() const { return file_; }
  /// CTA `cta`'s events, one stream per WarpGroup; empty streams for a CTA the log lacks (one
  /// whose Q tile attends no KV tile).
  const CtaEvents& cta(std::uint64_t cta) const { return ctas_[cta]; }
  /// Event lines read.
  std::uint64_t records() const { return records_; }

 private:
  std::string file_;
  std::vector<CtaEvents> ctas_;
  std::uint64_t records_ = 0;
};

}  // namespace simfa::fa3
