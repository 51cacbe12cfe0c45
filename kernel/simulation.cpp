#include "kernel/simulation.h"

#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "kernel/version.h"
#include "simfa/error.h"
#include "simfa/int_math.h"
#include "simfa/plugin.h"

namespace simfa::kernel {

namespace {

// Seeds each component's PRNG from (manifest seed, component path), so adding a component
// never perturbs another's random stream (STYLE: events and determinism).
std::uint64_t component_seed(std::uint64_t seed, const std::string& path) {
  std::uint64_t h = fnv1a(path, 1469598103934665603ull ^ seed);  // then splitmix64
  h += 0x9e3779b97f4a7c15ull;
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
  return h ^ (h >> 31);
}

std::uint64_t peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;  // ru_maxrss is in KiB on Linux
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

const ComponentConfig& slot_config(const Manifest& manifest, const char* slot) {
  const ComponentConfig* c = manifest.find(slot);
  if (!c)
    throw InputError(SourceLocation{manifest.path, 1, 1},
                     std::string("missing table [") + slot + "]");
  return *c;
}

}  // namespace

Simulation::Simulation(const Manifest& manifest, const ComponentConfig& workload,
                       const PluginHost& host, RunOptions options)
    : manifest_(manifest), workload_config_(workload), host_(host), options_(std::move(options)) {
  const int sm_count = manifest_.gpu.sm_count;

  auto workload_component = build(workload_config_, "workload", -1);
  workload_ = static_cast<ProgramSource*>(workload_component.get());
  components_.push_back(std::move(workload_component));

  memory_ = build_as<MemoryPort>("memory", "memory", -1);
  if (!memory_->traffic())
    throw Error("the memory plugin " + slot_config(manifest_, "memory").entry->name +
                " reports no byte totals (MemoryPort::traffic), which every memory plugin must "
                "(docs/stats.md)");
  dispatch_ = build_as<CtaDispatchPolicy>("dispatch", "dispatch", -1);

  // Each SM is built with the engines its plugin declares as sub-slots, at sm[i].<slot>.
  sms_.reserve(static_cast<std::size_t>(sm_count));
  for (int i = 0; i < sm_count; ++i)
    sms_.push_back(build_as<SmCore>("sm", fmt::format("sm[{}]", i), i));
  arbiter_ = std::make_unique<IssueArbiter>(events_, sms_, options_.stepping);

  for (int i = 0; i < sm_count; ++i) {
    bool traced = options_.timeline &&
                  std::find(options_.timeline_sms.begin(), options_.timeline_sms.end(), i) !=
                      options_.timeline_sms.end();
    sms_[static_cast<std::size_t>(i)]->connect(SmWiring{*arbiter_, *this, workload_->tensor_maps(),
                                                        traced ? &timeline_ : nullptr, *memory_});
  }
  if (options_.counter_window > 0)
    counters_ = std::make_unique<CounterTracks>(sms_, *memory_, options_.timeline_sms,
                                                manifest_.gpu.clock_mhz, options_.counter_window);
}

Simulation::~Simulation() {
  // Components may hold references into each other: destroy in reverse construction order.
  while (!components_.empty()) components_.pop_back();
}

namespace {
// The sub-slot components of one component, by path relative to it.
class BuiltSlots final : public SlotResolver {
 public:
  void add(std::string path, Component& c) { slots_.emplace_back(std::move(path), &c); }
  Component& slot(std::string_view path) const override {
    for (const auto& [p, c] : slots_)
      if (p == path) return *c;
    throw Error("internal: no component was built for sub-slot '" + std::string(path) + "'");
  }
  Component* find(std::string_view path) const override {
    for (const auto& [p, c] : slots_)
      if (p == path) return c;
    return nullptr;
  }
  const std::vector<std::pair<std::string, Component*>>& entries() const { return slots_; }

