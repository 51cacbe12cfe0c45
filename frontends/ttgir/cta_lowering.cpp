#include "cta_lowering.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <span>

#include "simfa/int_math.h"
#include "simfa/wgmma_codegen.h"

namespace simfa::ttgir {

namespace {

std::int64_t normalize(std::int64_t v, std::uint32_t width) {
  if (width >= 64 || width == 0) return v;
  const int shift = 64 - static_cast<int>(width);
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(v) << shift) >> shift;
}

std::uint64_t unsigned_of(std::int64_t v, std::uint32_t width) {
  const auto u = static_cast<std::uint64_t>(v);
  return width >= 64 ? u : u & ((std::uint64_t{1} << width) - 1);
}

std::string at(Pos p) {
  return std::to_string(p.line) + ":" + std::to_string(p.column);
}

}  // namespace

CtaLowering::CtaLowering(const KernelProgram& kernel, LaunchConfig launch,
                         const std::vector<TensorMap>& maps, const LoweringOptions& options)
    : kernel_(kernel), launch_(std::move(launch)), maps_(maps), options_(options) {
  argument_slot_.assign(kernel_.slot_count, false);
  for (const ScalarArg& a : kernel_.scalar_args) argument_slot_[a.slot] = true;
  // Registers: the TTGIR's setmaxnreg values (actualRegisters), the option, or the estimate:
  // what the partition's dots hold in registers (accumulators, register A operands; the most of
  // one loop) plus 40 for addresses and loop state (CUTLASS's producer floor,
  // LoadRegisterRequirement), capped at the 255 a thread may hold.
  for (const Partition& p : kernel_.partitions) {
    std::uint64_t r = p.registers_per_thread;
    if (r == 0) r = options_.registers_per_thread;
    if (r == 0) r = std::min<std::uint64_t>(40 + p.dot_bytes_per_thread / 4, 255);
    registers_.push_back(static_cast<std::uint32_t>(round_up(r, kRegisterAllocationUnit)));
  }
}

void CtaLowering::fail(const Node& n, const std::string& message) const {
  kernel_.doc().fail(n.pos, message + " (CTA " + std::to_string(cta_) + ")");
}

void CtaLowering::lower(std::uint64_t cta, CtaProgram& out,
                        std::vector<std::vector<SiteRecord>>* records) {
  cta_ = cta;
  store_bytes_ = 0;
  pid_ = {static_cast<std::int64_t>(cta % launch_.grid[0]),
          static_cast<std::int64_t>(cta / launch_.grid[0] % launch_.grid[1]),
          static_cast<std::int64_t>(cta / (launch_.grid[0] * launch_.grid[1]))};
  CtaProgramBuilder& program = program_.emplace(out, cta, maps_);
  program.smem(static_cast<std::int64_t>(kernel_.smem_bytes));
  program.stages(kernel_.stage_count, kernel_.consumers_per_stage);
  records_ = records;
  const std::uint32_t wgs = kernel_.warpgroup_count();
  // The partitions' WarpGroups, in order (Partition::first_warpgroup counts them so).
  for (std::uint32_t p = 0; p < kernel_.partitions.size(); ++p)
    program.add_warpgroups(kernel_.partitions[p].warpgroups, registers_[p]);
  wgs_.assign(wgs, WarpGroupState{});
  for (WarpGroupState& s : wgs_) {
    s.waited.assign(kernel_.stage_count, 0);
    s.acquired.assign(kernel_.stage_count, 0);
    s.pending_bubble = options_.prologue_bubble;
    if (cta < first_wave_ctas_) s.pending_bubble += options_.first_wave_bubble;
  }
  acquirer_.assign(kernel_.stage_count, kNone);
  if (records_) records_->assign(wgs, {});
  slots_.assign(kernel_.slot_count, Value{});
  produced_in_.assign(kernel_.slot_count, kNone);
  for (std::uint32_t s = 0; s < kernel_.slot_count; ++s) slots_[s].origin = s;
  for (const auto& [slot, value] : launch_.scalars) slots_[slot] = {value, kNone, true, kNone};
  partition_ = 0;
  instructions_ = 0;

  const Partition& main = kernel_.partitions[0];
  run(main.begin, main.end);

  for (std::uint32_t w = 0; w < wgs; ++w) {
    emit(w, Instruction::exit());
    if (records_)
      (*records_)[w].push_back(
          {kNone, wgs_[w].record_end, static_cast<std::uint32_t>(program.warpgroup(w).size())});
  }
  program_.reset();
}

