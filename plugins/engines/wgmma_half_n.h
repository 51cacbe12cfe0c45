// `wgmma.half_n`: the tensor-core engine of the paper's section IV-B. One in-order pipeline per
// SM behind an instruction buffer of issued-but-unfinished WGMMAs. A WGMMA starts when the
// pipeline frees, occupies it for its latency-law cycles, and completes (leaving the buffer) when
// that occupancy ends plus `completion_latency`. With `fp32_share` > 0 the pipeline shares the
// register file with the SM's FP32 pipe: past `fp32_onset` of that pipe's load it runs slower,
// by 1 / fp32_share a unit of load (Fp32Coupling).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "simfa/component.h"
#include "simfa/core.h"
#include "simfa/ring_queue.h"


namespace simfa::engines {

/// Per-instruction pipeline cycles of one m64nNk16 FP16 WGMMA, before the M/K/k_eff scaling.
enum class WgmmaLatencyModel : std::uint8_t {
  kHalfN,  ///< N / 2 (the paper's section IV-B, after Luo et al. [12])
  kTable,  ///< measured per-N latencies, interpolated linearly between measured N
};

/// Pipeline occupancy of an M x N x K WGMMA: k_eff * base(N) * ceil(M/64) * ceil(K/16), rounded
/// to the nearest cycle and at least 1.
Cycle wgmma_cycles(WgmmaLatencyModel model, double k_eff, std::uint32_t m, std::uint32_t n,
                   std::uint32_t k);

/// Per-N multipliers of the latency law, for a card whose sustained rates were measured: points
/// (N, factor) written "128:1.0,256:1.294", linear in N between points, the end points' factors
/// beyond them; no points: 1 everywhere.
class NFactors {
 public:
  /// Throws std::invalid_argument, with a message for the user, on a malformed list.
  explicit NFactors(const std::string& text);
  double at(double n) const;

 private:
  std::vector<std::pair<double, double>> points_;  ///< (N, factor), N increasing
};

/// The pipeline's rate beside FP32 work. With a fraction `load` of the SM's FP32 pipe (its
/// register-file bandwidth) in use, the WGMMA runs at min(1, 1 - (load - onset) / share) of its
/// rate (at least 0): at its full rate up to `onset`, slower by 1 / share for each unit of load
/// past it. A negative onset stands for 1 - share: a WGMMA at its full rate holds `share` of the
/// pipe and the FP32 work is served first. The load is the sum of the WarpGroups' announced
/// fractions, each until its own end, at most 1.
class Fp32Coupling {
 public:
  Fp32Coupling(double share, double onset) : share_(share), onset_(onset) {}
  bool on() const { return share_ > 0; }
  /// WarpGroup `slot`'s fraction of the FP32 pipe from now until `until`.
  void set(std::uint32_t slot, double fraction, Cycle until);
  /// The pipeline's rate at `t` and the first cycle after `t` at which it may change (kNever:
  /// not before a new announcement).
  double rate(double t, Cycle& next_change) const;

 private:
  struct Load {
    double fraction = 0;
    Cycle until = 0;
  };
  double share_;
  double onset_;
  std::vector<Load> loads_;  ///< by WarpGroup slot
};

class WgmmaHalfN final : public TensorCoreEngine, private EventTarget {
 public:
  explicit WgmmaHalfN(const BuildContext& context);
  static void describe(Schema& schema);

  void connect(TensorCoreClient& client) override;
  /// False while the buffer is full or `issue_interval` has not elapsed since the last issue; a
  /// refusal is answered by one on_wgmma_slot_free when issuing becomes possible again.
  bool can_accept(Cycle now) const override;
  void issue(Cycle now, const WgmmaOp& op) override;
  void fp32_load(Cycle now, std::uint32_t slot, double fraction, Cycle until) override;
  Cycle busy_until(Cycle now) const override;
  std::uint64_t busy_cycles() const override { return busy_cycles_.value(); }
  void finish(Cycle end) override;

