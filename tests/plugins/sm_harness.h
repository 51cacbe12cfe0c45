// A harness that runs SM core models alone (STYLE.md, Tests): a manual event queue with the
// kernel's total order (cycle, priority, insertion sequence), an IssueClock that implements the
// kernel's issue-phase contract (sdk core.h), an in-order CTA dispatcher, fake engines and
// scheduler policies with exactly known timing, and both run loops of DESIGN.md §2 -- event
// stepping and the per-cycle reference loop -- so a test can check that they agree.
//
// Every component slot takes a factory, so policy and engine tests can put a real plugin
// (plugin_slot<Base, T>()) next to the real sm.warpgroup and fakes everywhere else.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <queue>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "simfa/component.h"
#include "simfa/core.h"
#include "simfa/event_queue.h"
#include "simfa/memory.h"
#include "simfa/params.h"
#include "simfa/program.h"
#include "simfa/stats.h"
#include "sm_warpgroup.h"
#include "support/manual_event_queue.h"
#include "support/test_stats.h"

namespace simfa::sm_test {

using test::ManualEventQueue;

// ---- the issue clock ---------------------------------------------------------------------------

/// The kernel's contract: step() of every requesting SM, in SM-index order, after all other
/// events of the cycle (Priority::kIssue); a request for a cycle whose issue phase has passed
/// that SM moves to the next cycle. In reference stepping no event is scheduled: the run loop
/// calls step_all() every cycle and pending() says whether any SM still expects to issue.
class ContractIssueClock final : public IssueClock, public EventTarget {
 public:
  ContractIssueClock(ManualEventQueue& events, Stepping stepping)
      : events_(events), stepping_(stepping) {}
  void attach(std::vector<SmCore*> sms) { sms_ = std::move(sms); }

  void request_issue(int sm, Cycle at) override {
    if (phase_cycle_ != kNever && at <= phase_cycle_ && (phase_done_ || sm <= phase_sm_))
      at = phase_cycle_ + 1;
    requests_.emplace(at, sm);
    if (stepping_ == Stepping::kEvent && armed_.insert(at).second)
      events_.schedule(at, *this, 0, Priority::kIssue);
  }

  void on_event(Cycle now, std::uint64_t /*payload*/) override {
    armed_.erase(now);
    phase_cycle_ = now;
    phase_done_ = false;
    phase_sm_ = -1;
    while (!requests_.empty() && requests_.begin()->first <= now) {
      const int sm = requests_.begin()->second;
      requests_.erase(requests_.begin());
      if (sm <= phase_sm_) continue;  // a second request of an SM this phase already stepped
      phase_sm_ = sm;
      ++steps_;
      sms_[static_cast<std::size_t>(sm)]->step(now);
    }
    phase_done_ = true;
  }

  void step_all(Cycle now) {
    phase_cycle_ = now;
    phase_done_ = false;
    for (std::size_t i = 0; i < sms_.size(); ++i) {
      phase_sm_ = static_cast<int>(i);
      sms_[i]->step(now);
    }
    phase_done_ = true;
    while (!requests_.empty() && requests_.begin()->first <= now)
      requests_.erase(requests_.begin());
  }

  bool pending() const { return !requests_.empty(); }
  /// SmCore::step calls made in event stepping: what an idle SM must not drive up.
  std::uint64_t steps() const { return steps_; }

