// Warp-scheduler policies: greedy-then-oldest, loose round-robin and oldest-first.
#include "warp_schedulers.h"

namespace simfa::policies {

namespace {
// The oldest candidate; equal ages (WarpGroups of one CTA) go to the lowest slot.
std::size_t oldest(std::span<const IssueCandidate> ready) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < ready.size(); ++i)
    if (ready[i].age < ready[best].age) best = i;
  return best;
}
}  // namespace

LastPick::LastPick(const StatsScope& stats)
    : switches_(stats.counter("switches")) {}

void LastPick::declare_stats(Schema& schema) {
  schema.stat("switches", StatKind::kCounter, "picks",
              "picks of another WarpGroup than the one picked before");
}

std::size_t LastPick::find(std::span<const IssueCandidate> ready) const {
  if (any_)
    for (std::size_t i = 0; i < ready.size(); ++i)
      if (ready[i].slot == slot_ && ready[i].age == age_) return i;
  return ready.size();
}

std::size_t LastPick::record(std::span<const IssueCandidate> ready, std::size_t chosen) {
  const IssueCandidate& c = ready[chosen];
  if (any_ && (c.slot != slot_ || c.age != age_)) switches_.add();
  any_ = true;
  slot_ = c.slot;
  age_ = c.age;
  return chosen;
}

GtoScheduler::GtoScheduler(const BuildContext& context) : last_(context.stats) {}

void GtoScheduler::describe(Schema& schema) { LastPick::declare_stats(schema); }

std::size_t GtoScheduler::pick(std::span<const IssueCandidate> ready) {
  std::size_t greedy = last_.find(ready);
  return last_.record(ready, greedy < ready.size() ? greedy : oldest(ready));
}

LrrScheduler::LrrScheduler(const BuildContext& context) : last_(context.stats) {}

void LrrScheduler::describe(Schema& schema) { LastPick::declare_stats(schema); }

std::size_t LrrScheduler::pick(std::span<const IssueCandidate> ready) {
  if (last_.any())
    for (std::size_t i = 0; i < ready.size(); ++i)
      if (ready[i].slot > last_.slot()) return last_.record(ready, i);
  return last_.record(ready, 0);
}

OldestScheduler::OldestScheduler(const BuildContext& context) : last_(context.stats) {}

void OldestScheduler::describe(Schema& schema) { LastPick::declare_stats(schema); }

std::size_t OldestScheduler::pick(std::span<const IssueCandidate> ready) {
  return last_.record(ready, oldest(ready));
}

}  // namespace simfa::policies
