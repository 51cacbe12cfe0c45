// One simulated kernel launch: builds the components a manifest names, wires them, runs the
// event loop (or the per-cycle reference loop) to completion, deadlock, the watchdog, a stall
// (no progress) or the wall-clock timeout, and reports the result.
#pragma once

#include <boost/json/object.hpp>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernel/counter_tracks.h"
#include "kernel/event_queue.h"
#include "kernel/issue_arbiter.h"
#include "kernel/manifest.h"
#include "kernel/plugin_host.h"
#include "kernel/stats_registry.h"
#include "kernel/timeline.h"
#include "simfa/core.h"
#include "simfa/memory.h"
#include "simfa/program.h"

namespace simfa::kernel {

/// kStalled: the run stopped making progress (docs/reliability.md): no SM issue phase and no
/// CTA retired for RunOptions::stall_cycles cycles while work was still pending, or more than
/// kMaxEventsPerCycle events at one cycle (a zero-time livelock). kTimeout: the wall clock passed
/// RunOptions::timeout_seconds.
enum class RunOutcome { kCompleted, kDeadlock, kWatchdog, kStalled, kTimeout };

/// Events at one cycle past which time is taken to stand still: a simulated cycle holds a few
/// events per SM and memory slice, thousands in all.
inline constexpr std::uint64_t kMaxEventsPerCycle = std::uint64_t{1} << 24;

/// "completed", "deadlock", "watchdog", "stalled", "timeout" (the stats file's kernel.outcome).
const char* outcome_name(RunOutcome outcome);

struct RunOptions {
  Stepping stepping = Stepping::kEvent;
  bool timeline = false;
  std::vector<int> timeline_sms{0};  ///< the SMs whose spans the timeline records
  /// Counter tracks sampled every this many cycles (per SM for timeline_sms); 0: none.
  Cycle counter_window = 0;
  bool progress = false;  ///< a progress line on stderr every ~1M events (for terminals)
  /// Stop as stalled after this many cycles without an SM issue phase or a CTA retiring while
  /// work is pending; 0: never. 10^8 cycles are ~55 ms of an H800: far past any wait a kernel
  /// makes (DRAM, a BUBBLE), near nothing in a hung run's wall time.
  Cycle stall_cycles = 100'000'000;
  double timeout_seconds = 0;  ///< wall-clock limit of run(); 0: none
};

struct RunResult {
  RunOutcome outcome = RunOutcome::kCompleted;
  Cycle cycles = 0;
  double wall_seconds = 0;
  std::uint64_t peak_rss_bytes = 0;
  std::uint64_t events = 0;        ///< model events (the issue arbiter's excluded)
  std::uint64_t queue_events = 0;  ///< every event the queue fired, the arbiter's included
  std::uint64_t ctas = 0;
  std::vector<BlockedThread> blocked;  ///< filled unless completed
  std::string stop_reason;             ///< why a stalled or timed-out run stopped
};

class Simulation final : private CtaHost {
 public:
  /// `host` must outlive the Simulation (it owns the plugin libraries).
  Simulation(const Manifest& manifest, const ComponentConfig& workload, const PluginHost& host,
             RunOptions options);
  ~Simulation();

  RunResult run();

  const StatsRegistryImpl& stats() const { return stats_; }
  /// The memory system the SMs send to (the manifest's [memory]).
  const MemoryPort& memory() const { return *memory_; }
  /// The memory's byte totals so far (the stats contract's; every memory plugin reports them).
  MemoryTraffic traffic() const { return *memory_->traffic(); }
  /// The SMs' work so far, summed (SmCore::work).
  SmWork work() const;
  /// The hit rate of the memory's last-level cache so far, hits / (hits + misses) as its
  /// statistic hit_rate is (0 before any lookup); none when it has no cache
  /// (MemoryPort::cache_use).
  std::optional<double> l2_hit_rate() const;
  const Timeline& timeline() const { return timeline_; }
  /// Null unless RunOptions::counter_window was set.
  const CounterTracks* counter_tracks() const { return counters_.get(); }
  /// The stats-file object (docs/stats.md): metadata, kernel/memory/sim totals, every statistic.
  boost::json::object stats_json(const RunResult& result) const;
  /// The human-readable summary printed after a run.
  std::string summary(const RunResult& result) const;
  /// The deadlock / watchdog report.
  static std::string blocked_report(const RunResult& result);

 private:
  std::unique_ptr<Component> build(const ComponentConfig& config, const std::string& path,
                                   int sm_index);
  template <typename T>
  T* build_as(const char* slot, const std::string& path, int sm_index);
  void dispatch(Cycle now);
  void on_cta_exit(int sm, Cycle now) override;
  bool all_done() const;
  /// Fires the next event if its cycle is at most `limit`; false when there is none.
  bool fire_next_event(Cycle limit);
  void show_progress();
  RunResult finish(RunOutcome outcome, double wall_start);
  /// Stall or timeout, checked before the events of cycle `next` fire (or the cycle is stepped).
  bool stopped(Cycle next);
  /// The last cycle an event may fire at before the run counts as stalled (kNever: no limit).
  Cycle stall_bound() const;
  void check_timeout(Cycle now);
  // fire_next_event()'s rare cases, out of line.
  [[gnu::cold, gnu::noinline]] void too_many_events(Cycle now);
  [[gnu::cold, gnu::noinline]] void every_64k_events(Cycle now);

  const Manifest& manifest_;
  const ComponentConfig& workload_config_;
  const PluginHost& host_;
  RunOptions options_;

  StatsRegistryImpl stats_;
  CalendarQueue events_;
  Timeline timeline_;

  // Owned components, destroyed in reverse order of construction before the host's libraries.
  std::vector<std::unique_ptr<Component>> components_;
  // For each component with sub-slots: its descendants by relative path.
  std::map<const Component*, std::vector<std::pair<std::string, Component*>>> built_slots_;
  ProgramSource* workload_ = nullptr;
  MemoryPort* memory_ = nullptr;
  CtaDispatchPolicy* dispatch_ = nullptr;
  std::vector<SmCore*> sms_;
  std::unique_ptr<IssueArbiter> arbiter_;
  std::unique_ptr<CounterTracks> counters_;

  std::uint64_t next_cta_ = 0;
  std::unique_ptr<CtaProgram> pending_;  // the next CTA, built and waiting for an SM
  std::vector<int> candidates_;
  Cycle last_exit_ = 0;
  Cycle last_event_ = 0;
  std::uint64_t model_events_ = 0;
  std::chrono::steady_clock::time_point wall_start_;
  std::uint64_t retired_ctas_ = 0;
  // The progress watchdog (RunOptions::stall_cycles, kMaxEventsPerCycle, timeout_seconds).
  Cycle last_progress_ = 0;
  Cycle same_cycle_ = 0;
  std::uint64_t same_cycle_events_ = 0;
  RunOutcome stop_ = RunOutcome::kCompleted;
  Cycle stop_cycle_ = 0;
  std::string stop_reason_;
};

}  // namespace simfa::kernel