 private:
  ManualEventQueue& events_;
  Stepping stepping_;
  std::vector<SmCore*> sms_;
  std::set<std::pair<Cycle, int>> requests_;  // (cycle, sm): served in this order
  std::set<Cycle> armed_;                     // cycles with an issue-phase event
  Cycle phase_cycle_ = kNever;
  int phase_sm_ = -1;
  bool phase_done_ = true;
  std::uint64_t steps_ = 0;
};

// ---- timeline, memory ---------------------------------------------------------------------------

struct Span {
  int sm;
  std::uint64_t cta;
  int warpgroup;
  std::string name;
  Cycle begin, end;
  friend bool operator==(const Span&, const Span&) = default;
};

class RecordingTimeline final : public TimelineSink {
 public:
  void span(int sm, std::uint64_t cta, int warpgroup, const char* name, Cycle begin,
            Cycle end) override {
    spans.push_back({sm, cta, warpgroup, name, begin, end});
  }
  std::vector<Span> spans;
};

/// Answers every request exactly `latency` cycles after it was sent (Priority::kMemory), for
/// real TMA engines; the fake ones send nothing.
class FixedLatencyMemory final : public MemoryPort, private EventTarget {
 public:
  FixedLatencyMemory(EventQueue& events, Cycle latency) : events_(events), latency_(latency) {}
  void send(Cycle now, const MemRequest& request) override {
    sent.push_back(request);
    events_.schedule(now + latency_, *this, sent.size() - 1, Priority::kMemory);
  }
  std::vector<MemRequest> sent;

 private:
  void on_event(Cycle now, std::uint64_t payload) override {
    sent[payload].client->on_response(now, sent[payload]);
  }
  EventQueue& events_;
  Cycle latency_;
};

// ---- fake engines and policies -----------------------------------------------------------------

/// Completes every op exactly `latency` cycles after its issue (Priority::kMemory), returning the
/// op's bytes; records each op.
class FixedLatencyTma final : public TmaEngine, private EventTarget {
 public:
  struct Issued {
    Cycle at;
    TmaOp op;
  };
  FixedLatencyTma(EventQueue& events, Cycle latency) : events_(events), latency_(latency) {}
  void connect(MemoryPort&, TmaClient& client) override { client_ = &client; }
  void issue(Cycle now, const TmaOp& op) override {
    issued.push_back({now, op});
    events_.schedule(now + latency_, *this, issued.size() - 1, Priority::kMemory);
  }
  std::uint64_t busy_cycles() const override { return 0; }  // not a model: counts nothing
  std::uint64_t issued_bytes() const override {
    std::uint64_t bytes = 0;
    for (const Issued& i : issued) bytes += i.op.bytes;
    return bytes;
  }
  std::uint64_t line_requests() const override { return 0; }  // sends nothing to the memory
  std::vector<Issued> issued;

 private:
  void on_event(Cycle now, std::uint64_t payload) override {
    client_->on_tma_complete(now, issued[payload].op.token, issued[payload].op.bytes);
  }
  EventQueue& events_;
  Cycle latency_;
  TmaClient* client_ = nullptr;
};

/// One in-order pipeline: a WGMMA starts when the pipeline frees (or at issue), occupies it
/// max(1, N/2) cycles and completes when that ends (Priority::kMemory). At most `depth` WGMMAs
/// are issued and not complete; a completion that makes room in a full buffer is followed by
/// on_wgmma_slot_free in the same cycle.
class PipelineTensorCore final : public TensorCoreEngine, private EventTarget {
 public:
  struct Issued {
    Cycle at, start, done;
    WgmmaOp op;
  };
  PipelineTensorCore(EventQueue& events, std::uint32_t depth) : events_(events), depth_(depth) {}
  void connect(TensorCoreClient& client) override { client_ = &client; }
  bool can_accept(Cycle) const override { return in_flight_ < depth_; }
  void issue(Cycle now, const WgmmaOp& op) override {
    if (in_flight_ >= depth_) throw std::logic_error("WGMMA issued into a full buffer");
    const Cycle start = std::max(now, free_at_);
    free_at_ = start + std::max<Cycle>(1, op.n / 2);
    ++in_flight_;
    issued.push_back({now, start, free_at_, op});
    events_.schedule(free_at_, *this, issued.size() - 1, Priority::kMemory);
  }
  std::uint64_t busy_cycles() const override {
    std::uint64_t cycles = 0;
    for (const Issued& i : issued) cycles += i.done - i.start;
    return cycles;
  }
  std::vector<Issued> issued;

