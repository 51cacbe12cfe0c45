// CTA dispatch policies (DESIGN.md §3, kind "dispatch"): which SM takes the next CTA among those
// with room for it. One GPU-wide instance.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "simfa/component.h"
#include "simfa/core.h"

namespace simfa::policies {

/// The next candidate SM after the one chosen last, in index order, wrapping: spreads CTAs over
/// the SMs before doubling up on any.
class RoundRobinDispatch final : public CtaDispatchPolicy {
 public:
  explicit RoundRobinDispatch(const BuildContext& context);
  static void describe(Schema& schema);
  std::size_t choose(std::span<const int> candidates, std::uint64_t cta_index) override;

 private:
  int last_sm_ = -1;
};

/// The lowest-index candidate: fills one SM before using the next.
class FillDispatch final : public CtaDispatchPolicy {
 public:
  explicit FillDispatch(const BuildContext& context);
  static void describe(Schema& schema);
  std::size_t choose(std::span<const int> candidates, std::uint64_t cta_index) override;
};

}  // namespace simfa::policies
