// One simulated kernel launch: builds the components a manifest names, wires them, runs the
// event loop (or the per-cycle reference loop) to completion, deadlock or the watchdog, and
// reports the result.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <boost/json/object.hpp>

#include "kernel/counter_tracks.h"
#include "kernel/event_queue.h"
#include "kernel/issue_arbiter.h"
#include "kernel/manifest.h"
#include "kernel/plugin_host.h"
#include "kernel/stats_registry.h"
#include "kernel/timeline.h"
#include "simfa/core.h"
#include "simfa/program.h"

namespace simfa::kernel {

enum class RunOutcome { kCompleted, kDeadlock, kWatchdog };

struct RunOptions {
  Stepping stepping = Stepping::kEvent;
  bool timeline = false;
  std::vector<int> timeline_sms{0};  ///< the SMs whose spans the timeline records
  /// Counter tracks sampled every this many cycles (per SM for timeline_sms); 0: none.
  Cycle counter_window = 0;
  bool progress = false;  ///< a progress line on stderr every ~1M events (for terminals)
};

struct RunResult {
  RunOutcome outcome = RunOutcome::kCompleted;
  Cycle cycles = 0;
  double wall_seconds = 0;
  std::uint64_t peak_rss_bytes = 0;
  std::uint64_t events = 0;        ///< model events (the issue arbiter's excluded)
  std::uint64_t queue_events = 0;  ///< every event the queue fired, the arbiter's included
  std::uint64_t ctas = 0;
  std::vector<BlockedThread> blocked;  ///< filled on deadlock and watchdog
};

class Simulation final : private CtaHost {
 public:
  /// `host` must outlive the Simulation (it owns the plugin libraries).
  Simulation(const Manifest& manifest, const ComponentConfig& workload, const PluginHost& host,
             RunOptions options);
  ~Simulation();

  RunResult run();

  const StatsRegistryImpl& stats() const { return stats_; }
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
};

}  // namespace simfa::kernel