 private:
  void on_event(Cycle now, std::uint64_t payload) override {
    const bool was_full = in_flight_-- == depth_;
    client_->on_wgmma_complete(now, issued[payload].op.token);
    if (was_full) client_->on_wgmma_slot_free(now);
  }
  EventQueue& events_;
  std::uint32_t depth_;
  std::uint32_t in_flight_ = 0;
  Cycle free_at_ = 0;
  TensorCoreClient* client_ = nullptr;
};

/// Greedy-then-oldest: the WarpGroup picked last while it is ready, else the oldest ready one.
/// Records every pick as (slot, age).
class GtoFake final : public WarpSchedulerPolicy {
 public:
  std::size_t pick(std::span<const IssueCandidate> ready) override {
    std::size_t chosen = 0;
    for (std::size_t i = 0; i < ready.size(); ++i) {
      if (any_ && ready[i].slot == last_.slot && ready[i].age == last_.age) {
        chosen = i;
        break;
      }
      if (ready[i].age < ready[chosen].age) chosen = i;
    }
    any_ = true;
    last_ = ready[chosen];
    picks.push_back(last_);
    return chosen;
  }
  std::vector<IssueCandidate> picks;

 private:
  bool any_ = false;
  IssueCandidate last_{};
};

/// Oldest-first: always the ready WarpGroup with the smallest age.
class OldestFirstFake final : public WarpSchedulerPolicy {
 public:
  std::size_t pick(std::span<const IssueCandidate> ready) override {
    std::size_t chosen = 0;
    for (std::size_t i = 1; i < ready.size(); ++i)
      if (ready[i].age < ready[chosen].age) chosen = i;
    return chosen;
  }
};

// ---- component slots ---------------------------------------------------------------------------

/// How the harness builds one component: a factory and the parameters its BuildContext carries.
template <typename Base>
struct Slot {
  std::function<std::unique_ptr<Base>(const BuildContext&)> make;
  std::vector<Params::Entry> params;
  std::shared_ptr<const Schema> schema;  ///< the component's: its statistics bind by name
};

/// A slot for the real plugin class `T`: its schema's defaults, then `overrides`.
template <typename Base, typename T>
Slot<Base> plugin_slot(const std::vector<std::pair<std::string, ParamValue>>& overrides = {}) {
  auto schema = std::make_shared<Schema>();
  T::describe(*schema);
  std::vector<Params::Entry> params;
  for (const ParamSpec& spec : schema->params())
    if (spec.default_value) params.push_back({spec.name, *spec.default_value, {}});
  for (const auto& [name, value] : overrides) {
    auto it = std::find_if(params.begin(), params.end(), [&](auto& e) { return e.name == name; });
    if (it == params.end()) throw std::logic_error("no parameter " + name);
    it->value = value;
  }
  return {[](const BuildContext& c) -> std::unique_ptr<Base> { return std::make_unique<T>(c); },
          std::move(params), std::move(schema)};
}

struct HarnessConfig {
  HarnessConfig() {
    gpu.name = "harness";
    gpu.sm_count = 1;
    gpu.smem_per_sm_bytes = 228 * 1024;
    gpu.regs_per_sm = 65536;
    gpu.max_ctas_per_sm = 32;
    gpu.max_warpgroups_per_sm = 16;
  }
  GpuConfig gpu;
  Cycle max_cycles = kNever;  ///< watchdog: events after this cycle are not run
  bool timeline = true;
  Cycle memory_latency = 200;           ///< FixedLatencyMemory, when `memory.make` is empty
  Cycle tma_latency = 100;              ///< FixedLatencyTma, when `tma.make` is empty
  std::uint32_t tensor_core_depth = 4;  ///< PipelineTensorCore, when `tensor_core.make` is empty
  Slot<SmCore> sm = plugin_slot<SmCore, sm_warpgroup::WarpGroupSm>();
  Slot<WarpSchedulerPolicy> scheduler;  ///< empty: GtoFake
  Slot<TmaEngine> tma;                  ///< empty: FixedLatencyTma
  Slot<TensorCoreEngine> tensor_core;   ///< empty: PipelineTensorCore
  Slot<MemoryPort> memory;              ///< GPU-wide; empty: FixedLatencyMemory
  /// Engines of plugins' instructions, each in the SM sub-slot named after its kind ([sm.umma]).
  std::vector<std::pair<std::string, Slot<Component>>> engines;
  const InstructionSet* instructions = nullptr;  ///< the run's table; null: Hopper's
};

struct Workload {
  std::vector<TensorMap> maps;
  std::vector<CtaProgram> ctas;  ///< dispatched in this order
};

// ---- the harness -------------------------------------------------------------------------------

enum class Outcome { kCompleted, kDeadlock, kWatchdog };

struct Dispatch {
  std::uint64_t cta_id;
  int sm;
  Cycle at;
  friend bool operator==(const Dispatch&, const Dispatch&) = default;
};

struct RunResult {
  Outcome outcome = Outcome::kCompleted;
  Cycle end = 0;  ///< as the kernel: last model event or CTA retirement + 1 (watchdog: the limit)
  std::vector<Dispatch> dispatches;
  std::vector<std::pair<int, Cycle>> exits;  ///< on_cta_exit calls: (sm, cycle)
  std::map<std::string, std::uint64_t> counters;
  std::vector<Span> spans;
  std::vector<BlockedThread> blocked;

