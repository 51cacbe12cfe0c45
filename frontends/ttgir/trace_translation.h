// The paper's Stage 4: a Proton trace of the instrumented kernel -> per-CTA programs. Warps are
// grouped into WarpGroups (warp_id / 4 within their warp-specialize partition), the identical
// scope sequences of a WarpGroup's warps are deduplicated (a warp that differs is an error),
// and each recorded scope becomes the instructions its site's execution lowers to, in the
// recorded order. Proton records no operand values, so the operands (coordinates, stage, phase,
// predicate) come from CtaLowering's evaluation of the same execution of that site; a trace
// that records more or fewer executions than the TTGIR performs with the launch arguments
// (Proton's 256-record buffer dropping a long loop's first events, a lost warp, other
// arguments) is reported, never papered over.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cta_lowering.h"
#include "proton_trace.h"
#include "ttgir_kernel.h"

namespace simfa::ttgir {

/// Proton's per-warp buffer: 256 records, a scope taking two (start and end).
inline constexpr std::uint32_t kProtonScopesPerWarp = 128;

class TraceTranslation {
 public:
  /// Groups and checks the trace's events against `kernel` for a grid of `cta_count` CTAs.
  /// `fill_lost`: a warp whose buffer filled (kProtonScopesPerWarp scopes) and whose scopes are
  /// the last ones the TTGIR executes takes the lost beginning from the static lowering.
  TraceTranslation(const KernelProgram& kernel, const ProtonTrace& trace, std::uint64_t cta_count,
                   bool fill_lost);

  /// Rewrites `program` (CtaLowering's output with `records`) into the recorded order.
  void apply(std::uint64_t cta, CtaProgram& program,
             const std::vector<std::vector<SiteRecord>>& records) const;

  /// WarpGroups with no recorded warp (e.g. warp-0 sampling): they keep the static order.
  std::uint64_t unrecorded_warpgroups() const { return unrecorded_; }
  /// Scopes taken from the static lowering for warps whose first events Proton dropped, summed
  /// over apply() calls.
  std::uint64_t filled_scopes() const { return filled_; }

 private:
  /// One recorded scope: the site it records, where the reference warp's event is.
  struct Scope {
    std::uint32_t site = kNone;
    Pos where;
  };
  /// A WarpGroup's scopes, deduplicated over its warps.
  struct Sequence {
    std::vector<Scope> scopes;
    std::uint32_t warp = 0;   ///< the reference warp
    std::uint32_t warps = 0;  ///< warps recorded
  };

  const KernelProgram& kernel_;
  const ProtonTrace& trace_;
  std::vector<std::vector<Sequence>> sequences_;  ///< [cta][warpgroup]
  bool fill_lost_ = false;
  std::uint64_t unrecorded_ = 0;
  mutable std::uint64_t filled_ = 0;
};

}  // namespace simfa::ttgir