void CtaLowering::run(std::uint32_t begin, std::uint32_t end) {
  for (std::uint32_t i = begin; i < end;) {
    const Node& n = kernel_.nodes[i];
    switch (n.kind) {
      case NodeKind::kFor:
        run_for(n);
        i = n.end;
        continue;
      case NodeKind::kIf: {
        const bool cond = integer(n, 0, "the condition") != 0;
        if (cond)
          run(i + 1, n.a);
        else
          run(n.a, n.end);
        i = n.end;
        continue;
      }
      case NodeKind::kWarpSpecialize: {
        run(i + 1, n.b);  // the default region, in the current (default) partition
        for (std::uint32_t p = n.a; p < kernel_.partitions.size(); ++p) {
          const Partition& part = kernel_.partitions[p];
          for (std::size_t c = 0; c < part.arg_slots.size(); ++c)
            slots_[part.arg_slots[c]] = slots_[operand(n, static_cast<std::uint32_t>(c))];
          const std::uint32_t saved = partition_;
          partition_ = p;
          run(part.begin, part.end);
          partition_ = saved;
        }
        for (std::uint32_t r = 0; r < n.result_count; ++r)
          slots_[n.result + r] = {0, kNone, false, n.result + r};
        i = n.end;
        continue;
      }
      default:
        execute(n);
        after(n);
        ++i;
    }
  }
}

void CtaLowering::run_for(const Node& n) {
  const std::int64_t lb = integer(n, 0, "the loop's lower bound");
  const std::int64_t ub = integer(n, 1, "the loop's upper bound");
  const std::int64_t step = integer(n, 2, "the loop's step");
  if (step <= 0) fail(n, "loop step " + std::to_string(step) + " is not positive");
  const std::uint32_t iters = n.operand_count - 3;
  for (std::uint32_t k = 0; k < iters; ++k) slots_[n.b + k] = slots_[operand(n, 3 + k)];
  const std::uint32_t index = static_cast<std::uint32_t>(&n - kernel_.nodes.data());
  const Partition& part = kernel_.partitions[partition_];
  std::uint64_t trips = 0;
  for (std::int64_t iv = lb; iv < ub; iv = normalize(iv + step, n.width)) {
    if (++trips > options_.max_instructions)
      fail(n, "more than " + std::to_string(options_.max_instructions) +
                  " iterations (max_instructions_per_cta)");
    slots_[n.a] = {iv, kNone, true, kNone};
    if (n.sub && options_.per_iteration_bubble > 0)
      for (std::uint32_t w = 0; w < part.warpgroups; ++w)
        charge(part.first_warpgroup + w, options_.per_iteration_bubble);
    run(index + 1, n.end);
    if (iv > std::numeric_limits<std::int64_t>::max() - step) break;
  }
  for (std::uint32_t k = 0; k < iters; ++k) slots_[n.result + k] = slots_[n.b + k];
}

std::int64_t CtaLowering::integer(const Node& n, std::uint32_t k, const char* what) {
  const std::uint32_t s = operand(n, k);
  const Value& v = slots_[s];
  if (v.known && v.alloc == kNone) return v.v;
  const std::string name = "%" + std::string(kernel_.slot_name[s]);
  const std::uint32_t root = v.origin == kNone ? s : v.origin;
  const std::string cause = "%" + std::string(kernel_.slot_name[root]);
  if (argument_slot_[root]) {
    std::string arg;
    for (const ScalarArg& a : kernel_.scalar_args)
      if (a.slot == root) arg = a.name;
    fail(n, std::string(what) + " " + name + " is not known: it depends on kernel argument " +
                cause + " ('" + arg + "'), which args does not give");
  }
  fail(n, std::string(what) + " " + name + " is not known: it depends on " + cause + " (" +
              at(kernel_.slot_pos[root]) + "), whose value simfa does not compute");
}