  /// The cycle CTA `cta` retired: its last "exit" span (needs the timeline).
  Cycle cta_exit(std::uint64_t cta) const {
    Cycle at = kNever;
    for (const Span& s : spans)
      if (s.cta == cta && s.name == "exit") at = at == kNever ? s.begin : std::max(at, s.begin);
    return at;
  }
  /// The spans of one WarpGroup named `name`, in emission order.
  std::vector<Span> spans_of(std::uint64_t cta, int warpgroup, const std::string& name) const {
    std::vector<Span> out;
    for (const Span& s : spans)
      if (s.cta == cta && s.warpgroup == warpgroup && s.name == name) out.push_back(s);
    return out;
  }
};

/// Runs one workload on `config.gpu.sm_count` SMs. The dispatcher is in order: the next CTA goes
/// to the lowest-index SM that can take it, at cycle 0 and at every on_cta_exit; when no SM can,
/// it waits for the next exit.
class SmHarness final : private CtaHost {
 public:
  SmHarness(HarnessConfig config, Workload workload, Stepping stepping)
      : config_(std::move(config)),
        workload_(std::move(workload)),
        stepping_(stepping),
        clock_(events_, stepping) {
    memory_ = build(config_.memory, "memory", -1, [&] {
      return std::make_unique<FixedLatencyMemory>(events_, config_.memory_latency);
    });
    std::vector<SmCore*> sms;
    for (int i = 0; i < config_.gpu.sm_count; ++i) {
      const std::string path = "sm[" + std::to_string(i) + "]";
      auto scheduler = build(config_.scheduler, path + ".scheduler", i,
                             [] { return std::make_unique<GtoFake>(); });
      auto tma = build(config_.tma, path + ".tma", i, [&] {
        return std::make_unique<FixedLatencyTma>(events_, config_.tma_latency);
      });
      auto tensor_core = build(config_.tensor_core, path + ".tensor_core", i, [&] {
        return std::make_unique<PipelineTensorCore>(events_, config_.tensor_core_depth);
      });
      // The SM's engines are its sub-slots, as the kernel builds them.
      auto slots = std::make_unique<EngineSlots>();
      slots->entries = {
          {"scheduler", scheduler.get()}, {"tma", tma.get()}, {"tensor_core", tensor_core.get()}};
      std::vector<std::unique_ptr<Component>> engines;
      for (const auto& [kind, engine] : config_.engines) {
        engines.push_back(build(engine, path + "." + kind, i, []() -> std::unique_ptr<Component> {
          throw std::logic_error("HarnessConfig::engines needs a factory");
        }));
        slots->entries.emplace_back(kind, engines.back().get());
      }
      auto sm = build(
          config_.sm, path, i,
          []() -> std::unique_ptr<SmCore> {
            throw std::logic_error("HarnessConfig::sm needs a factory");
          },
          slots.get());
      sm->connect(SmWiring{clock_, *this, workload_.maps, config_.timeline ? &timeline_ : nullptr,
                           *memory_});
      slots_.push_back(std::move(slots));
      sms.push_back(sm.get());
      sms_.push_back({std::move(sm), std::move(scheduler), std::move(tma), std::move(tensor_core),
                      std::move(engines)});
    }
    clock_.attach(std::move(sms));
  }

