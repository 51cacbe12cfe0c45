// Slot interfaces of the SM core model (DESIGN.md §3): the SM, the engines it declares as its
// sub-slots (warp-scheduler policy, TMA and tensor-core engines), and the GPU-wide CTA dispatch
// policy. The kernel builds the SM with its engines; the services it provides to them (issue
// clock, CTA host, timeline) are here too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "simfa/component.h"
#include "simfa/instruction_set.h"
#include "simfa/isa.h"
#include "simfa/memory.h"
#include "simfa/program.h"
#include "simfa/tensor_map.h"

namespace simfa {

// ---- services the kernel provides -------------------------------------------------------------

/// Orders SM issue phases: an SM asks to issue at a cycle; the kernel calls SmCore::step for
/// every requesting SM in SM-index order after all other events of that cycle. A request for a
/// cycle whose issue phase already ran is moved to the next cycle.
class SIMFA_API IssueClock {
 public:
  virtual void request_issue(int sm, Cycle at) = 0;

 protected:
  ~IssueClock() = default;
};

/// Told when a CTA has retired, so the dispatcher can place the next one.
class SIMFA_API CtaHost {
 public:
  virtual void on_cta_exit(int sm, Cycle now) = 0;

 protected:
  ~CtaHost() = default;
};

/// Receives timeline spans (Chrome trace "X" events). `name` must be a string literal.
class SIMFA_API TimelineSink {
 public:
  virtual void span(int sm, std::uint64_t cta, int warpgroup, const char* name, Cycle begin,
                    Cycle end) = 0;

 protected:
  ~TimelineSink() = default;
};

/// One blocked WarpGroup, for the deadlock / watchdog report.
struct BlockedThread {
  int sm = 0;
  std::uint64_t cta = 0;
  int warpgroup = 0;
  std::size_t pc = 0;
  std::string instruction;  ///< e.g. "MB_WAIT 1"
  std::string waiting_for;  ///< e.g. "stage 1 full phase 3 (completed 2)"
};

// ---- engines -----------------------------------------------------------------------------------

/// One TMA operation as the SM hands it to its engine.
struct TmaOp {
  Opcode op = Opcode::kTmaLoad;  ///< kTmaLoad, kTmaBulk or kTmaStore
  const TensorMap* map = nullptr;  ///< null for kTmaBulk
  std::int32_t coords[kMaxTensorRank] = {};
  Addr addr = 0;                 ///< kTmaBulk only
  std::uint32_t bytes = 0;       ///< bytes the op delivers (box bytes, or the bulk size)
  std::uint64_t token = 0;       ///< the SM's: returned on completion
};

class SIMFA_API TmaClient {
 public:
  /// `op` finished: all its data landed in shared memory (loads) or left it (stores).
  virtual void on_tma_complete(Cycle now, std::uint64_t token, std::uint32_t bytes) = 0;

 protected:
  ~TmaClient() = default;
};

/// Kind "tma". Accepts every op; queues internally.
class SIMFA_API TmaEngine : public Component {
 public:
  virtual void connect(MemoryPort& memory, TmaClient& client) = 0;
  virtual void issue(Cycle now, const TmaOp& op) = 0;
  /// Cycles so far during which the engine had an op in flight (its own statistic's value).
  virtual std::uint64_t busy_cycles() const = 0;
  /// Bytes of the ops issued to it so far (TmaOp::bytes, counted at issue).
  virtual std::uint64_t issued_bytes() const = 0;
  /// Line requests it sent to the memory so far (0 for an engine that sends none, as tma.fixed).
  virtual std::uint64_t line_requests() const = 0;
};

struct WgmmaOp {
  std::uint32_t m = 64, n = 0, k = 16;
  std::uint64_t token = 0;
  /// The issuing WarpGroup's slot on its SM (as in TensorCoreEngine::fp32_load): an engine that
  /// serves WarpGroups in turn tells their WGMMAs apart by it.
  std::uint32_t warpgroup = 0;
};

class SIMFA_API TensorCoreClient {
 public:
  virtual void on_wgmma_complete(Cycle now, std::uint64_t token) = 0;
  /// A full instruction buffer has room again.
  virtual void on_wgmma_slot_free(Cycle now) = 0;

