// A valid test plugin with three components of different kinds, covering every parameter type,
// a slot, every statistic kind, factories that fail in each way the host converts and a memory
// that breaks the stats contract; and an instruction it adds to the instruction table.
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>

#include "simfa/core.h"
#include "simfa/memory.h"
#include "simfa/plugin.h"

namespace {

// Ticks every `period` cycles, `ticks` times, counting the ticks in a statistic.
class TickCounter final : public simfa::Component, public simfa::EventTarget {
 public:
  static void describe(simfa::Schema& s) {
    s.integer("period").unit("cycles").def(10).range(1, 1000).doc("Cycles between two ticks.");
    s.integer("ticks").def(3).min(1).doc("Ticks before it stops.");
    s.string("on_build")
        .choices({"build", "throw_std", "throw_input", "throw_unknown", "bind_undeclared"})
        .def("build")
        .doc("What the factory does: build, or fail in one of four ways.");
    s.stat("fired", simfa::StatKind::kCounter, "events", "Ticks so far.");
    s.stat("last_tick", simfa::StatKind::kCounter, "cycles", "Cycle of the last tick.");
  }

  explicit TickCounter(const simfa::BuildContext& c)
      : events_(c.events),
        period_(static_cast<simfa::Cycle>(c.params.integer("period"))),
        remaining_(c.params.integer("ticks")),
        fired_(c.stats.counter("fired")),
        last_tick_(c.stats.counter("last_tick")) {
    const std::string& on_build = c.params.string("on_build");
    if (on_build == "throw_std") throw std::runtime_error("probe exploded");
    if (on_build == "throw_input") c.params.fail("period", "period must divide 1000");
    if (on_build == "throw_unknown") throw 42;
    if (on_build == "bind_undeclared") c.stats.counter("misfired");
    events_.schedule(period_, *this);
  }

  void on_event(simfa::Cycle now, std::uint64_t) override {
    fired_.add();
    last_tick_.set(now);
    if (--remaining_ > 0) events_.schedule(now + period_, *this);
  }

 private:
  simfa::EventQueue& events_;
  simfa::Cycle period_;
  std::int64_t remaining_;
  simfa::Counter& fired_;
  simfa::Counter& last_tick_;
};

// Picks the oldest ready WarpGroup.
class OldestFirst final : public simfa::WarpSchedulerPolicy {
 public:
  static void describe(simfa::Schema& s) {
    s.real("weight").doc("Required, to show how a missing default reads.");
    s.boolean("verbose").def(false).doc("Unused flag.");
    s.size("buffer").def(4096).doc("Bytes of history.");
    s.frequency("clock").def(1830.0).range(100, 3000).doc("Policy clock.");
    s.bandwidth("drain").def(3.35e12).doc("Drain rate | with a pipe.");
    s.slot("fallback", "scheduler", "Consulted when every candidate is equally old.");
    s.stat("picks", simfa::StatKind::kCounter, "picks", "Decisions made.");
    s.stat("ready", simfa::StatKind::kHistogram, "WarpGroups", "Ready WarpGroups per pick.");
    s.stat("mean_ready", simfa::StatKind::kFormula, "WarpGroups", "Mean ready per pick.");
  }

  explicit OldestFirst(const simfa::BuildContext& c)
      : picks_(c.stats.counter("picks")), ready_(c.stats.histogram("ready", 1, 16)) {
    c.stats.formula("mean_ready", simfa::Formula{{"ready"}, {}, 1.0});
  }

  std::size_t pick(std::span<const simfa::IssueCandidate> ready) override {
    picks_.add();
    ready_.sample(ready.size());
    std::size_t best = 0;
    for (std::size_t i = 1; i < ready.size(); ++i)
      if (ready[i].age < ready[best].age) best = i;
    return best;
  }

 private:
  simfa::Counter& picks_;
  simfa::Histogram& ready_;
};

// A memory that answers nothing and reports no byte totals (MemoryPort::traffic), which every
// memory plugin must: a simulation refuses it.
class UntalliedMemory final : public simfa::MemoryPort {
 public:
  explicit UntalliedMemory(const simfa::BuildContext&) {}
  static void describe(simfa::Schema&) {}
  void send(simfa::Cycle, const simfa::MemRequest&) override {}
};

// An instruction the library adds to the table, for an engine of kind "probe".
constexpr simfa::OperandSpec kProbeOperands[] = {{.name = "cycles", .what = "PROBE cycles"}};
constexpr simfa::InstructionSpec kInstructions[] = {
    {.name = "PROBE", .engine = "probe", .operands = kProbeOperands}};

}  // namespace

SIMFA_PLUGIN_WITH_INSTRUCTIONS(
    "simfa-test-good", kInstructions,
    simfa::component_info<TickCounter>("probe.counter", "1.0.0",
                                       "Counts the ticks of a periodic event."),
    simfa::component_info<OldestFirst>("scheduler.test_oldest", "0.2.1",
                                       "Issues the oldest ready WarpGroup."),
    simfa::component_info<UntalliedMemory>("memory.untallied", "1.0.0", "Reports no byte totals."))
