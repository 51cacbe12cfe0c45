// sm.warpgroup: CTA admission, the issue unit, and the SM side of the TMA / WGMMA / barrier
// protocols. Timing semantics: docs/core-model.md (each rule there is implemented here once).
#include "sm_warpgroup.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <optional>

#include "simfa/error.h"

namespace simfa::sm_warpgroup {

namespace {

// What each Wait waits for: its statistic "stall.<name>" and its SmMeter.
constexpr const char* kWaitName[] = {"mb_wait", "acquire_stage",    "wgmma_wait",
                                     "barrier", "tensor_core_full", "engine"};
constexpr const char* kWaitStatDoc[] = {
    "WarpGroup-cycles blocked in MB_WAIT (stage data not landed)",
    "WarpGroup-cycles blocked in ACQUIRE_STAGE (ring slot not released)",
    "WarpGroup-cycles blocked in WGMMA_WAIT (too many unfinished groups)",
    "WarpGroup-cycles blocked in BAR_WAIT (named barrier incomplete)",
    "WarpGroup-cycles blocked on a WGMMA the full tensor-core buffer refused"};

// "issued.tma_load" for TMA_LOAD.
std::string issued_stat(const InstructionSpec& spec) {
  std::string name = spec.name;
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return "issued." + name;
}

// TMA token: the stage and the CTA slot, with the CTA's admission serial so a completion that
// outlives its CTA (a store nobody waited for) is recognised and dropped.
//   bits 0-7 stage | bit 8 completes on the stage's mbarrier | bits 16-31 CTA slot |
//   bits 32-63 CTA serial (low 32 bits)
constexpr std::uint64_t kTmaMbarrier = 1u << 8;
std::uint64_t tma_token(std::uint32_t stage, bool mbarrier, std::uint32_t cta_slot,
                        std::uint64_t serial) {
  return stage | (mbarrier ? kTmaMbarrier : 0) | (std::uint64_t{cta_slot} << 16) | (serial << 32);
}

// WGMMA token: the WarpGroup slot, the low bits of the WarpGroup's age (to drop completions for
// a WarpGroup that left the slot) and its group's number.
//   bits 0-31 group | bits 32-47 age (low 16 bits) | bits 48-63 WarpGroup slot
std::uint64_t wgmma_token(std::uint32_t slot, std::uint64_t age, std::uint32_t group) {
  return group | ((age & 0xffff) << 32) | (std::uint64_t{slot} << 48);
}

// The runnable mask is 64 bits wide; Hopper holds 64 warps = 16 WarpGroups per SM.
constexpr int kMaxWarpGroupSlots = 64;
// CTA slots are 16 bits in TMA tokens.
constexpr int kMaxCtaSlots = 65535;

int checked_limit(int value, int max, const char* key) {
  if (value < 1 || value > max)
    throw InputError("[gpu] " + std::string(key) + " = " + std::to_string(value) +
                     ": sm.warpgroup supports 1 to " + std::to_string(max));
  return value;
}

}  // namespace

// The pipes of compute BUBBLEs: parameter, stat and default lanes. The defaults are compute
// capability 9.0's per-SM throughputs (CUDA C++ Programming Guide, arithmetic instructions),
// which the H200 measured (validation/h200/attention/softmax_micro.csv: FMUL/FADD/FFMA 122-127
// elements a cycle, FSETP+FSEL 62-64, MUFU.EX2 15.4-15.9, one or two WarpGroups per SM).
struct PipeSpec {
  const char* lanes_key;
  const char* busy_stat;
  double lanes;
  const char* doc;
  const char* beside_key;  ///< its rate beside a running tensor core (nullptr: none)
};
constexpr PipeSpec kPipes[] = {
    {"fp32_lanes", "fp32_pipe_busy_cycles", 128, "FP32 add, multiply and FMA",
     "fp32_rate_beside_wgmma"},
    {"alu_lanes", "alu_pipe_busy_cycles", 64,
     "compares, selects, min/max, integer and logic, conversions", "alu_rate_beside_wgmma"},
    {"sfu_lanes", "sfu_pipe_busy_cycles", 16, "transcendentals (MUFU: ex2, lg2, rcp, rsqrt, sin)",
     "sfu_rate_beside_wgmma"},
    // Every element of any pipe is also dispatched: one warp instruction per sub-partition a
    // cycle, 4 x 32 thread operations (docs/core-model.md).
    {"dispatch_lanes", "dispatch_busy_cycles", 128, "instruction dispatch (every element)",
     nullptr}};

// A pipe runs at `rate` of its throughput until `slow_until` (the tensor core's busy end) and at
// its full rate after: the work it serves from `t0` to `t1`, and when work `w` started at `t0`
// is done. With rate 1 both are the plain difference and sum.
double work_between(double t0, double t1, double rate, double slow_until) {
  if (rate >= 1 || t0 >= slow_until) return t1 - t0;
  if (t1 <= slow_until) return rate * (t1 - t0);
  return rate * (slow_until - t0) + (t1 - slow_until);
}
double time_after(double t0, double w, double rate, double slow_until) {
  if (rate >= 1 || t0 >= slow_until) return t0 + w;
  const double slow = rate * (slow_until - t0);
  if (w <= slow) return t0 + w / rate;
  return slow_until + (w - slow);
}

void WarpGroupSm::describe(Schema& schema) {
  // The SM's engines, built by the kernel at sm[i].<slot> before the SM (DESIGN.md §3).
  schema.slot("scheduler", "scheduler",
              "the warp-scheduler policy: which ready WarpGroup issues each cycle");
  schema.slot("tma", "tma",
              "the TMA engine: TMA_LOAD, TMA_BULK and TMA_STORE, through the memory port");
  schema.slot("tensor_core", "wgmma",
              "the tensor-core engine: the WGMMA pipeline with its instruction buffer");
  schema.engine_slots(
      "the engine of a kind that a plugin's instructions name (InstructionSpec::engine), e.g. "
      "[sm.umma]: the SM hands each such instruction to it (simfa::InstructionEngine)");
  schema.string("pipe_sharing")
      .def("fifo")
      .choices({"fifo", "fair"})
      .doc(
          "how WarpGroups share a compute pipe: fifo serves each compute BUBBLE's elements after "
          "the work issued before it; fair shares the pipe equally among the BUBBLEs using it, "
          "as warps interleave their instructions, so BUBBLEs issued together end together "
          "(docs/core-model.md)");
  schema.integer("tma_issue_hold")
      .unit("SM cycles")
      .def(1)
      .range(1, 1e6)
      .doc(
          "cycles a TMA_LOAD holds its WarpGroup before an instruction that is not another "
          "TMA_LOAD may issue: the issuing thread waits for the TMA unit to take the copy "
          "(1: no hold)");
  schema.integer("tma_issue_interval")
      .unit("SM cycles")
      .def(1)
      .range(1, 1e6)
      .doc(
          "cycles between TMA_LOADs one WarpGroup issues back to back; n of them followed by "
          "another instruction hold it (n - 1) x tma_issue_interval + tma_issue_hold");
  schema.integer("mb_wait_cycles")
      .unit("SM cycles")
      .def(1)
      .range(1, 1e6)
      .doc(
          "cycles an MB_WAIT holds its WarpGroup once its phase has completed (a try-wait "
          "returning; 1: the issue cycle alone)");
  schema.integer("cta_launch_cycles")
      .unit("SM cycles")
      .def(0)
      .range(0, 1e6)
      .doc(
          "cycles from a CTA's retirement to the first instruction of the CTA that the SM takes "
          "in its place: the SM's CTA teardown and launch (the grid's first CTAs start at once; "
          "their launch is in gpu.launch_overhead_ns)");
  schema.boolean("exit_waits_for_stores")
      .def(false)
      .doc(
          "a CTA retires only once its TMA stores have completed, as kernels wait for their bulk "
          "stores before they exit (Triton's async_tma_store_wait, CUTLASS's tma_store_wait); "
          "false: it retires with its last EXIT and its stores finish on their own");
  for (const PipeSpec& p : kPipes) {
    schema.real(p.lanes_key)
        .def(p.lanes)
        .range(1, 1e6)
        .unit("elements/SM cycle")
        .doc(std::string("throughput of the SM's pipe for ") + p.doc +
             ", shared by its WarpGroups (compute BUBBLEs)");
    schema.stat(p.busy_stat, StatKind::kCounter, "cycles",
                std::string("cycles the SM's pipe for ") + p.doc + " is reserved");
    if (p.beside_key == nullptr) continue;
    schema.real(p.beside_key)
        .def(1.0)
        .range(0.01, 1)
        .unit("fraction of its throughput")
        .doc(std::string("rate of the SM's pipe for ") + p.doc +
             " while the tensor core executes WGMMAs of any WarpGroup (1: unaffected; "
             "docs/core-model.md)");
  }
  schema.stat("issued_instructions", StatKind::kCounter, "instructions", "instructions issued");
  // One counter per instruction of the run's table, Hopper's and the loaded plugins'.
  schema.stat("issued.<op>", StatKind::kCounter, "instructions",
              "instructions of one kind issued, its name in lower case (issued.tma_load, "
              "issued.wgmma, ...)");
  for (int w = 0; w < kWaitCount; ++w)
    schema.stat(std::string("stall.") + kWaitName[w], StatKind::kCounter, "cycles",
                kWaitStatDoc[w]);
  schema.stat(std::string("stall.") + kWaitName[kEngineWait], StatKind::kCounter, "cycles",
              "WarpGroup-cycles blocked on an instruction a plugin's engine refused (only where "
              "such an engine is wired in)");
  schema.stat("bubble_cycles", StatKind::kCounter, "cycles",
              "WarpGroup-cycles charged by BUBBLE instructions");
  schema.stat("ctas_completed", StatKind::kCounter, "CTAs", "CTAs retired on this SM");
  schema.stat("active_cycles", StatKind::kCounter, "cycles",
              "cycles with at least one resident CTA");
  schema.stat("issue_idle_cycles", StatKind::kCounter, "cycles",
              "cycles with a resident CTA in which nothing issued");
  // With the engine's tma.bytes (counted at issue) it gives the TMA bytes in flight over time.
  schema.stat("tma_completed_bytes", StatKind::kCounter, "bytes",
              "bytes of TMA operations the engine reported complete (loads landed, stores sent)");
  schema.stat(
      "store_drain_cycles", StatKind::kCounter, "cycles",
      "CTA-cycles from a CTA's last EXIT to the completion of its TMA stores, when it waits for "
      "them (exit_waits_for_stores)");
  schema.stat("issue_utilization", StatKind::kFormula, "instructions/cycle",
              "issued_instructions / active_cycles");
}

WarpGroupSm::WarpGroupSm(const BuildContext& context)
    : instructions_(context.instructions ? context.instructions : &InstructionSet::hopper()),
      sm_(context.sm_index),
      max_ctas_(checked_limit(context.gpu.max_ctas_per_sm, kMaxCtaSlots, "max_ctas_per_sm")),
      max_warpgroups_(static_cast<std::uint32_t>(checked_limit(
          context.gpu.max_warpgroups_per_sm, kMaxWarpGroupSlots, "max_warpgroups_per_sm"))),
      smem_per_sm_(context.gpu.smem_per_sm_bytes),
      regs_per_sm_(context.gpu.regs_per_sm),
      fair_pipes_(context.params.string("pipe_sharing") == "fair"),
      exit_waits_for_stores_(context.params.boolean("exit_waits_for_stores")),
      tma_issue_hold_(static_cast<Cycle>(context.params.integer("tma_issue_hold"))),
      tma_issue_interval_(static_cast<Cycle>(context.params.integer("tma_issue_interval"))),
      mb_wait_cycles_(static_cast<Cycle>(context.params.integer("mb_wait_cycles"))),
      cta_launch_cycles_(static_cast<Cycle>(context.params.integer("cta_launch_cycles"))),
      scheduler_(&slot_as<WarpSchedulerPolicy>(context, "scheduler")),
      tma_(&slot_as<TmaEngine>(context, "tma")),
      tensor_core_(&slot_as<TensorCoreEngine>(context, "tensor_core")),
      ctas_(static_cast<std::size_t>(max_ctas_)),
      warpgroups_(max_warpgroups_),
      issued_(context.stats.counter("issued_instructions")),
      bubble_cycles_(context.stats.counter("bubble_cycles")),
      ctas_completed_(context.stats.counter("ctas_completed")),
      active_cycles_(context.stats.counter("active_cycles")),
      issue_idle_cycles_(context.stats.counter("issue_idle_cycles")),
      tma_completed_bytes_(context.stats.counter("tma_completed_bytes")),
      store_drain_cycles_(context.stats.counter("store_drain_cycles")) {
  for (int p = 0; p < kPipeCount; ++p) {
    lanes_[p] = context.params.real(kPipes[p].lanes_key);
    beside_rate_[p] = kPipes[p].beside_key ? context.params.real(kPipes[p].beside_key) : 1.0;
    slows_beside_wgmma_ = slows_beside_wgmma_ || beside_rate_[p] < 1;
    pipe_busy_[p] = &context.stats.counter(kPipes[p].busy_stat);
  }
  for (const InstructionSpec& spec : instructions_->specs())
    issued_by_op_.push_back(&context.stats.counter(issued_stat(spec)));
  for (int w = 0; w < kWaitCount; ++w)
    stall_[w] = &context.stats.counter(std::string("stall.") + kWaitName[w]);
  // The engines of plugins' instructions that the manifest wires in ([sm.<kind>]). A kind named
  // like one of the SM's own slots is not one (the manifest loader offers no such engine slot).
  engine_of_op_.assign(instructions_->size(), nullptr);
  for (const InstructionSpec& spec : instructions_->specs()) {
    const std::string_view kind = spec.engine;
    if (kind == "sm" || kind == "tma" || kind == "wgmma" || kind == "scheduler" ||
        kind == "tensor_core" || !context.slots)
      continue;
    Component* found = context.slots->find(kind);
    if (!found) continue;
    auto* engine = static_cast<InstructionEngine*>(found);
    engine_of_op_[static_cast<std::size_t>(instructions_->opcode(spec))] = engine;
    if (std::find(engines_.begin(), engines_.end(), engine) == engines_.end()) {
      engines_.push_back(engine);
      engine_kinds_.emplace_back(kind);
    }
  }
  // Only where an engine is, so a Hopper run's statistics stay as they were.
  if (!engines_.empty())
    stall_[kEngineWait] = &context.stats.counter(std::string("stall.") + kWaitName[kEngineWait]);
  context.stats.formula("issue_utilization",
                        Formula{{"issued_instructions"}, {"active_cycles"}, 1.0});
  candidates_.reserve(max_warpgroups_);
  fp32_loads_.resize(max_warpgroups_);
}

void WarpGroupSm::connect(const SmWiring& wiring) {
  clock_ = &wiring.clock;
  host_ = &wiring.host;
  tensor_maps_ = &wiring.tensor_maps;
  timeline_ = wiring.timeline;
  tma_->connect(wiring.memory, *this);
  tensor_core_->connect(*this);
  for (InstructionEngine* engine : engines_) engine->connect(*this);
}

// ---- admission ---------------------------------------------------------------------------------

bool WarpGroupSm::can_accept(const CtaProgram& program) const {
  return resident_ctas_ < static_cast<std::size_t>(max_ctas_) &&
         used_warpgroups_ + program.warpgroups.size() <= max_warpgroups_ &&
         used_smem_ + program.smem_bytes <= smem_per_sm_ &&
         used_regs_ + registers_of(program) <= regs_per_sm_;
}

bool WarpGroupSm::fits_empty(const CtaProgram& program, std::string& why) const {
  std::vector<std::string> problems;
  if (std::string bad = check_program(program, *instructions_, tensor_maps_, engine_kinds_);
      !bad.empty())
    problems.push_back(std::move(bad));
  if (program.warpgroups.size() > max_warpgroups_)
    problems.push_back(
        std::to_string(program.warpgroups.size()) +
        " WarpGroups exceed gpu.max_warpgroups_per_sm = " + std::to_string(max_warpgroups_));
  if (program.smem_bytes > smem_per_sm_)
    problems.push_back(
        std::to_string(program.smem_bytes) +
        " bytes of shared memory exceed gpu.smem_per_sm = " + std::to_string(smem_per_sm_));
  if (const std::int64_t regs = registers_of(program); regs > regs_per_sm_)
    problems.push_back(std::to_string(regs) +
                       " registers exceed gpu.regs_per_sm = " + std::to_string(regs_per_sm_));
  why.clear();
  for (const std::string& p : problems) why += (why.empty() ? "" : "; ") + p;
  return problems.empty();
}

void WarpGroupSm::accept(Cycle now, std::unique_ptr<CtaProgram> program) {
  if (std::string bad = check_program(*program, *instructions_, tensor_maps_, engine_kinds_);
      !bad.empty())
    throw InputError(bad);
  if (!can_accept(*program)) throw Error("internal: accept() of a CTA that does not fit");

  std::uint32_t c = 0;
  while (ctas_[c].program) ++c;
  Cta& cta = ctas_[c];
  cta.serial = next_cta_serial_++;
  cta.live_warpgroups = static_cast<std::uint32_t>(program->warpgroups.size());
  cta.smem_bytes = program->smem_bytes;
  cta.registers = registers_of(*program);
  cta.stages.resize(program->stage_count);
  cta.pending_stores = 0;
  for (Stage& s : cta.stages) {
    s.pending_bytes = 0;
    s.full_phases = s.fills = s.empty_phases = s.releases = 0;
    s.full_waiters.clear();
    s.empty_waiters.clear();
  }
  for (std::uint32_t b = 0; b < kNamedBarriers; ++b) {
    Barrier& bar = cta.barriers[b];
    bar.participants = barrier_participants(*program, b);
    bar.arrivals = bar.generation = 0;
    bar.waiters.clear();
  }

  const Cycle start = now + (retired_any_ ? cta_launch_cycles_ : 0);
  std::uint32_t slot = 0;
  for (std::uint32_t i = 0; i < program->warpgroups.size(); ++i, ++slot) {
    while (resident_mask_ >> slot & 1) ++slot;
    WarpGroup& w = warpgroups_[slot];
    w.code = program->warpgroups[i].code.data();
    w.pc = 0;
    w.cta = c;
    w.index = i;
    w.age = next_age_++;
    w.ready_at = start;
    w.wait = kNotWaiting;
    w.woken = false;
    w.mb_waits.assign(program->stage_count, 0);
    w.groups.reset();
    w.wgmma_in_flight = 0;
    w.bubble_since = kNever;
    resident_mask_ |= std::uint64_t{1} << slot;
    runnable_mask_ |= std::uint64_t{1} << slot;
  }

  used_warpgroups_ += static_cast<std::uint32_t>(program->warpgroups.size());
  used_smem_ += cta.smem_bytes;
  used_regs_ += cta.registers;
  if (resident_ctas_++ == 0) active_since_ = std::max(now, active_until_);
  cta.program = std::move(program);
  request(now);
}

// ---- the issue phase ---------------------------------------------------------------------------

void WarpGroupSm::step(Cycle now) {
  // One issue phase per cycle, however often the clock calls.
  if (now == last_step_) return;
  last_step_ = now;
  if (requested_ <= now) requested_ = kNever;
  in_step_ = true;

  // Every runnable WarpGroup whose next instruction can issue now is a candidate; one that
  // cannot blocks here, before the policy sees it, and waits for its wake-up.
  candidates_.clear();
  for (std::uint64_t m = runnable_mask_; m != 0; m &= m - 1) {
    const auto slot = static_cast<std::uint32_t>(std::countr_zero(m));
    if (warpgroups_[slot].ready_at <= now && ready_to_issue(slot, now))
      candidates_.push_back({slot, warpgroups_[slot].age});
  }
  if (!candidates_.empty()) {
    const std::size_t pick = scheduler_->pick(candidates_);
    if (pick >= candidates_.size())
      throw Error("internal: the warp scheduler picked candidate " + std::to_string(pick) + " of " +
                  std::to_string(candidates_.size()));
    issue(candidates_[pick].slot, now);
  }

  // Ask for the earliest cycle at which a runnable WarpGroup may issue; blocked ones ask
  // through their wake-up.
  Cycle next = kNever;
  for (std::uint64_t m = runnable_mask_; m != 0; m &= m - 1)
    next = std::min(next, std::max(warpgroups_[std::countr_zero(m)].ready_at, now + 1));
  if (next != kNever) request(next);

  in_step_ = false;
  if (cta_retired_) {
    cta_retired_ = false;
    host_->on_cta_exit(sm_, now);
  }
}

bool WarpGroupSm::ready_to_issue(std::uint32_t slot, Cycle now) {
  WarpGroup& w = warpgroups_[slot];
  const Instruction& in = w.code[w.pc];
  Cta& cta = ctas_[w.cta];
  switch (in.op) {
    case Opcode::kAcquireStage: {
      Stage& s = cta.stages[in.stage];
      if (s.empty_phases >= s.fills) return true;
      block(slot, kAcquireStage, now, s.empty_waiters, s.fills);
      return false;
    }
    case Opcode::kMbWait: {
      Stage& s = cta.stages[in.stage];
      const std::uint32_t k = w.mb_waits[in.stage];
      if (s.full_phases > k) return true;
      block(slot, kMbWait, now, s.full_waiters, std::uint64_t{k} + 1);
      return false;
    }
    case Opcode::kWgmma:
      if (tensor_core_->can_accept(now)) return true;
      block(slot, kTensorCoreFull, now, tensor_core_waiters_, 0);
      return false;
    case Opcode::kWgmmaWait:
      w.groups.close();
      if (w.groups.unfinished_closed() <= in.x) return true;
      block(slot, kWgmmaWait, now, wgmma_waiters_, in.x);
      return false;
    default:
      if (InstructionEngine* engine = engine_of(in.op)) {
        if (engine->ready(now, engine_op(slot, in))) return true;
        block(slot, kEngineWait, now, engine_waiters_, 0);
        return false;
      }
      return true;
  }
}

EngineOp WarpGroupSm::engine_op(std::uint32_t slot, const Instruction& in) const {
  const WarpGroup& w = warpgroups_[slot];
  return EngineOp{&in, ctas_[w.cta].program.get(), slot, w.age};
}

void WarpGroupSm::issue(std::uint32_t slot, Cycle now) {
  WarpGroup& w = warpgroups_[slot];
  Cta& cta = ctas_[w.cta];
  const Instruction& in = w.code[w.pc];
  issued_.add();
  issued_by_op_[static_cast<std::size_t>(in.op)]->add();
  close_bubble(w);
  Cycle ready = now + 1;
  switch (in.op) {
    case Opcode::kTmaLoad:
    case Opcode::kTmaBulk:
    case Opcode::kTmaStore:
      issue_tma(w, in, now);
      if (in.op == Opcode::kTmaLoad)  // the program ends with EXIT: a next instruction exists
        ready =
            now + (w.code[w.pc + 1].op == Opcode::kTmaLoad ? tma_issue_interval_ : tma_issue_hold_);
      break;
    case Opcode::kAcquireStage:
      ++cta.stages[in.stage].fills;
      break;
    case Opcode::kReleaseStage:
      release(cta, cta.stages[in.stage], now);
      break;
    case Opcode::kMbWait:
      ++w.mb_waits[in.stage];
      // A try-wait that finds its phase complete takes its round trip; one that waited returns
      // with the phase.
      if (!w.woken) ready = now + mb_wait_cycles_;
      break;
    case Opcode::kWgmma: {
      const std::uint32_t group = w.groups.join(in.gid());
      span(w, (*instructions_)[in.op].span.name, now, now + 1);
      if (timeline_ && w.wgmma_in_flight++ == 0) w.wgmma_since = now;
      tensor_core_->issue(
          now, WgmmaOp{in.wgmma_m(), in.wgmma_n(), in.wgmma_k(), wgmma_token(slot, w.age, group),
                       slot});
      // Fair pipes slow beside it from now on: the BUBBLEs on them end later.
      if (fair_pipes_ && slows_beside_wgmma_) slow_pipes_until(tensor_core_->busy_until(now), now);
      break;
    }
    case Opcode::kWgmmaCommit:
      w.groups.close();
      break;
    case Opcode::kWgmmaWait:  // its groups were closed and counted by ready_to_issue
      break;
    case Opcode::kBarArrive:
      arrive(cta, in.x, now);
      break;
    case Opcode::kBarWait:
      if (!arrive(cta, in.x, now)) {
        // The arrival is this cycle's issue; the WarpGroup is stalled from the next cycle until
        // the round completes, and then continues after the BAR_WAIT.
        Barrier& bar = cta.barriers[in.x];
        block(slot, kBarrier, now + 1, bar.waiters, std::uint64_t{bar.generation} + 1);
        ++w.pc;
        return;
      }
      break;
    case Opcode::kBubble: {
      const Cycle end = in.is_compute() ? compute_end(slot, cta.program->work[in.y], in.x, now)
                                        : now + std::max<Cycle>(in.x, 1);
      bubble_cycles_.add(end - now);
      // The span is drawn when it is over: a fair pipe may still lengthen it.
      w.bubble_since = now;
      ready = end;
      break;
    }
    case Opcode::kExit:
      exit(slot, now);
      return;
    default:  // a plugin's instruction: the check let it through only with its engine wired
      span(w, (*instructions_)[in.op].span.name, now, now + 1);
      ready = std::max(now + 1, engine_of(in.op)->issue(now, engine_op(slot, in)));
      break;
  }
  ++w.pc;
  w.ready_at = ready;
  w.woken = false;
}

Cycle WarpGroupSm::compute_end(std::uint32_t slot, const ComputeWork& work, Cycle latency,
                               Cycle now) {
  const std::uint64_t elements[kPipeCount] = {work.fp32, work.alu, work.sfu,
                                              work.fp32 + work.alu + work.sfu};
  Cycle end = now + std::max<Cycle>(latency, 1);
  if (fair_pipes_ && slows_beside_wgmma_) slow_pipes_until(tensor_core_->busy_until(now), now);
  for (int p = 0; p < kPipeCount; ++p) {
    if (elements[p] == 0) continue;
    const auto cycles = static_cast<Cycle>(std::ceil(static_cast<double>(elements[p]) / lanes_[p]));
    pipe_busy_[p]->add(cycles);
    if (!fair_pipes_) {
      Cycle start = std::max(pipe_free_[p], now), taken = cycles;
      // A pipe slower beside the tensor core takes its work at the reduced rate while the
      // WGMMAs issued so far execute (fifo: those issued later do not stretch it).
      if (beside_rate_[p] < 1) {
        const auto t = static_cast<double>(start);
        const auto busy = static_cast<double>(tensor_core_->busy_until(now));
        taken = static_cast<Cycle>(
            std::ceil(time_after(t, static_cast<double>(cycles), beside_rate_[p], busy) - t));
      }
      pipe_free_[p] = start + taken;
      end = std::max(end, pipe_free_[p]);
      continue;
    }
    std::vector<PipeShare>& shares = shares_[p];
    advance_pipe(p, now);
    shares.push_back({slot, static_cast<double>(cycles), 0});
    share_finish_times(p);
    for (const PipeShare& s : shares)
      if (s.slot == slot) end = std::max(end, s.finish);
    stretch_shares(p, slot, now);
  }
  if (work.fp32 > 0) {
    const double fp32_cycles = static_cast<double>(work.fp32) / lanes_[kFp32];
    fp32_loads_[slot] = {fp32_cycles / static_cast<double>(end - now), end};
    tensor_core_->fp32_load(now, slot, fp32_loads_[slot].fraction, end);
  }
  return end;
}

void WarpGroupSm::stretch_shares(int p, std::uint32_t except, Cycle now) {
  for (const PipeShare& s : shares_[p]) {
    if (s.slot == except) continue;
    // Another WarpGroup's BUBBLE on this pipe now takes longer: it ends later.
    WarpGroup& other = warpgroups_[s.slot];
    if (s.finish > other.ready_at) {
      bubble_cycles_.add(s.finish - other.ready_at);
      other.ready_at = s.finish;
      stretch_fp32_load(s.slot, now);
    }
  }
}

void WarpGroupSm::slow_pipes_until(Cycle busy_until, Cycle now) {
  // The tensor core's busy end only moves later as WGMMAs are issued; an earlier estimate (the
  // FP32 load fell) keeps the pipes slow until the one said before.
  if (busy_until <= slow_until_) return;
  for (int p = 0; p < kPipeCount; ++p)
    if (beside_rate_[p] < 1 && !shares_[p].empty()) advance_pipe(p, now);
  slow_until_ = busy_until;
  for (int p = 0; p < kPipeCount; ++p) {
    if (beside_rate_[p] >= 1 || shares_[p].empty()) continue;
    share_finish_times(p);
    stretch_shares(p, max_warpgroups_, now);  // no slot is issuing a BUBBLE
  }
}

void WarpGroupSm::stretch_fp32_load(std::uint32_t slot, Cycle now) {
  Fp32Load& load = fp32_loads_[slot];
  const Cycle until = warpgroups_[slot].ready_at;
  if (load.until <= now || load.fraction == 0 || until <= load.until) return;
  const double left = load.fraction * static_cast<double>(load.until - now);
  load = {left / static_cast<double>(until - now), until};
  tensor_core_->fp32_load(now, slot, load.fraction, until);
}

void WarpGroupSm::advance_pipe(int p, Cycle now) {
  // Equal shares: each of the n BUBBLEs on the pipe gets 1/n of it until the one with the least
  // work left is done.
  std::vector<PipeShare>& shares = shares_[p];
  double t = static_cast<double>(pipe_clock_[p]);
  const auto until = static_cast<double>(now);
  const double rate = beside_rate_[p], slow = static_cast<double>(slow_until_);
  while (!shares.empty() && t < until) {
    double least = shares.front().remaining;
    for (const PipeShare& s : shares) least = std::min(least, s.remaining);
    const auto n = static_cast<double>(shares.size());
    const double served = std::min(least, work_between(t, until, rate, slow) / n);
    for (PipeShare& s : shares) s.remaining -= served;
    t = time_after(t, served * n, rate, slow);
    std::erase_if(shares, [](const PipeShare& s) { return s.remaining <= kShareEpsilon; });
  }
  // A BUBBLE whose end has come is over, whatever rounding left of it.
  std::erase_if(shares, [&](const PipeShare& s) { return warpgroups_[s.slot].ready_at <= now; });
  pipe_clock_[p] = now;
}

void WarpGroupSm::share_finish_times(int p) {
  std::vector<PipeShare>& shares = shares_[p];
  std::sort(shares.begin(), shares.end(), [](const PipeShare& a, const PipeShare& b) {
    return a.remaining != b.remaining ? a.remaining < b.remaining : a.slot < b.slot;
  });
  double t = static_cast<double>(pipe_clock_[p]), done = 0;
  const double rate = beside_rate_[p], slow = static_cast<double>(slow_until_);
  for (std::size_t i = 0; i < shares.size(); ++i) {
    t = time_after(t, (shares[i].remaining - done) * static_cast<double>(shares.size() - i), rate,
                   slow);
    done = shares[i].remaining;
    shares[i].finish = static_cast<Cycle>(std::ceil(t - kShareEpsilon));
  }
}

void WarpGroupSm::close_bubble(WarpGroup& w) {
  if (w.bubble_since == kNever) return;
  span(w, (*instructions_)[Opcode::kBubble].span.name, w.bubble_since, w.ready_at);
  w.bubble_since = kNever;
}

void WarpGroupSm::issue_tma(WarpGroup& w, const Instruction& in, Cycle now) {
  const CtaProgram& program = *ctas_[w.cta].program;
  TmaOp op;
  op.op = in.op;
  if (in.op == Opcode::kTmaBulk) {
    op.addr = program.addresses[in.x];
    op.bytes = in.y;
  } else {
    op.map = &(*tensor_maps_)[in.map];
    std::copy_n(program.coords.begin() + in.x, op.map->rank, op.coords);
    // check_program bounded the box to 32 bits.
    op.bytes = static_cast<std::uint32_t>(op.map->box_bytes());
  }
  const bool mbarrier = in.op != Opcode::kTmaStore;
  op.token = tma_token(in.stage, mbarrier, w.cta, ctas_[w.cta].serial);
  // Counted before the engine sees the op: an engine may complete it from inside issue().
  if (mbarrier) {
    Stage& s = ctas_[w.cta].stages[in.stage];
    if (timeline_ && s.pending_bytes == 0) {
      s.flight_since = now;
      s.flight_warpgroup = w.index;
    }
    s.pending_bytes += op.bytes;
  }
  if (!mbarrier && exit_waits_for_stores_) ++ctas_[w.cta].pending_stores;
  span(w, (*instructions_)[in.op].span.name, now, now + 1);
  tma_->issue(now, op);
}

bool WarpGroupSm::arrive(Cta& cta, std::uint32_t id, Cycle now) {
  Barrier& bar = cta.barriers[id];
  if (++bar.arrivals < bar.participants) return false;
  bar.arrivals = 0;
  ++bar.generation;
  wake_up_to(bar.waiters, bar.generation, now);
  return true;
}

void WarpGroupSm::release(Cta& cta, Stage& stage, Cycle now) {
  if (++stage.releases < cta.program->consumers_per_stage) return;
  stage.releases = 0;
  ++stage.empty_phases;
  wake_up_to(stage.empty_waiters, stage.empty_phases, now);
}

void WarpGroupSm::exit(std::uint32_t slot, Cycle now) {
  WarpGroup& w = warpgroups_[slot];
  runnable_mask_ &= ~(std::uint64_t{1} << slot);
  span(w, (*instructions_)[Opcode::kExit].span.name, now, now + 1);
  Cta& cta = ctas_[w.cta];
  if (--cta.live_warpgroups > 0) return;
  if (exit_waits_for_stores_ && cta.pending_stores > 0) {
    cta.draining_since = now;
    return;  // retires with its last store's completion
  }
  retire(w.cta, now);
}

void WarpGroupSm::retire(std::uint32_t cta_slot, Cycle now) {
  // The CTA's slot, WarpGroup slots, shared memory and registers free now, so a CTA the host
  // places in this cycle's on_cta_exit issues from the next cycle on.
  Cta& cta = ctas_[cta_slot];
  for (std::uint64_t m = resident_mask_; m != 0; m &= m - 1) {
    const auto s = static_cast<std::uint32_t>(std::countr_zero(m));
    if (warpgroups_[s].cta == cta_slot) resident_mask_ &= ~(std::uint64_t{1} << s);
  }
  used_warpgroups_ -= static_cast<std::uint32_t>(cta.program->warpgroups.size());
  used_smem_ -= cta.smem_bytes;
  used_regs_ -= cta.registers;
  cta.program.reset();
  ctas_completed_.add();
  if (--resident_ctas_ == 0) {
    active_cycles_.add(now + 1 - active_since_);
    active_until_ = now + 1;
  }
  cta_retired_ = true;
  retired_any_ = true;
}

// ---- blocking and waking -----------------------------------------------------------------------

void WarpGroupSm::block(std::uint32_t slot, Wait wait, Cycle since, WaitList& list,
                        std::uint64_t key) {
  WarpGroup& w = warpgroups_[slot];
  w.wait_pc = w.pc;
  w.wait = wait;
  w.blocked_since = since;
  runnable_mask_ &= ~(std::uint64_t{1} << slot);
  list.add(slot, key);
}

void WarpGroupSm::wake(std::uint32_t slot, Cycle now) {
  WarpGroup& w = warpgroups_[slot];
  // A wake-up caused by this SM's own issue phase comes too late for that phase.
  const Cycle ready = in_step_ ? now + 1 : now;
  stall_[w.wait]->add(ready - w.blocked_since);
  span(w, wait_span(w), w.blocked_since, ready);
  // A BAR_WAIT blocks after its issue; the other waits block the instruction that is next.
  w.woken = w.wait != kBarrier;
  w.wait = kNotWaiting;
  w.ready_at = ready;
  runnable_mask_ |= std::uint64_t{1} << slot;
  if (!in_step_) request(now);
}

void WarpGroupSm::wake_up_to(WaitList& list, std::uint64_t value, Cycle now) {
  list.wake_if([value](const WaitList::Waiter& waiter) { return waiter.key <= value; },
               [&](const WaitList::Waiter& waiter) { wake(waiter.slot, now); });
}

void WarpGroupSm::request(Cycle at) {
  // A pending request at or before `at` suffices: its step asks again for whatever is next.
  if (requested_ <= at) return;
  requested_ = at;
  clock_->request_issue(sm_, at);
}

// ---- engine completions ------------------------------------------------------------------------

void WarpGroupSm::on_tma_complete(Cycle now, std::uint64_t token, std::uint32_t bytes) {
  tma_completed_bytes_.add(bytes);
  const auto slot = static_cast<std::uint32_t>(token >> 16 & 0xffff);
  Cta& cta = ctas_[slot];
  if (!cta.program || (cta.serial & 0xffffffff) != token >> 32) return;
  if (!(token & kTmaMbarrier)) {
    if (!exit_waits_for_stores_ || --cta.pending_stores > 0 || cta.live_warpgroups > 0) return;
    store_drain_cycles_.add(now - cta.draining_since);
    retire(slot, now);
    if (!in_step_) {  // a completion between issue phases: tell the host now
      cta_retired_ = false;
      host_->on_cta_exit(sm_, now);
    }
    return;
  }
  Stage& s = cta.stages[token & 0xff];
  s.pending_bytes -= std::min<std::uint64_t>(bytes, s.pending_bytes);
  if (s.pending_bytes != 0) return;
  if (timeline_ && now > s.flight_since)
    timeline_->span(sm_, cta.program->cta_id, static_cast<int>(s.flight_warpgroup),
                    stage_flight_span(), s.flight_since, now);
  ++s.full_phases;
  wake_up_to(s.full_waiters, s.full_phases, now);
}

void WarpGroupSm::on_wgmma_complete(Cycle now, std::uint64_t token) {
  const auto slot = static_cast<std::uint32_t>(token >> 48);
  WarpGroup& w = warpgroups_[slot];
  if (!(resident_mask_ >> slot & 1) || (w.age & 0xffff) != (token >> 32 & 0xffff)) return;
  if (timeline_ && w.wgmma_in_flight > 0 && --w.wgmma_in_flight == 0)
    span(w, (*instructions_)[Opcode::kWgmma].flight.name, w.wgmma_since, now);
  if (!w.groups.complete(static_cast<std::uint32_t>(token))) return;
  if (w.wait != kWgmmaWait) return;
  const std::uint32_t unfinished = w.groups.unfinished_closed();
  wgmma_waiters_.wake_if(
      [&](const WaitList::Waiter& waiter) {
        return waiter.slot == slot && unfinished <= waiter.key;
      },
      [&](const WaitList::Waiter& waiter) { wake(waiter.slot, now); });
}

void WarpGroupSm::on_wgmma_slot_free(Cycle now) {
  // Every refused WarpGroup retries; those that lose the race block again.
  wake_up_to(tensor_core_waiters_, 0, now);
}

void WarpGroupSm::on_engine_wake(Cycle now) {
  // As for the tensor core: every WarpGroup a plugin's engine refused asks it again.
  wake_up_to(engine_waiters_, 0, now);
}

void WarpGroupSm::on_engine_flight(const EngineOp& op, Cycle begin, Cycle end) {
  span(warpgroups_[op.warpgroup], (*instructions_)[op.instruction->op].flight.name, begin, end);
}

// ---- reports -----------------------------------------------------------------------------------

std::string WarpGroupSm::waiting_for(const WarpGroup& w) const {
  const Cta& cta = ctas_[w.cta];
  const Instruction& in = w.code[w.wait_pc];
  switch (w.wait) {
    case kMbWait: {
      const Stage& s = cta.stages[in.stage];
      return "stage " + std::to_string(in.stage) + " full phase " +
             std::to_string(w.mb_waits[in.stage] + 1) + " (completed " +
             std::to_string(s.full_phases) + ", " + std::to_string(s.pending_bytes) +
             " bytes in flight)";
    }
    case kAcquireStage: {
      const Stage& s = cta.stages[in.stage];
      return "stage " + std::to_string(in.stage) + " released (fills " + std::to_string(s.fills) +
             ", empty phases " + std::to_string(s.empty_phases) + ", " +
             std::to_string(s.releases) + " of " +
             std::to_string(cta.program->consumers_per_stage) + " releases this round)";
    }
    case kWgmmaWait:
      return "at most " + std::to_string(in.x) + " wgmma groups outstanding (" +
             std::to_string(w.groups.unfinished_closed()) + " now)";
    case kBarrier: {
      const Barrier& bar = cta.barriers[in.x];
      return "barrier " + std::to_string(in.x) + " generation " +
             std::to_string(bar.generation + 1) + " (" + std::to_string(bar.arrivals) + " of " +
             std::to_string(bar.participants) + " arrived)";
    }
    case kTensorCoreFull:
      return "tensor core buffer slot";
    case kEngineWait:
      return "the " + std::string((*instructions_)[in.op].engine) + " engine to accept it";
    default:
      return "";
  }
}

void WarpGroupSm::report_blocked(std::vector<BlockedThread>& out) const {
  for (std::uint64_t m = resident_mask_; m != 0; m &= m - 1) {
    const WarpGroup& w = warpgroups_[std::countr_zero(m)];
    if (w.wait == kNotWaiting) continue;  // runnable, in a BUBBLE, or exited
    const CtaProgram& program = *ctas_[w.cta].program;
    out.push_back({sm_, program.cta_id, static_cast<int>(w.index), w.wait_pc,
                   instruction_text(w.code[w.wait_pc], program, *instructions_, tensor_maps_),
                   waiting_for(w)});
  }
}

void WarpGroupSm::meters(std::vector<SmMeter>& out) const {
  out.push_back({"tensor core", SmMeter::Kind::kPipelineBusy, tensor_core_->busy_cycles()});
  out.push_back({"TMA", SmMeter::Kind::kBusy, tma_->busy_cycles()});
  out.push_back({"TMA bytes in flight", SmMeter::Kind::kLevel, tma_->issued_bytes(),
                 tma_completed_bytes_.value(), "bytes"});
  for (std::size_t i = 0; i < engines_.size(); ++i)
    if (const std::optional<std::uint64_t> busy = engines_[i]->busy_cycles())
      out.push_back({engine_kinds_[i].c_str(), SmMeter::Kind::kBusy, *busy});
  for (int w = 0; w <= kEngineWait; ++w)
    if (stall_[w]) out.push_back({kWaitName[w], SmMeter::Kind::kStall, stall_[w]->value()});
}

const char* WarpGroupSm::stage_flight_span() const {
  // A stage's bytes in flight, from its first TMA_LOAD or TMA_BULK until the last lands.
  return (*instructions_)[Opcode::kTmaLoad].flight.name;
}

const char* WarpGroupSm::wait_span(const WarpGroup& w) const {
  return (*instructions_)[w.code[w.wait_pc].op].wait_span.name;
}

void WarpGroupSm::span(const WarpGroup& w, const char* name, Cycle begin, Cycle end) const {
  // A plugin's instruction may name no span (InstructionSpec::span, wait_span null).
  if (timeline_ && name && end > begin)
    timeline_->span(sm_, ctas_[w.cta].program->cta_id, static_cast<int>(w.index), name, begin, end);
}

void WarpGroupSm::finish(Cycle end) {
  // A run that stops with WarpGroups still blocked (deadlock, watchdog) counts their stall up
  // to `end`, the first cycle not simulated.
  for (std::uint64_t m = resident_mask_; m != 0; m &= m - 1) {
    WarpGroup& w = warpgroups_[std::countr_zero(m)];
    if (w.wgmma_in_flight > 0)
      span(w, (*instructions_)[Opcode::kWgmma].flight.name, w.wgmma_since, end);
    if (w.bubble_since != kNever)
      span(w, (*instructions_)[Opcode::kBubble].span.name, w.bubble_since,
           std::min(w.ready_at, end));
    w.bubble_since = kNever;
    if (w.wait == kNotWaiting || end <= w.blocked_since) continue;
    stall_[w.wait]->add(end - w.blocked_since);
    span(w, wait_span(w), w.blocked_since, end);
  }
  if (timeline_)
    for (const Cta& cta : ctas_)
      if (cta.program)
        for (const Stage& s : cta.stages)
          if (s.pending_bytes > 0 && end > s.flight_since)
            timeline_->span(sm_, cta.program->cta_id, static_cast<int>(s.flight_warpgroup),
                            stage_flight_span(), s.flight_since, end);
  if (resident_ctas_ > 0 && end > active_since_) active_cycles_.add(end - active_since_);
  const std::uint64_t active = active_cycles_.value();
  issue_idle_cycles_.set(active - std::min(active, issued_.value()));
}

}  // namespace simfa::sm_warpgroup