 protected:
  ~TensorCoreClient() = default;
};

/// Kind "wgmma": one tensor-core pipeline per SM with an instruction buffer.
class SIMFA_API TensorCoreEngine : public Component {
 public:
  virtual void connect(TensorCoreClient& client) = 0;
  virtual bool can_accept(Cycle now) const = 0;
  virtual void issue(Cycle now, const WgmmaOp& op) = 0;
  /// The SM's FP32 pipe: WarpGroup `slot`'s compute work holds `fraction` (0 to 1) of it from
  /// `now` until `until`, replacing what was said of `slot` before. A tensor core that shares
  /// the register file with that pipe may slow down beside it (docs/core-model.md); one that
  /// does not ignores this.
  virtual void fp32_load(Cycle now, std::uint32_t slot, double fraction, Cycle until) {
    (void)now, (void)slot, (void)fraction, (void)until;
  }
  /// The cycle at which the pipeline will have executed the WGMMAs issued so far, at the rates
  /// known now (`now` when it is idle). The SM's pipes may run slower while it is busy.
  virtual Cycle busy_until(Cycle now) const { return now; }
  /// Cycles of pipeline work so far, counted when a WGMMA issues (final after finish()).
  virtual std::uint64_t busy_cycles() const = 0;
};

/// One instruction of a plugin's engine kind (InstructionSpec::engine, e.g. "umma") as the SM
/// hands it to the engine of that kind in its sub-slot [sm.<kind>].
struct EngineOp {
  const Instruction* instruction = nullptr;
  const CtaProgram* program = nullptr;  ///< its CTA's program: the operand pools
  std::uint32_t warpgroup = 0;          ///< the issuing WarpGroup's slot on this SM
  std::uint64_t age = 0;                ///< that WarpGroup's admission order on this SM
};

class SIMFA_API EngineClient {
 public:
  /// The engine's state changed: the WarpGroups it refused (InstructionEngine::ready) ask again.
  virtual void on_engine_wake(Cycle now) = 0;
  /// `op`'s work is in flight on the engine from `begin` to `end` (e.g. from its issue to its
  /// result): the SM draws the flight span its instruction declares (InstructionSpec::flight) on
  /// its WarpGroup's row of the timeline, where that SM is traced. Call it from issue(), while
  /// `op` is valid; `end` may lie ahead.
  virtual void on_engine_flight(const EngineOp& op, Cycle begin, Cycle end) = 0;

