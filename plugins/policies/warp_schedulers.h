// Warp-scheduler policies (DESIGN.md §3, kind "scheduler"): which ready WarpGroup of an SM
// issues next. Each SM owns one instance; `pick` runs once per issued instruction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "simfa/component.h"
#include "simfa/core.h"

namespace simfa::policies {

/// The WarpGroup picked last, and the `switches` statistic every scheduler reports. A WarpGroup
/// is identified by (slot, age): a slot freed by an exiting CTA is reused by a younger one.
class LastPick {
 public:
  explicit LastPick(const StatsScope& stats);
  static void declare_stats(Schema& schema);

  /// Index in `ready` of the WarpGroup picked last, or `ready.size()` when it is not ready.
  std::size_t find(std::span<const IssueCandidate> ready) const;
  /// Remember `chosen` and count a switch when it is another WarpGroup than the last one.
  std::size_t record(std::span<const IssueCandidate> ready, std::size_t chosen);
  bool any() const { return any_; }
  std::uint32_t slot() const { return slot_; }

 private:
  bool any_ = false;
  std::uint32_t slot_ = 0;
  std::uint64_t age_ = 0;
  Counter& switches_;
};

/// Greedy-then-oldest (the paper's section IV-B): keep the WarpGroup that issued last while it
/// is ready, otherwise the oldest ready one.
class GtoScheduler final : public WarpSchedulerPolicy {
 public:
  explicit GtoScheduler(const BuildContext& context);
  static void describe(Schema& schema);
  std::size_t pick(std::span<const IssueCandidate> ready) override;

 private:
  LastPick last_;
};

/// Loose round-robin: the first ready WarpGroup after the last issued one in slot order,
/// wrapping to the lowest ready slot.
class LrrScheduler final : public WarpSchedulerPolicy {
 public:
  explicit LrrScheduler(const BuildContext& context);
  static void describe(Schema& schema);
  std::size_t pick(std::span<const IssueCandidate> ready) override;

 private:
  LastPick last_;
};

/// Oldest-first: always the ready WarpGroup with the smallest age.
class OldestScheduler final : public WarpSchedulerPolicy {
 public:
  explicit OldestScheduler(const BuildContext& context);
  static void describe(Schema& schema);
  std::size_t pick(std::span<const IssueCandidate> ready) override;

 private:
  LastPick last_;
};

}  // namespace simfa::policies