bool CtaLowering::predicate(const Node& n, std::uint32_t k) {
  return k >= n.operand_count || integer(n, k, "the predicate") != 0;
}

std::uint8_t CtaLowering::stage_of(const Node& n, std::uint32_t k) {
  const Value& v = slots_[operand(n, k)];
  if (!v.known || v.alloc == kNone)
    fail(n, "the mbarrier %" + std::string(kernel_.slot_name[operand(n, k)]) +
                " is not known here (its index does not evaluate)");
  const Allocation& a = kernel_.allocations[v.alloc];
  std::uint64_t count = 1;
  for (auto d : a.shape) count *= static_cast<std::uint64_t>(d);
  if (!a.barriers || v.v < 0 || static_cast<std::uint64_t>(v.v) >= count)
    fail(n, "mbarrier index " + std::to_string(v.v) + " outside its allocation at " + at(a.pos));
  return static_cast<std::uint8_t>(a.first_stage + v.v);
}

// At most one of the calibration bubble and the compute phase is pending at a time, so the
// code keeps the order in which they were charged.
void CtaLowering::charge(std::uint32_t wg, std::uint64_t cycles) {
  close_phase(wg);
  wgs_[wg].pending_bubble += cycles;
}

void CtaLowering::add_work(std::uint32_t wg, const OpCost& cost, double elements) {
  flush_bubble(wg);
  WarpGroupState::Phase& p = wgs_[wg].phase;
  p.open = true;
  p.fp32 += cost.fp32 * elements;
  p.alu += cost.alu * elements;
  p.sfu += cost.sfu * elements;
}

void CtaLowering::flush_bubble(std::uint32_t wg) {
  program_->warpgroup(wg).bubbles(wgs_[wg].pending_bubble);
  wgs_[wg].pending_bubble = 0;
}

void CtaLowering::close_phase(std::uint32_t wg) {
  WarpGroupState::Phase& p = wgs_[wg].phase;
  if (!p.open) return;
  const ComputeWork work{static_cast<std::uint64_t>(std::ceil(p.fp32)),
                         static_cast<std::uint64_t>(std::ceil(p.alu)),
                         static_cast<std::uint64_t>(std::ceil(p.sfu))};
  ++wgs_[wg].phase_serial;
  program_->warpgroup(wg).compute(p.latency, work);
  p = {};
}

WarpGroupCode CtaLowering::code(std::uint32_t wg) {
  flush_bubble(wg);
  close_phase(wg);
  return program_->warpgroup(wg);
}

void CtaLowering::add_instructions(std::uint64_t instructions) {
  instructions_ += instructions;
  if (instructions_ > options_.max_instructions)
    throw InputError(kernel_.doc().at(Pos{1, 1}), "CTA " + std::to_string(cta_) + " exceeds " +
                                                      std::to_string(options_.max_instructions) +
                                                      " instructions (max_instructions_per_cta)");
}

void CtaLowering::emit(std::uint32_t wg, const Instruction& instruction) {
  code(wg).push(instruction);
  add_instructions(1);
}