  RunResult run() {
    dispatch(0);
    if (stepping_ == Stepping::kEvent) {
      while (!events_.empty()) {
        if (events_.next_cycle() > config_.max_cycles) return finish(Outcome::kWatchdog);
        fire_next();
      }
    } else {
      // The paper's Algorithm 1: per cycle, the completions, then every SM's issue phase.
      for (Cycle now = 0;; ++now) {
        if (now > config_.max_cycles) return finish(Outcome::kWatchdog);
        while (!events_.empty() && events_.next_cycle() <= now) fire_next();
        clock_.step_all(now);
        if (events_.empty() && !clock_.pending()) break;
      }
    }
    return finish(retired_ == workload_.ctas.size() ? Outcome::kCompleted : Outcome::kDeadlock);
  }

  SmCore& sm(int i) { return *sms_.at(static_cast<std::size_t>(i)).sm; }
  /// The component in SM `i`'s slot as its concrete type, e.g. tma<FixedLatencyTma>(0).
  template <typename T>
  T& scheduler(int i) {
    return dynamic_cast<T&>(*sms_.at(static_cast<std::size_t>(i)).scheduler);
  }
  template <typename T>
  T& tma(int i) {
    return dynamic_cast<T&>(*sms_.at(static_cast<std::size_t>(i)).tma);
  }
  template <typename T>
  T& tensor_core(int i) {
    return dynamic_cast<T&>(*sms_.at(static_cast<std::size_t>(i)).tensor_core);
  }
  template <typename T>
  T& memory() {
    return dynamic_cast<T&>(*memory_);
  }
  const test::TestStats& stats() const { return stats_; }
  const ContractIssueClock& clock() const { return clock_; }

 private:
  struct SmParts {
    std::unique_ptr<SmCore> sm;
    std::unique_ptr<WarpSchedulerPolicy> scheduler;
    std::unique_ptr<TmaEngine> tma;
    std::unique_ptr<TensorCoreEngine> tensor_core;
    std::vector<std::unique_ptr<Component>> engines;
  };

  /// An SM's engines by sub-slot name, as the kernel hands them over (BuildContext::slots).
  struct EngineSlots final : SlotResolver {
    std::vector<std::pair<std::string, Component*>> entries;
    Component& slot(std::string_view name) const override {
      for (const auto& [n, c] : entries)
        if (n == name) return *c;
      throw std::logic_error("the harness built no sub-slot " + std::string(name));
    }
    Component* find(std::string_view name) const override {
      for (const auto& [n, c] : entries)
        if (n == name) return c;
      return nullptr;
    }
  };

  template <typename Base, typename Fallback>
  std::unique_ptr<Base> build(const Slot<Base>& slot, const std::string& path, int sm,
                              Fallback fallback, const SlotResolver* slots = nullptr) {
    if (!slot.make) return fallback();
    params_.emplace_back(path, SourceLocation{"harness", 0, 0}, slot.params);
    const BuildContext context{params_.back(),
                               events_,
                               StatsScope(stats_, path, slot.schema.get()),
                               config_.gpu,
                               1,
                               sm,
                               slots,
                               config_.instructions};
    return slot.make(context);
  }

  void fire_next() {
    // Issue phases are not model events: like the kernel, the run's length ignores them, so it
    // is the same in both steppings.
    if (events_.fire_next() != &clock_) last_event_ = events_.now();
  }

  void dispatch(Cycle now) {
    while (next_cta_ < workload_.ctas.size()) {
      const CtaProgram& program = workload_.ctas[next_cta_];
      std::string why;
      if (!sms_.front().sm->fits_empty(program, why))
        throw std::runtime_error("CTA " + std::to_string(program.cta_id) +
                                 " can never run: " + why);
      auto fits = std::find_if(sms_.begin(), sms_.end(),
                               [&](const SmParts& p) { return p.sm->can_accept(program); });
      if (fits == sms_.end()) return;
      const int sm = static_cast<int>(fits - sms_.begin());
      dispatches_.push_back({program.cta_id, sm, now});
      ++next_cta_;
      fits->sm->accept(now, std::make_unique<CtaProgram>(program));
    }
  }