 private:
  enum Event : std::uint64_t {
    kComplete,   ///< the oldest buffered WGMMA completes
    kIssuePort,  ///< `issue_interval` elapsed since the last issue
    kCheck,      ///< coupled: a buffered WGMMA may complete (payload: kCheck + 4 x its serial)
  };
  static constexpr std::uint64_t kEventKinds = 4;

  /// A buffered WGMMA. Timed at issue (neither coupled nor round_robin), only `token` is used: its
  /// completion was scheduled then; otherwise the fields marked "coupled" serve it as time passes.
  struct Buffered {
    std::uint64_t token = 0;
    std::uint64_t serial = 0;  ///< issue order on this engine
    Cycle law = 0;             ///< its law cycles
    double left = 0;           ///< coupled: law cycles not yet served
    double served_for = 0;     ///< coupled: time the pipeline spent on it so far
    Cycle finish = kNever;     ///< coupled: the cycle its occupancy ended
    Cycle check_at = 0;        ///< coupled: its pending kCheck event (none later than completion)
    std::uint32_t warpgroup = 0;  ///< the issuing WarpGroup (round_robin's turns)
  };

  void on_event(Cycle now, std::uint64_t payload) override;
  bool accepts(Cycle now) const;
  void notify_if_refused(Cycle now);

  /// round_robin: moves the WGMMA just pushed ahead of the unstarted ones of later turns, so the
  /// pipeline takes the WarpGroups' WGMMAs in turn, each WarpGroup's in its own order.
  void place_in_turn();

  // Served as time passes (FP32 coupling or round_robin), not timed at issue.
  /// Serves the buffered WGMMAs in order up to `now`; a WGMMA whose occupancy ends is finished.
  void serve_until(Cycle now);
  /// Each unfinished WGMMA's completion if the FP32 load said so far stays as it is; checks are
  /// scheduled for those that would complete before their pending check.
  void schedule_checks();
  /// When a WGMMA with `left` law cycles to serve from `t` finishes; `t` moves to that time.
  Cycle predicted_finish(double left, double& t) const;
  void on_check(Cycle now, std::uint64_t serial);

  EventQueue& events_;
  WgmmaLatencyModel model_;
  double k_eff_;
  NFactors n_factors_;
  std::uint32_t buffer_depth_;
  Cycle issue_interval_;
  Cycle completion_latency_;
  Fp32Coupling coupling_;
  bool round_robin_;
  /// The buffer's WGMMAs are served one after another as time passes (coupled or round_robin),
  /// not timed at their issue.
  bool served_as_time_passes_;
  TensorCoreClient* client_ = nullptr;

  /// The buffered WGMMAs in the order the pipeline serves them: their issue order, or with
  /// round_robin the WarpGroups' in turn. They complete in that order (in-order pipeline, one
  /// fixed completion latency), so each completion pops the front.
  RingQueue<Buffered> buffer_;
  std::uint64_t next_serial_ = 0;
  std::vector<std::uint32_t> turns_;  ///< place_in_turn's count by WarpGroup, reused
  double served_to_ = 0;     ///< coupled: the pipeline's state is known up to this time
  /// Coupled: the latest end of the buffered WGMMAs' occupancy as the last schedule_checks() or
  /// busy_until() predicted it (kNever: not known since the state last changed). The SM asks
  /// busy_until() right after each issue, whose schedule_checks() has just made the very same
  /// predictions; repeating them was a twentieth of a memory.ideal GEMM's instructions on
  /// h200.toml (docs/performance.md §12).
  mutable Cycle known_end_ = kNever;
  Cycle pipeline_free_ = 0;  ///< when the pipeline finishes the last accepted WGMMA
  Cycle next_issue_ = 0;     ///< earliest cycle of the next accepted issue
  /// can_accept said no since the last on_wgmma_slot_free: the client waits for a call.
  mutable bool refused_ = false;

  Counter& issued_;
  Counter& busy_cycles_;
  Counter& flops_;
  Counter& fp32_delay_cycles_;
};

}  // namespace simfa::engines
