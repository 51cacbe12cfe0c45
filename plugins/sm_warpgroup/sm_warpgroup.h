// sm.warpgroup: one Hopper SM modelled at WarpGroup granularity (DESIGN.md §3, the paper's
// section IV-B). It admits CTAs against the SM's limits, issues at most one instruction per cycle
// from the WarpGroup its scheduler policy picks, hands TMA and WGMMA work to its engines, and
// keeps the SM-side state of the asynchronous protocols: mbarrier transaction bytes and phases
// per stage, ring-slot fills and releases, named barriers, WGMMA commit groups. The exact timing
// semantics are docs/core-model.md.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "program_text.h"
#include "simfa/component.h"
#include "simfa/core.h"
#include "simfa/params.h"
#include "simfa/stats.h"
#include "wait_list.h"
#include "wgmma_groups.h"

namespace simfa::sm_warpgroup {

class WarpGroupSm final : public SmCore,
                          private TmaClient,
                          private TensorCoreClient,
                          private EngineClient {
 public:
  static void describe(Schema& schema);
  explicit WarpGroupSm(const BuildContext& context);

  void connect(const SmWiring& wiring) override;
  bool can_accept(const CtaProgram& program) const override;
  bool fits_empty(const CtaProgram& program, std::string& why) const override;
  void accept(Cycle now, std::unique_ptr<CtaProgram> program) override;
  void step(Cycle now) override;
  std::size_t resident_ctas() const override { return resident_ctas_; }
  void report_blocked(std::vector<BlockedThread>& out) const override;
  /// The tensor core's busy cycles (a pipeline track), the TMA engine's, its bytes in flight,
  /// then each plugin engine's busy cycles where it keeps them (named after its kind).
  void meters(std::vector<SmMeter>& out) const override;
  SmWork work() const override { return {issued_.value(), tma_->line_requests()}; }
  void finish(Cycle end) override;

 private:
  /// What a blocked WarpGroup waits for; indexes the stall counters.
  enum Wait : std::uint8_t {
    kMbWait,
    kAcquireStage,
    kWgmmaWait,
    kBarrier,
    kTensorCoreFull,
    kWaitCount,
    /// Refused by a plugin's engine (InstructionEngine::ready); counted where one is wired.
    kEngineWait = kWaitCount,
    kNotWaiting,
  };

  /// One ring-buffer slot with its two mbarriers.
  struct Stage {
    std::uint64_t pending_bytes = 0;  ///< transaction bytes issued to the full barrier, not landed
    std::uint32_t full_phases = 0;    ///< completed phases of the full barrier (data landed)
    std::uint32_t fills = 0;          ///< ACQUIRE_STAGEs that passed
    std::uint32_t empty_phases = 0;   ///< completed release rounds
    std::uint32_t releases = 0;       ///< RELEASE_STAGEs in the current round
    WaitList full_waiters;            ///< MB_WAIT; key: full_phases needed
    WaitList empty_waiters;           ///< ACQUIRE_STAGE; key: empty_phases needed
    // Timeline only: when the stage's bytes began to fly, and the WarpGroup that sent them.
    Cycle flight_since = 0;
    std::uint32_t flight_warpgroup = 0;
  };

  struct Barrier {
    std::uint32_t participants = 2;
    std::uint32_t arrivals = 0;
    std::uint32_t generation = 0;  ///< completed rounds
    WaitList waiters;              ///< BAR_WAIT; key: the generation that releases them
  };

  struct Cta {
    std::unique_ptr<CtaProgram> program;  ///< null: the slot is free
    std::uint64_t serial = 0;             ///< admissions on this SM before it: names stale tokens
    std::uint32_t live_warpgroups = 0;
    std::int64_t smem_bytes = 0;
    std::int64_t registers = 0;
    std::vector<Stage> stages;
    std::array<Barrier, kNamedBarriers> barriers;
    std::uint32_t pending_stores = 0;  ///< TMA stores issued, not complete (exit_waits_for_stores)
    Cycle draining_since = 0;          ///< its last EXIT, while it waits for its stores
  };

  struct WarpGroup {
    const Instruction* code = nullptr;
    std::uint32_t pc = 0;
    std::uint32_t cta = 0;    ///< CTA slot
    std::uint32_t index = 0;  ///< position in its CTA's program
    std::uint64_t age = 0;    ///< admission order on this SM
    Cycle ready_at = 0;       ///< earliest issue cycle while runnable
    Wait wait = kNotWaiting;
    bool woken = false;       ///< its next instruction was blocked and has been woken
    Cycle blocked_since = 0;  ///< first cycle counted as stalled
    std::uint32_t wait_pc = 0;
    std::vector<std::uint32_t> mb_waits;  ///< MB_WAITs passed, per stage
    WgmmaGroups groups;
    // Timeline only: WGMMAs issued and not complete, and since when some have been.
    std::uint32_t wgmma_in_flight = 0;
    Cycle wgmma_since = 0;
    Cycle bubble_since = kNever;  ///< timeline: the BUBBLE whose span is not drawn yet
  };

  /// A compute BUBBLE's work on a fair pipe: pipe cycles left at the whole pipe's rate, and when
  /// it ends if no other BUBBLE joins.
  struct PipeShare {
    std::uint32_t slot = 0;
    double remaining = 0;
    Cycle finish = 0;
  };
  static constexpr double kShareEpsilon = 1e-6;

  /// The fraction of the FP32 pipe a WarpGroup's compute BUBBLE holds, its FP32 cycles spread
  /// over the BUBBLE, until the BUBBLE ends: what the tensor core is told (fp32_load).
  struct Fp32Load {
    double fraction = 0;
    Cycle until = 0;
  };

  // TmaClient / TensorCoreClient: the engines' completions.
  void on_tma_complete(Cycle now, std::uint64_t token, std::uint32_t bytes) override;
  void on_wgmma_complete(Cycle now, std::uint64_t token) override;
  void on_wgmma_slot_free(Cycle now) override;
  // EngineClient: a plugin engine's state changed, or it has an op's work in flight.
  void on_engine_wake(Cycle now) override;
  void on_engine_flight(const EngineOp& op, Cycle begin, Cycle end) override;
  /// The plugin engine that runs `op`, or null (an instruction of the SM, its TMA or tensor core).
  InstructionEngine* engine_of(Opcode op) const {
    const auto i = static_cast<std::size_t>(op);
    return i < engine_of_op_.size() ? engine_of_op_[i] : nullptr;
  }
  EngineOp engine_op(std::uint32_t slot, const Instruction& in) const;

  /// Whether `slot`'s next instruction can issue at `now`; if it cannot, blocks it.
  bool ready_to_issue(std::uint32_t slot, Cycle now);
  void issue(std::uint32_t slot, Cycle now);
  void issue_tma(WarpGroup& w, const Instruction& in, Cycle now);
  /// One arrival on a named barrier; true when it completed the barrier's round.
  bool arrive(Cta& cta, std::uint32_t id, Cycle now);
  void release(Cta& cta, Stage& stage, Cycle now);
  void exit(std::uint32_t slot, Cycle now);
  /// Frees the CTA's slots, shared memory and registers; the host hears of it after the step.
  void retire(std::uint32_t cta_slot, Cycle now);

  void block(std::uint32_t slot, Wait wait, Cycle since, WaitList& list, std::uint64_t key);
  void wake(std::uint32_t slot, Cycle now);
  /// Wakes every waiter of `list` whose key is at most `value`.
  void wake_up_to(WaitList& list, std::uint64_t value, Cycle now);
  void request(Cycle at);
  std::string waiting_for(const WarpGroup& w) const;
  /// The timeline name of `w`'s wait: its blocked instruction's (the instruction table's).
  const char* wait_span(const WarpGroup& w) const;
  /// The timeline name of a stage's TMA bytes in flight (TMA_LOAD's flight in the table).
  const char* stage_flight_span() const;
  void span(const WarpGroup& w, const char* name, Cycle begin, Cycle end) const;
  /// When `slot`'s compute BUBBLE issued at `now` ends: each pipe serves its elements after the
  /// work issued before it (fifo) or beside it in equal shares (fair, which may lengthen the
  /// other WarpGroups' BUBBLEs), and the WarpGroup is busy for at least `latency`.
  Cycle compute_end(std::uint32_t slot, const ComputeWork& work, Cycle latency, Cycle now);
  /// Serves pipe `p`'s fair shares up to `now`, dropping the BUBBLEs that are done.
  void advance_pipe(int p, Cycle now);
  /// Each share's finish cycle if no other BUBBLE joins pipe `p`.
  void share_finish_times(int p);
  /// Lengthens the BUBBLEs of the WarpGroups (but `except`) whose work on pipe `p` now finishes
  /// later.
  void stretch_shares(int p, std::uint32_t except, Cycle now);
  /// The tensor core is busy until `busy_until`: the fair pipes that slow beside it serve their
  /// BUBBLEs at their reduced rate until then.
  void slow_pipes_until(Cycle busy_until, Cycle now);
  /// `slot`'s BUBBLE now ends later: its FP32 cycles left spread over the longer rest.
  void stretch_fp32_load(std::uint32_t slot, Cycle now);
  void close_bubble(WarpGroup& w);

  const InstructionSet* const instructions_;  ///< what the opcodes of its programs mean
  const int sm_;
  const int max_ctas_;
  const std::uint32_t max_warpgroups_;
  const std::int64_t smem_per_sm_;
  const std::int64_t regs_per_sm_;
  const bool fair_pipes_;             ///< pipe_sharing = "fair"
  const bool exit_waits_for_stores_;  ///< a CTA retires when its TMA stores have completed
  const Cycle tma_issue_hold_;        ///< a TMA_LOAD's hold on its WarpGroup (tma_issue_hold)
  const Cycle tma_issue_interval_;    ///< between TMA_LOADs back to back
  const Cycle mb_wait_cycles_;        ///< an MB_WAIT's issue once its phase has completed
  const Cycle cta_launch_cycles_;     ///< a retired CTA's slot to its successor's first issue

  // Its engines: the components of its sub-slots.
  WarpSchedulerPolicy* const scheduler_;
  TmaEngine* const tma_;
  TensorCoreEngine* const tensor_core_;
  // The engines of plugins' instructions wired into it ([sm.<kind>]): by opcode, and their kinds.
  std::vector<InstructionEngine*> engine_of_op_;
  std::vector<InstructionEngine*> engines_;
  std::vector<std::string> engine_kinds_;

  /// The shared compute pipes: elements per SM cycle, and the cycle each is free from.
  enum Pipe { kFp32, kAlu, kSfu, kDispatch, kPipeCount };
  std::array<double, kPipeCount> lanes_{};
  std::array<double, kPipeCount> beside_rate_{};  ///< beside a running tensor core
  bool slows_beside_wgmma_ = false;               ///< some beside_rate_ is below 1
  Cycle slow_until_ = 0;  ///< fair: the slowed pipes run at beside_rate_ until then
  std::array<Cycle, kPipeCount> pipe_free_{};              ///< fifo
  std::array<std::vector<PipeShare>, kPipeCount> shares_;  ///< fair: the BUBBLEs on it
  std::array<Cycle, kPipeCount> pipe_clock_{};             ///< fair: served up to
  std::array<Counter*, kPipeCount> pipe_busy_{};
  std::vector<Fp32Load> fp32_loads_;  ///< by WarpGroup slot

  IssueClock* clock_ = nullptr;
  CtaHost* host_ = nullptr;
  const std::vector<TensorMap>* tensor_maps_ = nullptr;
  TimelineSink* timeline_ = nullptr;

  std::vector<Cta> ctas_;
  std::vector<WarpGroup> warpgroups_;
  /// WarpGroup slots held by a resident CTA (an exited WarpGroup's too, until its CTA retires).
  std::uint64_t resident_mask_ = 0;
  std::uint64_t runnable_mask_ = 0;  ///< resident, not exited, not blocked
  std::size_t resident_ctas_ = 0;
  std::uint32_t used_warpgroups_ = 0;
  std::int64_t used_smem_ = 0;
  std::int64_t used_regs_ = 0;
  std::uint64_t next_cta_serial_ = 0;
  std::uint64_t next_age_ = 0;

  WaitList wgmma_waiters_;        ///< WGMMA_WAIT; key: groups allowed outstanding
  WaitList tensor_core_waiters_;  ///< WGMMA refused by a full buffer
  WaitList engine_waiters_;       ///< instructions a plugin's engine refused
  std::vector<IssueCandidate> candidates_;

  Cycle last_step_ = kNever;  ///< the issue phase that ran last
  Cycle requested_ = kNever;  ///< earliest issue cycle asked of the clock and not yet stepped
  bool in_step_ = false;
  bool cta_retired_ = false;  ///< tell the host once the step is over
  bool retired_any_ = false;  ///< a CTA has retired: later ones pay cta_launch_cycles
  Cycle active_since_ = 0;    ///< first uncounted cycle of the current resident stretch
  Cycle active_until_ = 0;    ///< end of the last counted stretch

  Counter& issued_;
  std::vector<Counter*> issued_by_op_;  ///< by opcode
  std::array<Counter*, kWaitCount + 1> stall_{};  ///< stall.engine: bound where an engine is
  Counter& bubble_cycles_;
  Counter& ctas_completed_;
  Counter& active_cycles_;
  Counter& issue_idle_cycles_;
  Counter& tma_completed_bytes_;
  Counter& store_drain_cycles_;
};

}  // namespace simfa::sm_warpgroup