  void on_cta_exit(int sm, Cycle now) override {
    exits_.emplace_back(sm, now);
    last_exit_ = std::max(last_exit_, now);
    ++retired_;
    dispatch(now);
  }

  RunResult finish(Outcome outcome) {
    RunResult r;
    r.outcome = outcome;
    r.end =
        outcome == Outcome::kWatchdog ? config_.max_cycles : std::max(last_event_, last_exit_) + 1;
    if (outcome != Outcome::kCompleted)
      for (const SmParts& p : sms_) p.sm->report_blocked(r.blocked);
    for (SmParts& p : sms_) {
      p.sm->finish(r.end);
      p.scheduler->finish(r.end);
      p.tma->finish(r.end);
      p.tensor_core->finish(r.end);
      for (auto& engine : p.engines) engine->finish(r.end);
    }
    memory_->finish(r.end);
    r.dispatches = dispatches_;
    r.exits = exits_;
    r.counters = stats_.counters();
    r.spans = timeline_.spans;
    return r;
  }

  HarnessConfig config_;
  Workload workload_;
  Stepping stepping_;
  ManualEventQueue events_;
  ContractIssueClock clock_;
  test::TestStats stats_;
  RecordingTimeline timeline_;
  std::deque<Params> params_;  // BuildContext::params outlives its component
  std::vector<std::unique_ptr<EngineSlots>> slots_;  // what each SM was built with
  std::unique_ptr<MemoryPort> memory_;
  std::vector<SmParts> sms_;
  std::size_t next_cta_ = 0;
  std::size_t retired_ = 0;
  Cycle last_event_ = 0;
  Cycle last_exit_ = 0;
  std::vector<Dispatch> dispatches_;
  std::vector<std::pair<int, Cycle>> exits_;
};

/// Runs `workload` in event and in reference stepping, expects identical results (cycles,
/// dispatches, statistics, timeline, blocked report), and returns the event-stepping one.
inline RunResult run_both(const HarnessConfig& config, const Workload& workload) {
  RunResult event = SmHarness(config, workload, Stepping::kEvent).run();
  RunResult reference = SmHarness(config, workload, Stepping::kReference).run();
  EXPECT_EQ(event.outcome, reference.outcome);
  EXPECT_EQ(event.end, reference.end);
  EXPECT_EQ(event.dispatches, reference.dispatches);
  EXPECT_EQ(event.exits, reference.exits);
  EXPECT_EQ(event.counters, reference.counters);
  EXPECT_EQ(event.spans, reference.spans);
  EXPECT_EQ(event.blocked.size(), reference.blocked.size());
  for (std::size_t i = 0; i < std::min(event.blocked.size(), reference.blocked.size()); ++i) {
    const BlockedThread& a = event.blocked[i];
    const BlockedThread& b = reference.blocked[i];
    EXPECT_EQ(std::tie(a.sm, a.cta, a.warpgroup, a.pc, a.instruction, a.waiting_for),
              std::tie(b.sm, b.cta, b.warpgroup, b.pc, b.instruction, b.waiting_for));
  }
  return event;
}

// ---- building programs -------------------------------------------------------------------------

/// Appends instructions to one WarpGroup of a CtaBuilder's program (operands that live in the
/// program's pools -- TMA coordinates, bulk addresses -- are appended there).
class WarpGroupBuilder {
 public:
  WarpGroupBuilder(CtaProgram& program, std::size_t index) : p_(&program), w_(index) {}

