// scheduler.random_tiebreak: a warp-scheduler policy that issues one of the `window` oldest
// ready WarpGroups, chosen at random. window = 1 is oldest-first; larger windows soften its
// starvation of young WarpGroups.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include <simfa/core.h>
#include <simfa/plugin.h>

namespace {

class RandomTiebreak final : public simfa::WarpSchedulerPolicy {
 public:
  static void describe(simfa::Schema& s) {
    s.integer("window")
        .unit("WarpGroups")
        .def(2)
        .range(1, 64)
        .doc("How many of the oldest ready WarpGroups the pick is drawn from.");
    s.stat("picks", simfa::StatKind::kCounter, "picks", "Scheduling decisions.");
    s.stat("younger_picks", simfa::StatKind::kCounter, "picks",
           "Decisions that passed over the oldest ready WarpGroup.");
  }

  explicit RandomTiebreak(const simfa::BuildContext& c)
      : window_(static_cast<std::size_t>(c.params.integer("window"))),
        rng_(c.seed),  // seeded per component by simfa: runs are reproducible
        picks_(c.stats.counter("picks")),  // unit and doc: as describe() declares them
        younger_picks_(c.stats.counter("younger_picks")) {}

  std::size_t pick(std::span<const simfa::IssueCandidate> ready) override {
    order_.resize(ready.size());
    for (std::size_t i = 0; i < ready.size(); ++i) order_[i] = i;
    const std::size_t window = std::min(window_, ready.size());
    // Only the `window` oldest need to be in order.
    std::partial_sort(order_.begin(), order_.begin() + static_cast<std::ptrdiff_t>(window),
                      order_.end(),
                      [&](std::size_t a, std::size_t b) { return ready[a].age < ready[b].age; });
    // Modulo rather than a std:: distribution: its output is the same on every standard library.
    const std::size_t chosen = static_cast<std::size_t>(rng_() % window);
    picks_.add();
    if (chosen != 0) younger_picks_.add();
    return order_[chosen];
  }

 private:
  std::size_t window_;
  std::mt19937_64 rng_;
  std::vector<std::size_t> order_;  // reused across picks: no allocation per decision
  simfa::Counter& picks_;
  simfa::Counter& younger_picks_;
};

}  // namespace

SIMFA_PLUGIN("simfa-random-tiebreak",
             simfa::component_info<RandomTiebreak>(
                 "scheduler.random_tiebreak", "1.0.0",
                 "Issues one of the `window` oldest ready WarpGroups, chosen at random."))