 protected:
  ~EngineClient() = default;
};

/// An engine a plugin adds for its own instructions, of the kind those instructions name. The
/// engine owns their meaning: when one may issue (a full buffer, a wait for its groups), what
/// issuing it does, and when its WarpGroup may go on; the SM schedules, blocks and wakes.
class SIMFA_API InstructionEngine : public Component {
 public:
  virtual void connect(EngineClient& client) = 0;
  /// Whether `op` may issue at `now`. When it may not, the SM blocks its WarpGroup until the
  /// engine calls EngineClient::on_engine_wake, and then asks again.
  virtual bool ready(Cycle now, const EngineOp& op) = 0;
  /// Issues `op`; returns the first cycle (> now) its WarpGroup may issue again.
  virtual Cycle issue(Cycle now, const EngineOp& op) = 0;
  /// Cycles the engine was busy so far, if it keeps such a count: the run summary then shows
  /// "<kind> busy" (SmCore::meters).
  virtual std::optional<std::uint64_t> busy_cycles() const { return std::nullopt; }
};

// ---- policies ----------------------------------------------------------------------------------

/// A WarpGroup able to issue this cycle. `age` is its dispatch order (smaller is older).
struct IssueCandidate {
  std::uint32_t slot;
  std::uint64_t age;
};

/// Kind "scheduler": picks which ready WarpGroup issues (one call per issued instruction).
class SIMFA_API WarpSchedulerPolicy : public Component {
 public:
  /// `ready` is non-empty and in slot order; returns an index into it.
  virtual std::size_t pick(std::span<const IssueCandidate> ready) = 0;
};

/// Kind "dispatch": picks the SM for the next CTA.
class SIMFA_API CtaDispatchPolicy : public Component {
 public:
  /// `candidates` are the SMs able to take the CTA, in index order (non-empty); returns an index
  /// into it.
  virtual std::size_t choose(std::span<const int> candidates, std::uint64_t cta_index) = 0;
};

// ---- the SM ------------------------------------------------------------------------------------

/// The kernel's services to an SM. The SM is a composite: its engines (warp scheduler, TMA,
/// tensor core, any engine a new architecture adds) are sub-slots its plugin declares in its
/// schema (Schema::slot, and Schema::engine_slots for the engines of plugins' instructions),
/// which the kernel builds first, each at path "sm[i].<slot>", and hands to the SM's factory in
/// BuildContext::slots (slot_as). In connect() the SM connects its engines to itself as their
/// client, and its TMA engine to `memory`.
struct SmWiring {
  IssueClock& clock;
  CtaHost& host;
  const std::vector<TensorMap>& tensor_maps;
  TimelineSink* timeline;  ///< null when this SM is not traced
  MemoryPort& memory;
};

/// A measure of an SM's engines that the kernel's reports show (SmCore::meters): the run
/// summary and the timeline's counter tracks read an SM's engines through these, never through
/// the engines' statistics by name. Values are cumulative: read between events while the run
/// goes, and after finish() for its totals.
struct SmMeter {
  enum class Kind : std::uint8_t {
    /// `value`: cycles an engine was busy. The summary prints "<name> busy" with its share of
    /// the run's cycles on every SM.
    kBusy,
    /// kBusy of an engine with one in-order pipeline that counts an instruction's cycles when
    /// it issues it; also a counter track "SM s <name> busy" (%) per traced SM.
    kPipelineBusy,
    /// `value - less`: an amount held, e.g. bytes issued less bytes completed: the counter
    /// tracks "SM s <name>" per traced SM and "<name> (all SMs)", in `unit`.
    kLevel,
    /// `value`: WarpGroup-cycles the SM's threads were blocked waiting for `name` ("mb_wait",
    /// "barrier"): the summary's stall line, summed over the SMs.
    kStall,
  };
  const char* name;  ///< "tensor core", "TMA bytes in flight", "mb_wait"; valid until the next call
  Kind kind;
  std::uint64_t value;
  std::uint64_t less = 0;  ///< kLevel
  const char* unit = "";   ///< kLevel: "bytes"
};

/// What an SM has done so far, in the units the simulator's speed is measured in (DESIGN.md
/// §11: instructions and line requests per wall second; benches/simulation_bench.cpp).
struct SmWork {
  std::uint64_t instructions = 0;   ///< instructions its WarpGroups issued
  std::uint64_t line_requests = 0;  ///< line requests its engines sent to the memory
};

/// Kind "sm": one streaming multiprocessor.
class SIMFA_API SmCore : public Component {
 public:
  virtual void connect(const SmWiring& wiring) = 0;
  /// Whether the CTA's resources (CTA slot, WarpGroup slots, shared memory, registers) fit now.
  virtual bool can_accept(const CtaProgram& program) const = 0;
  /// Whether the CTA could ever fit on an empty SM (else the workload is invalid).
  virtual bool fits_empty(const CtaProgram& program, std::string& why) const = 0;
  virtual void accept(Cycle now, std::unique_ptr<CtaProgram> program) = 0;
  /// The issue phase of cycle `now`: issue at most one instruction.
  virtual void step(Cycle now) = 0;
  /// Resident CTAs.
  virtual std::size_t resident_ctas() const = 0;
  virtual void report_blocked(std::vector<BlockedThread>& out) const = 0;
  /// Appends the SM's meters, in the order the reports show them, the same list on every SM and
  /// at every call (none by default).
  virtual void meters(std::vector<SmMeter>& out) const { (void)out; }
  /// The SM's work so far (none by default).
  virtual SmWork work() const { return {}; }
};

}  // namespace simfa