 private:
  std::vector<std::pair<std::string, Component*>> slots_;
};
}  // namespace

std::unique_ptr<Component> Simulation::build(const ComponentConfig& config, const std::string& path,
                                             int sm_index) {
  // Sub-slots first (depth first), so the component can connect them as it is constructed.
  // The declared slots, then the engine slots the manifest filled (Schema::engine_slots).
  std::vector<std::string> names;
  for (const SlotSpec& sub : config.entry->schema.slots()) names.push_back(sub.name);
  if (!config.entry->schema.engine_slots().empty())
    for (const ComponentConfig& c : manifest_.components) {
      if (!c.slot.starts_with(config.slot + ".")) continue;
      std::string name = c.slot.substr(config.slot.size() + 1);
      if (name.find('.') == std::string::npos &&
          std::find(names.begin(), names.end(), name) == names.end())
        names.push_back(std::move(name));
    }
  BuiltSlots slots;
  for (const std::string& name : names) {
    const std::string child_slot = config.slot + "." + name;
    const ComponentConfig* child = manifest_.find(child_slot);
    if (!child) throw Error("internal: the manifest has no table [" + child_slot + "]");
    auto built = build(*child, path + "." + name, sm_index);
    slots.add(name, *built);
    // A grandchild is reachable as "child.grandchild".
    if (const auto* grand =
            built_slots_.count(built.get()) ? &built_slots_.at(built.get()) : nullptr)
      for (const auto& [p, c] : *grand) slots.add(name + "." + p, *c);
    components_.push_back(std::move(built));
  }
  BuildContext context{config.params,
                       events_,
                       StatsScope(stats_, path, &config.entry->schema),
                       manifest_.gpu,
                       component_seed(manifest_.seed, path),
                       sm_index,
                       slots.entries().empty() ? nullptr : &slots,
                       &host_.instructions()};
  auto component = host_.create(*config.entry, context);
  if (!slots.entries().empty()) built_slots_[component.get()] = slots.entries();
  return component;
}

template <typename T>
T* Simulation::build_as(const char* slot, const std::string& path, int sm_index) {
  // The manifest loader checked that the slot's plugin has the slot's kind, and every
  // component of a kind implements that kind's interface.
  auto component = build(slot_config(manifest_, slot), path, sm_index);
  T* typed = static_cast<T*>(component.get());
  components_.push_back(std::move(component));
  return typed;
}

void Simulation::dispatch(Cycle now) {
  const std::uint64_t total = workload_->cta_count();
  while (next_cta_ < total) {
    if (!pending_) {
      pending_ = std::make_unique<CtaProgram>();
      workload_->build(next_cta_, *pending_);
      std::string why;
      if (!sms_.front()->fits_empty(*pending_, why))
        throw InputError(fmt::format("CTA {} can never run: {}", next_cta_, why));
    }
    candidates_.clear();
    for (std::size_t i = 0; i < sms_.size(); ++i)
      if (sms_[i]->can_accept(*pending_)) candidates_.push_back(static_cast<int>(i));
    if (candidates_.empty()) return;
    std::size_t pick = dispatch_->choose(candidates_, next_cta_);
    sms_[static_cast<std::size_t>(candidates_[pick])]->accept(now, std::move(pending_));
    ++next_cta_;
  }
}

void Simulation::on_cta_exit(int /*sm*/, Cycle now) {
  last_exit_ = std::max(last_exit_, now);
  last_progress_ = std::max(last_progress_, now);
  ++retired_ctas_;
  dispatch(now);
}

bool Simulation::all_done() const {
  return retired_ctas_ == workload_->cta_count();
}

// The two functions of the per-event path, ahead of run() so that it inlines them (with the
// queue's fire_next): calls per event were a tenth of a memory.ideal run's instructions
// (docs/performance.md §12).
inline Cycle Simulation::stall_bound() const {
  if (options_.stall_cycles == 0 || last_progress_ > kNever - options_.stall_cycles) return kNever;
  return last_progress_ + options_.stall_cycles;
}

inline bool Simulation::fire_next_event(Cycle limit) {
  // Issue-phase events exist only in event stepping; counting just the others keeps the run's
  // length and event count identical in both modes.
  const std::uint64_t phases = arbiter_->phase_events();
  if (!events_.fire_next(limit)) return false;
  const Cycle now = events_.now();
  if (arbiter_->phase_events() != phases) {
    last_progress_ = now;
    return true;
  }
  last_event_ = now;
  if (now != same_cycle_) {
    same_cycle_ = now;
    same_cycle_events_ = 0;
  } else if (++same_cycle_events_ > kMaxEventsPerCycle && stop_ == RunOutcome::kCompleted) {
    too_many_events(now);
  }
  if ((++model_events_ & 0xffff) == 0) every_64k_events(now);
  return true;
}

RunResult Simulation::run() {
  const auto wall_start = wall_start_ = std::chrono::steady_clock::now();
  const Cycle limit = manifest_.max_cycles == 0 ? kNever : manifest_.max_cycles;
  dispatch(0);

  if (options_.stepping == Stepping::kEvent) {
    for (;;) {
      // No event past the stall bound fires (a stall stops the run before it, as in reference
      // stepping).
      const Cycle bound = std::min(limit, stall_bound());
      // Counter tracks sample the stats between events (observing only).
      if (counters_ && !events_.empty() && events_.next_cycle() <= bound &&
          events_.next_cycle() >= counters_->next_sample())
        counters_->sample_until(events_.next_cycle());
      if (!fire_next_event(bound)) break;
      if (stop_ != RunOutcome::kCompleted) return finish(stop_, seconds_since(wall_start));
    }
    if (!events_.empty()) {  // the next event lies past the limit or the stall bound
      const Cycle next = events_.next_cycle();
      if (next > limit) return finish(RunOutcome::kWatchdog, seconds_since(wall_start));
      stopped(next);
      return finish(stop_, seconds_since(wall_start));
    }
  } else {
    // The paper's Algorithm 1: per cycle, completed events wake threads, then every SM's issue
    // phase. Stops when no event is pending and no SM expects to issue.
    for (Cycle now = 0;; ++now) {
      if (now > limit) return finish(RunOutcome::kWatchdog, seconds_since(wall_start));
      if (counters_ && now >= counters_->next_sample()) counters_->sample_until(now);
      if ((now & 0xfff) == 0) check_timeout(now);
      if (stopped(now)) return finish(stop_, seconds_since(wall_start));
      while (fire_next_event(now))
        if (stop_ != RunOutcome::kCompleted) return finish(stop_, seconds_since(wall_start));
      // An SM asking to issue at this cycle is progress, as an issue-phase event is in event
      // stepping: both modes stall at the same cycle.
      if (arbiter_->requested(now)) last_progress_ = now;
      arbiter_->step_all(now);
      if (events_.empty() && !arbiter_->any_request()) break;
    }
  }
  if (options_.progress) std::fputs("\r\033[K", stderr);
  return finish(all_done() ? RunOutcome::kCompleted : RunOutcome::kDeadlock,
                seconds_since(wall_start));
}

void Simulation::show_progress() {
  const double wall = seconds_since(wall_start_);
  std::fprintf(stderr, "\r\033[Kcycle %llu, %llu of %llu CTAs retired, %.1f s",
               static_cast<unsigned long long>(events_.now()),
               static_cast<unsigned long long>(retired_ctas_),
               static_cast<unsigned long long>(workload_->cta_count()), wall);
}

bool Simulation::stopped(Cycle next) {
  if (stop_ != RunOutcome::kCompleted) return true;
  if (options_.stall_cycles != 0 && next - last_progress_ > options_.stall_cycles) {
    stop_ = RunOutcome::kStalled;
    stop_cycle_ = last_progress_ + options_.stall_cycles;
    stop_reason_ = fmt::format(
        "no SM issued and no CTA retired for {} cycles (since cycle {}) while work was pending",
        options_.stall_cycles, last_progress_);
  }
  return stop_ != RunOutcome::kCompleted;
}

void Simulation::too_many_events(Cycle now) {
  stop_ = RunOutcome::kStalled;
  stop_cycle_ = now;
  stop_reason_ = fmt::format("more than {} events fired at cycle {}: simulated time stands still",
                             kMaxEventsPerCycle, now);
}

void Simulation::every_64k_events(Cycle now) {
  if ((model_events_ & 0xfffff) == 0 && options_.progress) show_progress();
  check_timeout(now);
}

void Simulation::check_timeout(Cycle now) {
  if (options_.timeout_seconds > 0 && stop_ == RunOutcome::kCompleted &&
      seconds_since(wall_start_) > options_.timeout_seconds) {
    stop_ = RunOutcome::kTimeout;
    stop_cycle_ = now;
    stop_reason_ =
        fmt::format("the wall-clock limit of {} s (--timeout) passed", options_.timeout_seconds);
  }
}

RunResult Simulation::finish(RunOutcome outcome, double wall_seconds) {
  RunResult r;
  r.outcome = outcome;
  r.cycles = std::max(last_event_, last_exit_) + 1;
  if (outcome == RunOutcome::kWatchdog) r.cycles = manifest_.max_cycles;
  if (outcome == RunOutcome::kStalled || outcome == RunOutcome::kTimeout) {
    r.cycles = stop_cycle_;
    r.stop_reason = stop_reason_;
  }
  r.wall_seconds = wall_seconds;
  r.peak_rss_bytes = peak_rss_bytes();
  r.events = model_events_;
  r.queue_events = events_.fired();
  r.ctas = retired_ctas_;
  if (outcome != RunOutcome::kCompleted)
    for (const SmCore* sm : sms_) sm->report_blocked(r.blocked);
  for (auto& c : components_) c->finish(r.cycles);
  if (counters_) counters_->finish(r.cycles);
  return r;
}

boost::json::object Simulation::stats_json(const RunResult& r) const {
  namespace json = boost::json;
  json::object out = stats_.to_json();
  out["simfa"] =
      json::object{{"version", kVersion}, {"git_hash", kGitHash}, {"abi", kSdkAbiVersion}};
  out["manifest"] = manifest_.resolved;
  out["manifest_sha256"] = manifest_.sha256;
  out["seed"] = manifest_.seed;
  json::object workload{{"plugin", workload_config_.plugin}};
  for (const auto& [key, value] : workload_->parameters()) workload[key] = value;
  out["workload"] = std::move(workload);
  const char* outcome = outcome_name(r.outcome);
  const double time_us = static_cast<double>(r.cycles) / manifest_.gpu.clock_mhz;
  out["kernel"] = json::object{{"cycles", r.cycles},
                               {"time_us", time_us},
                               {"event_us", time_us + manifest_.launch_overhead_ns / 1e3},
                               {"ctas", r.ctas},
                               {"outcome", outcome}};
  // The stats contract's byte totals, as the memory reports them, beside its own statistics.
  json::object& memory = out["memory"].is_object() ? out["memory"].as_object()
                                                   : (out["memory"] = json::object()).as_object();
  const MemoryTraffic bytes = traffic();
  memory["llc_read_bytes"] = bytes.llc.read;
  memory["llc_write_bytes"] = bytes.llc.write;
  memory["dram_read_bytes"] = bytes.dram.read;
  memory["dram_write_bytes"] = bytes.dram.write;
  out["sim"] =
      json::object{{"wall_seconds", r.wall_seconds},
                   {"cycles_per_second",
                    r.wall_seconds > 0 ? static_cast<double>(r.cycles) / r.wall_seconds : 0.0},
                   {"peak_rss_bytes", r.peak_rss_bytes},
                   {"events", r.events},
                   {"queue_events", r.queue_events},
                   {"stepping", options_.stepping == Stepping::kEvent ? "event" : "reference"}};
  return out;
}

SmWork Simulation::work() const {
  SmWork total;
  for (const SmCore* sm : sms_) {
    const SmWork w = sm->work();
    total.instructions += w.instructions;
    total.line_requests += w.line_requests;
  }
  return total;
}

std::optional<double> Simulation::l2_hit_rate() const {
  const std::optional<CacheUse> l2 = memory_->cache_use();
  if (!l2) return std::nullopt;
  const double lookups = static_cast<double>(l2->hits) + static_cast<double>(l2->misses);
  return lookups > 0 ? static_cast<double>(l2->hits) / lookups : 0.0;
}

std::string Simulation::summary(const RunResult& r) const {
  const double sms = static_cast<double>(manifest_.gpu.sm_count);
  const double cycles = static_cast<double>(r.cycles);
  // Engine utilization and stalls as the SMs report them (SmCore::meters), summed over the SMs
  // by name: the engines in the order the SMs give them, the stalls in the order of their names.
  std::vector<std::pair<std::string, std::uint64_t>> busy;
  std::map<std::string, std::uint64_t> stalls;
  std::vector<SmMeter> meters;
  for (const SmCore* sm : sms_) {
    meters.clear();
    sm->meters(meters);
    for (const SmMeter& m : meters) {
      if (m.kind == SmMeter::Kind::kStall) stalls[m.name] += m.value;
      if (m.kind != SmMeter::Kind::kBusy && m.kind != SmMeter::Kind::kPipelineBusy) continue;
      auto it =
          std::find_if(busy.begin(), busy.end(), [&](const auto& b) { return b.first == m.name; });
      if (it == busy.end()) it = busy.insert(busy.end(), {m.name, 0});
      it->second += m.value;
    }
  }
  const double time_us = cycles / manifest_.gpu.clock_mhz;
  std::string s;
  s += fmt::format("kernel            {} cycles, {:.3f} us at {} MHz ({} CTAs on {} SMs)\n",
                   r.cycles, time_us, manifest_.gpu.clock_mhz, r.ctas, manifest_.gpu.sm_count);
  if (manifest_.launch_overhead_ns > 0)
    s += fmt::format("as events time it {:.3f} us (the span + {:.3f} us of launch overhead)\n",
                     time_us + manifest_.launch_overhead_ns / 1e3,
                     manifest_.launch_overhead_ns / 1e3);
  for (const auto& [name, cycles_busy] : busy)
    s += fmt::format("{:<18}{:.1f}%\n", name + " busy",
                     100.0 * static_cast<double>(cycles_busy) / (cycles * sms));
  if (!stalls.empty()) {
    s += "stall cycles      ";
    bool first = true;
    for (const auto& [name, total] : stalls) {
      s += fmt::format("{}{} {}", first ? "" : ", ", name, total);
      first = false;
    }
    s += "\n";
  }
  const MemoryTraffic bytes = traffic();
  const double llc_read = static_cast<double>(bytes.llc.read);
  const double dram = static_cast<double>(bytes.dram.read + bytes.dram.write);
  s += fmt::format("LLC read bytes    {:.0f} ({:.1f} MB)\n", llc_read, llc_read / 1e6);
  s += fmt::format("DRAM bytes        {:.0f} ({:.1f} MB), {:.1f} GB/s achieved\n", dram, dram / 1e6,
                   time_us > 0 ? dram / (time_us * 1e3) : 0.0);
  s += fmt::format(
      "simulation        {:.3f} s wall, {:.0f} simulated cycles/s, peak RSS {:.1f} MiB\n",
      r.wall_seconds, r.wall_seconds > 0 ? cycles / r.wall_seconds : 0.0,
      static_cast<double>(r.peak_rss_bytes) / 1048576.0);
  return s;
}

const char* outcome_name(RunOutcome outcome) {
  switch (outcome) {
    case RunOutcome::kCompleted:
      return "completed";
    case RunOutcome::kDeadlock:
      return "deadlock";
    case RunOutcome::kWatchdog:
      return "watchdog";
    case RunOutcome::kStalled:
      return "stalled";
    case RunOutcome::kTimeout:
      return "timeout";
  }
  return "unknown";
}

std::string Simulation::blocked_report(const RunResult& r) {
  std::string s;
  switch (r.outcome) {
    case RunOutcome::kDeadlock:
      s = fmt::format("deadlock at cycle {}: no event is pending and {} WarpGroup(s) are blocked\n",
                      r.cycles, r.blocked.size());
      break;
    case RunOutcome::kWatchdog:
      s = fmt::format("watchdog: stopped at max_cycles = {} with {} WarpGroup(s) blocked\n",
                      r.cycles, r.blocked.size());
      break;
    case RunOutcome::kStalled:
    case RunOutcome::kTimeout:
      s = fmt::format("{} at cycle {}: {}; {} WarpGroup(s) blocked\n", outcome_name(r.outcome),
                      r.cycles, r.stop_reason, r.blocked.size());
      break;
    case RunOutcome::kCompleted:
      break;
  }
  for (const BlockedThread& b : r.blocked)
    s += fmt::format("  sm {} cta {} warpgroup {} pc {}: {} waits for {}\n", b.sm, b.cta,
                     b.warpgroup, b.pc, b.instruction, b.waiting_for);
  return s;
}

}  // namespace simfa::kernel