  WarpGroupBuilder& tma_load(std::uint16_t map, std::initializer_list<std::int32_t> coords,
                             std::uint8_t sid) {
    return add(Instruction::tma_load(map, pool(coords), sid));
  }
  WarpGroupBuilder& tma_bulk(Addr addr, std::uint32_t bytes, std::uint8_t sid) {
    p_->addresses.push_back(addr);
    return add(
        Instruction::tma_bulk(static_cast<std::uint32_t>(p_->addresses.size() - 1), bytes, sid));
  }
  WarpGroupBuilder& tma_store(std::uint16_t map, std::initializer_list<std::int32_t> coords) {
    return add(Instruction::tma_store(map, pool(coords)));
  }
  WarpGroupBuilder& acquire(std::uint8_t s) { return add(Instruction::acquire_stage(s)); }
  WarpGroupBuilder& release(std::uint8_t s) { return add(Instruction::release_stage(s)); }
  WarpGroupBuilder& mb_wait(std::uint8_t s) { return add(Instruction::mb_wait(s)); }
  WarpGroupBuilder& wgmma(std::uint16_t m, std::uint16_t n, std::uint16_t k, std::uint32_t gid) {
    return add(Instruction::wgmma(m, n, k, gid));
  }
  WarpGroupBuilder& commit(std::uint32_t gid) { return add(Instruction::wgmma_commit(gid)); }
  WarpGroupBuilder& wgmma_wait(std::uint32_t n) { return add(Instruction::wgmma_wait(n)); }
  WarpGroupBuilder& bar_arrive(std::uint32_t b) { return add(Instruction::bar_arrive(b)); }
  WarpGroupBuilder& bar_wait(std::uint32_t b) { return add(Instruction::bar_wait(b)); }
  WarpGroupBuilder& bubble(std::uint32_t cycles) { return add(Instruction::bubble(cycles)); }
  WarpGroupBuilder& compute(std::uint32_t latency, ComputeWork work) {
    p_->work.push_back(work);
    return add(Instruction::compute(latency, static_cast<std::uint32_t>(p_->work.size() - 1)));
  }
  WarpGroupBuilder& exit() { return add(Instruction::exit()); }

 private:
  WarpGroupBuilder& add(const Instruction& in) {
    p_->warpgroups[w_].code.push_back(in);
    return *this;
  }
  std::uint32_t pool(std::initializer_list<std::int32_t> coords) {
    const auto at = static_cast<std::uint32_t>(p_->coords.size());
    p_->coords.insert(p_->coords.end(), coords);
    return at;
  }
  CtaProgram* p_;
  std::size_t w_;
};

/// A CTA program under construction. Its WarpGroupBuilders point into it: do not move it while
/// they are in use.
class CtaBuilder {
 public:
  explicit CtaBuilder(std::uint64_t cta_id) { p_.cta_id = cta_id; }
  CtaBuilder& smem(std::int64_t bytes) {
    p_.smem_bytes = bytes;
    return *this;
  }
  CtaBuilder& stages(std::uint32_t n) {
    p_.stage_count = n;
    return *this;
  }
  CtaBuilder& consumers_per_stage(std::uint32_t n) {
    p_.consumers_per_stage = n;
    return *this;
  }
  CtaBuilder& barrier(std::uint32_t id, std::uint32_t participants) {
    if (p_.barrier_participants.size() <= id) p_.barrier_participants.resize(id + 1, 2);
    p_.barrier_participants[id] = participants;
    return *this;
  }
  WarpGroupBuilder warpgroup(std::uint32_t registers = 0) {
    p_.warpgroups.push_back({{}, registers});
    return WarpGroupBuilder(p_, p_.warpgroups.size() - 1);
  }
  const CtaProgram& program() const { return p_; }

 private:
  CtaProgram p_;
};

/// A rank-2 TensorMap of FP16 elements with a `box0` x `box1` box over a `shape0` x `shape1`
/// row-major tensor at `base`.
inline TensorMap tensor_map_2d(std::string name, Addr base, std::uint64_t shape0,
                               std::uint64_t shape1, std::uint32_t box0, std::uint32_t box1) {
  TensorMap m;
  m.name = std::move(name);
  m.base = base;
  m.elem_bytes = 2;
  m.rank = 2;
  m.shape = {shape0, shape1, 1, 1, 1};
  m.stride = {2, shape0 * 2, 0, 0, 0};
  m.box = {box0, box1, 1, 1, 1};
  return m;
}

}  // namespace simfa::sm_test