void CtaLowering::execute(const Node& n) {
  const Partition& part = kernel_.partitions[partition_];
  const std::uint32_t wg0 = part.first_warpgroup;
  auto set = [&](std::int64_t v) {
    slots_[n.result] = {normalize(v, n.width), kNone, true, kNone};
  };
  // An op simfa does not compute: its results are their own origin.
  auto unknown_results = [&]() {
    for (std::uint32_t r = 0; r < n.result_count; ++r)
      slots_[n.result + r] = {0, kNone, false, n.result + r};
  };
  // An op simfa computes, given an unknown operand: the result inherits the operand's origin.
  auto unknown_from = [&](const Value& operand) {
    slots_[n.result] = {0, kNone, false, operand.origin};
  };
  switch (n.kind) {
    case NodeKind::kConst:
      set(n.imm);
      return;
    case NodeKind::kOpaque:
      unknown_results();
      return;
    case NodeKind::kProgramId:
      set(pid_[n.sub]);
      return;
    case NodeKind::kNumPrograms:
      set(static_cast<std::int64_t>(launch_.grid[n.sub]));
      return;
    case NodeKind::kBinary: {
      const Value& x = slots_[operand(n, 0)];
      const Value& y = slots_[operand(n, 1)];
      if (!x.known || !y.known || x.alloc != kNone || y.alloc != kNone) {
        unknown_from(!x.known ? x : y);  // an error only where a number is needed
        return;
      }
      const std::int64_t a = x.v, b = y.v;
      const std::uint64_t ua = unsigned_of(a, n.width), ub = unsigned_of(b, n.width);
      const auto op = static_cast<BinaryOp>(n.sub);
      const bool divides = op == BinaryOp::kDivS || op == BinaryOp::kDivU ||
                           op == BinaryOp::kRemS || op == BinaryOp::kRemU ||
                           op == BinaryOp::kCeilDivS || op == BinaryOp::kCeilDivU ||
                           op == BinaryOp::kFloorDivS;
      if (divides && b == 0) fail(n, "division by zero");
      // The one signed quotient outside int64 (UBSan, docs/reliability.md); MLIR makes it poison.
      const bool signed_divides = op == BinaryOp::kDivS || op == BinaryOp::kRemS ||
                                  op == BinaryOp::kCeilDivS || op == BinaryOp::kFloorDivS;
      if (signed_divides && a == std::numeric_limits<std::int64_t>::min() && b == -1)
        fail(n, "signed division overflows: -2^63 / -1");
      std::int64_t r = 0;
      switch (op) {
        case BinaryOp::kAdd:
          r = static_cast<std::int64_t>(ua + ub);
          break;
        case BinaryOp::kSub:
          r = static_cast<std::int64_t>(ua - ub);
          break;
        case BinaryOp::kMul:
          r = static_cast<std::int64_t>(ua * ub);
          break;
        case BinaryOp::kDivS:
          r = a / b;
          break;
        case BinaryOp::kDivU:
          r = static_cast<std::int64_t>(ua / ub);
          break;
        case BinaryOp::kRemS:
          r = a % b;
          break;
        case BinaryOp::kRemU:
          r = static_cast<std::int64_t>(ua % ub);
          break;
        case BinaryOp::kCeilDivS:
          r = a / b + ((a % b != 0) && ((a < 0) == (b < 0)) ? 1 : 0);
          break;
        case BinaryOp::kCeilDivU:
          r = static_cast<std::int64_t>((ua + ub - 1) / ub);
          break;
        case BinaryOp::kFloorDivS:
          r = a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0);
          break;
        case BinaryOp::kAnd:
          r = a & b;
          break;
        case BinaryOp::kOr:
          r = a | b;
          break;
        case BinaryOp::kXor:
          r = a ^ b;
          break;
        // Amounts as unsigned: a negative one shifted by -1 or 2^32 - 1 (UBSan); MLIR makes an
        // amount of the width or more poison, here the bits shifted out.
        case BinaryOp::kShl:
          r = ub >= 64 ? 0 : static_cast<std::int64_t>(ua << ub);
          break;
        case BinaryOp::kShrS:
          r = ub >= 64 ? (a < 0 ? -1 : 0) : a >> ub;
          break;
        case BinaryOp::kShrU:
          r = ub >= 64 ? 0 : static_cast<std::int64_t>(ua >> ub);
          break;
        case BinaryOp::kMinS:
          r = std::min(a, b);
          break;
        case BinaryOp::kMaxS:
          r = std::max(a, b);
          break;
        case BinaryOp::kMinU:
          r = static_cast<std::int64_t>(std::min(ua, ub));
          break;
        case BinaryOp::kMaxU:
          r = static_cast<std::int64_t>(std::max(ua, ub));
          break;
      }
      set(r);
      return;
    }
    case NodeKind::kCmp: {
      const Value& x = slots_[operand(n, 0)];
      const Value& y = slots_[operand(n, 1)];
      if (!x.known || !y.known) {
        unknown_from(!x.known ? x : y);
        return;
      }
      const std::uint64_t ux = static_cast<std::uint64_t>(x.v),
                          uy = static_cast<std::uint64_t>(y.v);
      bool r = false;
      switch (static_cast<CmpPredicate>(n.sub)) {
        case CmpPredicate::kEq:
          r = x.v == y.v;
          break;
        case CmpPredicate::kNe:
          r = x.v != y.v;
          break;
        case CmpPredicate::kSlt:
          r = x.v < y.v;
          break;
        case CmpPredicate::kSle:
          r = x.v <= y.v;
          break;
        case CmpPredicate::kSgt:
          r = x.v > y.v;
          break;
        case CmpPredicate::kSge:
          r = x.v >= y.v;
          break;
        case CmpPredicate::kUlt:
          r = ux < uy;
          break;
        case CmpPredicate::kUle:
          r = ux <= uy;
          break;
        case CmpPredicate::kUgt:
          r = ux > uy;
          break;
        case CmpPredicate::kUge:
          r = ux >= uy;
          break;
      }
      slots_[n.result] = {r ? 1 : 0, kNone, true, kNone};
      return;
    }
    case NodeKind::kSelect: {
      const Value& c = slots_[operand(n, 0)];
      if (!c.known) {
        unknown_from(c);
        return;
      }
      slots_[n.result] = slots_[operand(n, c.v != 0 ? 1 : 2)];
      return;
    }
    case NodeKind::kCast: {
      const Value& x = slots_[operand(n, 0)];
      if (!x.known) {
        unknown_from(x);
        return;
      }
      const auto kind = static_cast<CastKind>(n.sub);
      set(kind == CastKind::kZeroExtend ? static_cast<std::int64_t>(unsigned_of(x.v, n.a)) : x.v);
      return;
    }
    case NodeKind::kYield: {
      scratch_.clear();
      for (std::uint32_t k = 0; k < n.operand_count; ++k) scratch_.push_back(slots_[operand(n, k)]);
      for (std::uint32_t k = 0; k < n.operand_count; ++k) slots_[n.a + k] = scratch_[k];
      return;
    }
    case NodeKind::kAlloc:
      if (n.result != kNone) slots_[n.result] = {0, n.a, true, kNone};
      return;
    case NodeKind::kView: {
      Value v = slots_[operand(n, 0)];
      if (n.sub == 1 && n.operand_count > 1) {
        const Value& i = slots_[operand(n, 1)];
        if (!i.known) v.origin = i.origin;
        v.known = v.known && i.known;
        // An i64 index of 2^63 - 1 overflowed here (UBSan, docs/reliability.md).
        std::int64_t step = 0;
        if (__builtin_mul_overflow(i.v, n.imm, &step) || __builtin_add_overflow(v.v, step, &v.v))
          fail(n, "memdesc index " + std::to_string(i.v) + " puts the view outside 64 bits");
      }
      if (n.result != kNone) slots_[n.result] = v;
      return;
    }
    case NodeKind::kTmaLoad:
    case NodeKind::kTmaStore: {
      const bool load = n.kind == NodeKind::kTmaLoad;
      if (load && !predicate(n, n.b + 1)) return;
      // The copy is issued by one elected thread: the partition's first WarpGroup.
      std::array<std::int64_t, kMaxTensorRank> coords{};
      for (std::uint32_t d = 0; d < n.b; ++d) {  // TTGIR lists the outermost first
        const std::int64_t c = integer(n, n.b - 1 - d, "the TMA coordinate");
        if (c < std::numeric_limits<std::int32_t>::min() ||
            c > std::numeric_limits<std::int32_t>::max())
          fail(n, "TMA coordinate " + std::to_string(c) + " outside 32 bits");
        coords[d] = c;
      }
      const auto map = static_cast<std::uint16_t>(n.a);
      const std::uint32_t offset = program_->coordinates(map, std::span(coords.data(), n.b));
      emit(wg0, load ? Instruction::tma_load(map, offset, stage_of(n, n.b))
                     : Instruction::tma_store(map, offset));
      if (!load) store_bytes_ += maps_[map].box_bytes();
      return;
    }
    case NodeKind::kDot: {
      const DotShape& d = kernel_.dots[n.a].shape;
      const std::uint32_t count = d.per_warpgroup();
      // Serialized (as ptxas does when registers are short), each WGMMA is a group of its own
      // that the WarpGroup waits for before it issues the next.
      const bool serialized =
          wgmma_serialized(options_.wgmma_serialization, d.wgmma_n(), d.acc_bytes);
      const std::uint32_t per_group = serialized ? 1 : count;
      for (std::uint32_t w = wg0; w < wg0 + part.warpgroups; ++w)
        for (std::uint32_t k = 0; k < count; k += per_group) {
          code(w).wgmma_group(per_group, static_cast<std::uint16_t>(d.wgmma_m()),
                              static_cast<std::uint16_t>(d.wgmma_n()),
                              static_cast<std::uint16_t>(d.wgmma_k()));
          add_instructions(per_group + 1);
          if (serialized || !d.is_async) emit(w, Instruction::wgmma_wait(0));
        }
      unknown_results();
      return;
    }
    case NodeKind::kDotWait:
      for (std::uint32_t w = wg0; w < wg0 + part.warpgroups; ++w)
        emit(w, Instruction::wgmma_wait(static_cast<std::uint32_t>(n.imm)));
      for (std::uint32_t r = 0; r < n.result_count && r < n.operand_count; ++r)
        slots_[n.result + r] = slots_[operand(n, r)];
      return;
    case NodeKind::kWaitBarrier: {
      if (!predicate(n, 2)) return;
      const std::uint8_t s = stage_of(n, 0);
      const std::uint32_t parity = static_cast<std::uint32_t>(integer(n, 1, "the phase") & 1);
      const bool tma = kernel_.allocations[slots_[operand(n, 0)].alloc].role == Allocation::kTma;
      for (std::uint32_t w = wg0; w < wg0 + part.warpgroups; ++w) {
        WarpGroupState& st = wgs_[w];
        // try_wait.parity(p) passes once the phase of parity p completed: after the phases this
        // WarpGroup already waited for, that is one more phase when their count has parity p.
        const std::uint32_t before = st.waited[s];
        const std::uint32_t target = before % 2 == parity ? before + 1 : before;
        st.waited[s] = target;
        if (tma) {
          if (target > before) emit(w, Instruction::mb_wait(s));
          continue;
        }
        if (acquirer_[s] != kNone && acquirer_[s] != w)
          fail(n, "two WarpGroups wait on the arrive-completed mbarrier of stage " +
                      std::to_string(s) + "; the ISA's ACQUIRE_STAGE has one producer a stage");
        acquirer_[s] = w;
        // The j-th ACQUIRE_STAGE passes after j release rounds; wait for `target` of them.
        while (st.acquired[s] <= target) {
          emit(w, Instruction::acquire_stage(s));
          ++st.acquired[s];
        }
      }
      return;
    }
    case NodeKind::kArriveBarrier: {
      if (!predicate(n, 1)) return;
      const std::uint8_t s = stage_of(n, 0);
      if (n.b) {  // per-thread: every WarpGroup's threads arrive
        for (std::uint32_t w = wg0; w < wg0 + part.warpgroups; ++w)
          emit(w, Instruction::release_stage(s));
      } else {
        for (std::int64_t k = 0; k < n.imm; ++k) emit(wg0, Instruction::release_stage(s));
      }
      return;
    }
    case NodeKind::kCtaBarrier: {
      if (part.warpgroups < 2) return;  // one WarpGroup: a barrier among its own warps
      program_->barrier(partition_, part.warpgroups);
      for (std::uint32_t w = wg0; w < wg0 + part.warpgroups; ++w)
        emit(w, Instruction::bar_wait(partition_));
      return;
    }
    case NodeKind::kCompute: {
      // Each WarpGroup of the partition does its share of the elements; a reduction is a
      // phase of its own that lasts at least the reduction latency, or, fused, makes the open
      // phase that produced its operand last at least that long: ptxas issues the combine of
      // each element as its producer delivers it (attention's row sum beside its exp2s).
      const std::uint64_t per_wg =
          (static_cast<std::uint64_t>(n.imm) + part.warpgroups - 1) / part.warpgroups;
      const OpCost& cost = op_cost(static_cast<CostRow>(n.sub));
      const bool fused = n.b && options_.costs.fuse_reductions && n.operand_count > 0 &&
                         wgs_[wg0].phase.open &&
                         produced_in_[operand(n, 0)] == wgs_[wg0].phase_serial;
      for (std::uint32_t w = wg0; w < wg0 + part.warpgroups; ++w) {
        if (n.b && !fused) close_phase(w);
        add_work(w, cost, static_cast<double>(per_wg) * n.a);
        if (n.b) {
          const double chain =
              n.b > 1 ? n.b - 1 : std::ceil(static_cast<double>(per_wg) / kThreadsPerWarpGroup);
          WarpGroupState::Phase& p = wgs_[w].phase;
          p.latency = std::max(p.latency, static_cast<std::uint32_t>(std::ceil(
                                              options_.costs.reduce_cycles_per_element * chain)));
          close_phase(w);
        }
      }
      unknown_results();
      // What a reduction delivers comes after its phase; an element-wise op's results belong
      // to the phase still open.
      for (std::uint32_t r = 0; r < n.result_count; ++r)
        produced_in_[n.result + r] = n.b ? kNone : wgs_[wg0].phase_serial;
      return;
    }
    case NodeKind::kNop:
      if (n.sub == kNopInitBarrier && options_.mbarrier_init_cycles > 0) {
        // One thread initializes the mbarrier and the CTA's threads meet at a barrier that
        // waits for it (SYNCS.EXCH.64, then BAR.SYNC): every WarpGroup of the partition waits.
        for (std::uint32_t w = wg0; w < wg0 + part.warpgroups; ++w)
          charge(w, options_.mbarrier_init_cycles);
      } else if (n.sub == kNopStoreWait && options_.tma_store_wait_bytes_per_cycle > 0) {
        // The thread that issued the stores waits until their bytes have left shared memory
        // (cp.async.bulk.wait_group.read); the CTA ends after it.
        if (store_bytes_ > 0)
          charge(wg0, static_cast<std::uint64_t>(std::ceil(
                          static_cast<double>(store_bytes_) /
                          options_.tma_store_wait_bytes_per_cycle)));
        store_bytes_ = 0;
      }
      return;
    case NodeKind::kFor:
    case NodeKind::kIf:
    case NodeKind::kWarpSpecialize:
      return;
  }
}

void CtaLowering::after(const Node& n) {
  if (!records_ || n.site == kNone) return;
  const Partition& part = kernel_.partitions[partition_];
  for (std::uint32_t w = part.first_warpgroup; w < part.first_warpgroup + part.warpgroups; ++w) {
    const auto end = static_cast<std::uint32_t>(program_->warpgroup(w).size());
    (*records_)[w].push_back({n.site, wgs_[w].record_end, end});
    wgs_[w].record_end = end;
  }
}

}  // namespace simfa::ttgir
