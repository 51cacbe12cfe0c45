// tma.traffic: TensorMap/bulk address generation, per-line deduplication, throttled issue of
// line requests to the memory port, completion on the last response.
#include "tma_traffic.h"

#include <algorithm>
#include <bit>
#include <string>

#include "simfa/error.h"
#include "simfa/int_math.h"

namespace simfa::engines {

namespace {
// The 32-byte sector: the unit in which NVIDIA's L1/L2 move global data (CUDA C++ Best Practices
// Guide, "Coalesced Access to Global Memory"). Without deduplication every row segment is
// requested sector by sector, as an uncoalesced copy would be.
constexpr std::uint32_t kSectorBytes = 32;


// Where the requests for a box's rows past the tensor's edge go (edge_rows = requested): lines
// of an address range no workload maps, so that they stay apart from every tensor's lines.
constexpr Addr kEdgeBase = Addr{0x7f} << 40;
}  // namespace

void TmaTraffic::describe(Schema& schema) {
  TmaSetup::describe(schema);
  schema.size("line_bytes")
      .def(128)
      .range(kSectorBytes, 4096)
      .doc("request granularity with dedup: the L2 line size (128 B on Hopper, NVIDIA H100 "
           "whitepaper); a multiple of 32");
  schema.boolean("dedup").def(true).doc(
      "merge the requests of one op to distinct lines (the TMA unit's per-line deduplication, "
      "DESIGN.md §3); false: one 32-byte-sector request per sector of every row, no merging");
  schema.integer("requests_per_cycle")
      .unit("requests/SM cycle")
      .def(1)
      .range(1, 64)
      .doc("line requests generated per cycle; 1 models no TMAU-internal issue parallelism, "
           "which the paper leaves unmodeled (section IV-C)");
  // Hopper's per-SM TMA request tracking is undisclosed; the paper calibrates only the L2's MSHRs
  // (256 per slice, section IV-C). 128 lines = 16 KiB in flight per SM, two 64x64 fp16 boxes.
  schema.integer("max_outstanding")
      .unit("requests")
      .def(128)
      .range(1, 1 << 20)
      .doc("line requests in flight per SM before generation stalls (a calibration knob)");
  // measured: validation/h200/tma_load.csv, `edge` rows (docs/calibration.md §13): on the H200 a
  // box's rows past the tensor's edge cost one SM what rows inside do, and under ncu every one of
  // them is requested from the L2's coalescers, all from 16 of them (lrc__request_sectors max =
  // 16 x mean), a quarter passing on to the slices; 132 SMs reading such boxes from the L2 run
  // at a third of the in-bounds rate.
  schema.string("edge_rows")
      .def("skipped")
      .choices({"skipped", "requested"})
      .doc("the rows of a TMA load's box that lie wholly past the tensor's edge: skipped, not "
           "fetched (zero-filled at no cost); requested, each row's lines are requested like "
           "rows inside, from `edge_lines` lines of a reserved range shared by every SM (the "
           "H200's TMA unit sends them to a few L2 units, which become a hot spot under load); "
           "the requests follow the box's rows inside");
  schema.integer("edge_lines")
      .unit("lines")
      .def(16)
      .range(1, 1 << 16)
      .doc("distinct lines the requests of rows past the edge cycle over (edge_rows = "
           "requested); 16: one per L2 coalescer that receives them on the H200 (ncu, "
           "validation/h200/tma_load.csv); configs/h200.toml calibrates 12 on the timings");
  schema.real("response_bytes_per_cycle")
      .unit("bytes/SM cycle")
      .def(0)
      .range(0, 1 << 16)
      .doc("the rate at which the lines of TMA loads return into one SM, one line after another "
           "in arrival order; a load completes when its last line has passed (0: no limit, lines "
           "land as the memory system answers them)");
  // measured: validation/h200/tma_loaded.csv `own` rings (docs/calibration.md §40-41): n CTAs
  // each keeping s cold 16 KiB boxes in flight see a box's latency grow by n boxes at the DRAM's
  // rate for every stage past the first, L(s) = L(1) + (s - 1) n 16 KiB / R, from 8 CTAs and 2
  // stages (the DRAM 15% busy) to 132 x 8 (saturated). Off in the shipped manifests: with one
  // base for every load it slows the streams and chases whose loads alone are faster (§41).
  schema.bandwidth("loaded_dram_rate")
      .def(0)
      .doc("the loaded-DRAM law's rate R: a load that fetched lines from DRAM and has bytes "
           "ahead of it completes no earlier than its issue + loaded_base_ns + A x S / R, where A "
           "is the bytes of its SM's loads already in flight times the share of the SM's recent "
           "lines that came from DRAM and S the SMs with loads in flight (the memory port's "
           "census): each SM's earlier bytes served at its share of the DRAM first. 0: off. Needs "
           "a port that keeps the census and marks DRAM fills (memory.hierarchy with an l2 of "
           "SlicedCache)");
  schema.real("loaded_base_ns")
      .unit("ns")
      .def(0)
      .range(0, 1e6)
      .doc("the loaded-DRAM law's base: the latency of a cold box with nothing ahead of it");
  schema.stat("loaded_ops", StatKind::kCounter, "ops",
              "loads the loaded-DRAM law held past the cycle their last line landed");
  schema.stat("loaded_cycles", StatKind::kCounter, "cycles",
              "cycles the loaded-DRAM law added to those loads, summed");
  schema.string("store_completion")
      .def("acked")
      .choices({"acked", "sent"})
      .doc("when a TMA store is reported complete: acked, when the memory system has answered "
           "all its lines; sent, the cycle after its last line left the engine (the data is out "
           "of shared memory: what cp.async.bulk.wait_group.read, Triton's store wait, waits for)");
  schema.stat("ops", StatKind::kCounter, "ops", "TMA operations issued");
  schema.stat("lines", StatKind::kCounter, "requests",
              "line requests sent (32-byte sector requests of every row when dedup = false)");
  schema.stat("bytes", StatKind::kCounter, "bytes",
              "bytes delivered by TMA operations (box bytes, or bulk size)");
  schema.stat("busy_cycles", StatKind::kCounter, "cycles",
              "cycles with at least one TMA operation in flight");
  schema.stat("dedup_saved_lines", StatKind::kCounter, "requests",
              "line requests removed by per-op deduplication");
  schema.stat("edge_lines", StatKind::kCounter, "requests",
              "line requests for box rows past the tensor's edge (edge_rows = requested)");
}

TmaTraffic::TmaTraffic(const BuildContext& context)
    : events_(context.events),
      requests_per_cycle_(static_cast<std::uint32_t>(context.params.integer("requests_per_cycle"))),
      max_outstanding_(static_cast<std::uint32_t>(context.params.integer("max_outstanding"))),
      line_count_(context.stats.counter("lines")),
      setup_(context.params),
      dedup_(context.params.boolean("dedup")),
      stores_complete_when_sent_(context.params.string("store_completion") == "sent"),
      edge_rows_requested_(context.params.string("edge_rows") == "requested"),
      edge_line_count_(static_cast<std::uint32_t>(context.params.integer("edge_lines"))),
      sm_(static_cast<std::uint16_t>(std::max(context.sm_index, 0))),
      op_count_(context.stats.counter("ops")),
      bytes_(context.stats.counter("bytes")),
      dedup_saved_(context.stats.counter("dedup_saved_lines")),
      edge_requests_(context.stats.counter("edge_lines")),
      busy_(context.stats.counter("busy_cycles")),
      loaded_ops_(context.stats.counter("loaded_ops")),
      loaded_cycles_(context.stats.counter("loaded_cycles")) {
  const std::int64_t line = context.params.size_bytes("line_bytes");
  if (line % kSectorBytes != 0)
    context.params.fail("line_bytes", "line_bytes = " + std::to_string(line) +
                                          " is not a multiple of the 32-byte sector");
  request_bytes_ = dedup_ ? static_cast<std::uint32_t>(line) : kSectorBytes;
  if (std::has_single_bit(request_bytes_)) request_mask_ = request_bytes_ - 1;
  // The law's rate in bytes per SM cycle and its base in SM cycles.
  const double rate = context.params.bandwidth("loaded_dram_rate");
  if (rate > 0) {
    loaded_bytes_per_cycle_ = rate / (context.gpu.clock_mhz * 1e6);
    loaded_base_ = static_cast<Cycle>(context.params.real("loaded_base_ns") *
                                      context.gpu.clock_mhz / 1000.0);
  }
  const double port_rate = context.params.real("response_bytes_per_cycle");
  if (port_rate > 0)
    port_line_time_ = static_cast<std::uint64_t>(request_bytes_ * double(kPortScale) / port_rate);
}

void TmaTraffic::connect(MemoryPort& memory, TmaClient& client) {
  memory_ = &memory;
  client_ = &client;
  bursts_ = memory.accepts_bursts();
  port_steps_ = memory.runs_steps();
  // The response port and the loaded-DRAM law act on each line's response: those are sent.
  if (const auto latency = memory.fixed_latency();
      latency && port_line_time_ == 0 && loaded_bytes_per_cycle_ == 0) {
    timed_ = true;
    latency_ = *latency;
  }
}

void TmaTraffic::issue(Cycle now, const TmaOp& op) {
  if (op.op != Opcode::kTmaBulk && op.map == nullptr)
    throw Error(std::string("internal: ") + opcode_name(op.op) + " issued without a TensorMap");
  if (++op_serial_ == 0) ++op_serial_;  // 0 marks a free slot
  const std::uint32_t slot = ops_.add(Op{.serial = op_serial_,
                                         .ready = now + setup_.latency(op.op),
                                         .not_before = loaded_floor(now, op), .op = op});
  waiting_.push(slot);
  op_count_.add();
  bytes_.add(op.bytes);
  busy_.begin(now);
  if (timed_) return time_lines(now, slot);
  if (bursts_) return book(now);
  arm(now);
}

bool TmaTraffic::first_free_slot(Cycle& at, std::uint32_t& used) const {
  if (used == requests_per_cycle_) {
    ++at;
    used = 0;
  }
  if (live_ < max_outstanding_) return false;
  const Cycle free = sent_.front().cycle_of(skip_) + latency_;
  if (free <= at) return false;
  at = free;
  used = 0;
  return true;
}

void TmaTraffic::record_sent(Cycle at, std::uint32_t used, std::uint64_t n) {
  // A run continues the last one where its first line takes the slot after the last one's.
  if (!sent_.empty() && sent_.back().followed_by(at, used)) {
    sent_.back().count += static_cast<std::uint32_t>(n);
  } else {
    MemoryPort::Burst run;
    run.count = static_cast<std::uint32_t>(n);
    run.first = at;
    run.first_slots = requests_per_cycle_ - used;
    run.per_cycle = requests_per_cycle_;
    sent_.push_back(run);
  }
  live_ += n;
  // Only the last max_outstanding_ lines can hold a later one back.
  while (live_ > max_outstanding_) {
    const std::uint64_t drop = std::min(live_ - max_outstanding_, sent_.front().count - skip_);
    skip_ += drop;
    live_ -= drop;
    if (skip_ == sent_.front().count) {
      sent_.pop_front();
      skip_ = 0;
    }
  }
}

void TmaTraffic::time_lines(Cycle now, std::uint32_t slot) {
  // Line by line, the op's first step comes once it is ready and the op before it has sent its
  // last line; each line then takes the first cycle with a send left of `requests_per_cycle_`
  // in which fewer than `max_outstanding_` lines are in flight. Answered in send order, a line
  // finds a slot once the line max_outstanding_ before it is answered, in the cycle of that
  // response (responses come before steps within a cycle).
  Op& op = ops_[slot];
  // Only the count of the op's lines matters here; the addresses where they may repeat.
  std::uint64_t lines;
  if (const auto counted = count_in_closed_form(op.op)) {
    lines = *counted;
  } else {
    generate(op.op);
    lines = requests_.size();
  }
  Cycle at = op.ready;
  std::uint32_t used = 0;
  if (budget_cycle_ != kNever && budget_cycle_ >= at) {
    at = budget_cycle_;
    used = budget_used_;
  }
  const std::uint64_t done = std::uint64_t{slot} << 32 | kLandedBit;
  if (lines == 0) {
    // Box outside the tensor, or an empty bulk copy: done at the first step that could send.
    first_free_slot(at, used);
    // The step that completes it starts its cycle's sends afresh.
    if (budget_cycle_ == kNever || at > budget_cycle_) {
      budget_cycle_ = at;
      budget_used_ = used;
    }
    events_.schedule(at, *this, done, Priority::kEngine);
    return;
  }
  const bool store = op.op.op == Opcode::kTmaStore;
  const MemRequest request{0, request_bytes_, sm_, store, false, slot, this};
  // The lines go to the port as runs, each a line in every send slot from its first.
  MemoryPort::Burst run{request, nullptr, 0, at, 0, requests_per_cycle_};
  for (std::uint64_t left = lines; left > 0;) {
    if (first_free_slot(at, used) && run.count != 0) {
      memory_->send_counted(now, run);
      run.count = 0;
    }
    if (run.count == 0) {
      run.first = at;
      run.first_slots = requests_per_cycle_ - used;
    }
    // One send a cycle: the lines up to the end of the run that holds them back (or until the
    // window fills) follow it cycle for cycle, each no earlier than the one before it; the first
    // found its slot, so all do. With more sends a cycle, line by line.
    std::uint64_t n = 1;
    if (requests_per_cycle_ == 1)
      n = std::min(
          left, live_ < max_outstanding_ ? max_outstanding_ - live_ : sent_.front().count - skip_);
    record_sent(at, used, n);
    run.count += static_cast<std::uint32_t>(n);
    left -= n;
    // The slot of the last line sent.
    if (requests_per_cycle_ == 1) {
      at += n - 1;
      used = 1;
    } else {
      ++used;
    }
  }
  memory_->send_counted(now, run);
  budget_cycle_ = at;
  budget_used_ = used;
  line_count_.add(lines);
  if (stores_complete_when_sent_ && store)
    events_.schedule(at + 1, *this, sent_payload(slot, op.serial), Priority::kEngine);
  events_.schedule(at + latency_, *this, done, Priority::kMemory);
}

Cycle TmaTraffic::loaded_floor(Cycle now, const TmaOp& op) {
  if (loaded_bytes_per_cycle_ == 0 || op.op == Opcode::kTmaStore) return 0;
  if (load_bytes_in_flight_ == 0) memory_->count_loading_sm(+1);
  const double ahead = double(load_bytes_in_flight_) * dram_share_ * memory_->sms_loading();
  load_bytes_in_flight_ += op.bytes;
  // With nothing ahead the load's own latency stands: the base is a 16 KiB box's, more than a
  // small copy takes (the cold 128 B chase, ~790 cycles on the H200).
  if (ahead == 0) return 0;
  return now + loaded_base_ + static_cast<Cycle>(ahead / loaded_bytes_per_cycle_);
}

void TmaTraffic::generate(const TmaOp& op) {
  requests_.clear();
  next_request_ = 0;
  // With dedup, a row's first unit that repeats the last one generated is dropped here (box rows
  // narrower than a line share it); the rest is left to deduplicate_out_of_order() unless every
  // row starts past the last one (the usual layout), when no line can repeat.
  bool in_order = true;
  std::size_t repeats = 0;
  auto segment = [&](Addr addr, std::uint64_t bytes) {
    if (bytes == 0) return;
    Addr unit = unit_start(addr);
    const Addr last = unit_start(addr + bytes - 1);
    if (dedup_ && !requests_.empty()) {
      if (unit == requests_.back()) {
        unit += request_bytes_;
        ++repeats;
      } else if (unit < requests_.back()) {
        in_order = false;
      }
    }
    for (; unit <= last; unit += request_bytes_) requests_.push_back(unit);
  };
  if (op.op == Opcode::kTmaBulk)
    segment(op.addr, op.bytes);
  else
    op.map->for_each_row(op.coords, segment);
  if (dedup_ && !in_order) deduplicate_out_of_order(repeats);
  else if (repeats != 0) dedup_saved_.add(repeats);
  if (edge_rows_requested_ && op.op == Opcode::kTmaLoad) append_edge_requests(op);
}

std::uint64_t TmaTraffic::edge_request_count(const TmaOp& op) const {
  const std::int64_t row_bytes = std::int64_t{op.map->box[0]} * op.map->elem_bytes;
  return op.map->rows_outside(op.coords) *
         static_cast<std::uint64_t>(ceil_div(row_bytes, request_bytes_));
}

void TmaTraffic::append_edge_requests(const TmaOp& op) {
  const std::uint64_t n = edge_request_count(op);
  if (n == 0) return;
  for (std::uint64_t i = 0; i < n; ++i)
    requests_.push_back(kEdgeBase + (i % edge_line_count_) * request_bytes_);
  edge_requests_.add(n);
}

std::optional<std::uint64_t> TmaTraffic::count_in_closed_form(const TmaOp& op) {
  auto units = [&](Addr addr, std::uint64_t bytes) {
    return (unit_start(addr + bytes - 1) - unit_start(addr)) / request_bytes_ + 1;
  };
  if (op.op == Opcode::kTmaBulk) return op.bytes == 0 ? 0 : units(op.addr, op.bytes);
  const TensorMap& m = *op.map;
  auto inside = [&](std::uint32_t d) {
    const std::int64_t lo = std::max<std::int64_t>(op.coords[d], 0);
    const std::int64_t hi = std::min<std::int64_t>(std::int64_t{op.coords[d]} + m.box[d],
                                                   static_cast<std::int64_t>(m.shape[d]));
    return std::pair{lo, std::max(hi, lo)};
  };
  // The rows inside run along one dimension past the first (`step` bytes apart); the others
  // hold one index each inside the tensor, or none.
  const auto [lo0, hi0] = inside(0);
  Addr first = m.base + static_cast<Addr>(lo0) * m.elem_bytes;
  std::uint64_t rows = hi0 > lo0 ? 1 : 0;
  std::uint64_t step = 0;
  for (std::uint32_t d = 1; d < m.rank; ++d) {
    const auto [lo, hi] = inside(d);
    first += static_cast<Addr>(lo) * m.stride[d];
    if (hi - lo == 1) continue;
    if (rows > 1) return std::nullopt;
    rows *= static_cast<std::uint64_t>(hi - lo);
    step = m.stride[d];
  }
  std::uint64_t lines = 0;
  if (rows != 0) {
    const std::uint64_t per_row =
        units(first, static_cast<std::uint64_t>(hi0 - lo0) * m.elem_bytes);
    // Every row then starts at the same place in its unit, and with dedup none reaches the next
    // row's first unit: no line repeats, and the rows' units add up.
    if (rows > 1 && (step % request_bytes_ != 0 || (dedup_ && step < per_row * request_bytes_)))
      return std::nullopt;
    lines = rows * per_row;
  }
  if (edge_rows_requested_ && op.op == Opcode::kTmaLoad) {
    const std::uint64_t edge = edge_request_count(op);
    edge_requests_.add(edge);
    lines += edge;
  }
  return lines;
}

void TmaTraffic::deduplicate_out_of_order(std::size_t repeats) {
  const std::size_t before = requests_.size();
  // Keep each line at its first position, so requests still leave in box order.
  dedup_scratch_.clear();
  for (std::size_t i = 0; i < requests_.size(); ++i)
    dedup_scratch_.emplace_back(requests_[i], static_cast<std::uint32_t>(i));
  std::sort(dedup_scratch_.begin(), dedup_scratch_.end());
  dedup_scratch_.erase(
      std::unique(dedup_scratch_.begin(), dedup_scratch_.end(),
                  [](const auto& a, const auto& b) { return a.first == b.first; }),
      dedup_scratch_.end());
  std::sort(dedup_scratch_.begin(), dedup_scratch_.end(),
            [](const auto& a, const auto& b) { return a.second < b.second; });
  requests_.clear();
  for (const auto& entry : dedup_scratch_) requests_.push_back(entry.first);
  dedup_saved_.add(repeats + before - requests_.size());
}

void TmaTraffic::on_event(Cycle now, std::uint64_t payload) {
  if (payload & kLandedBit) return complete(now, static_cast<std::uint32_t>(payload >> 32));
  if (payload != 0) return report_sent(now, payload);
  step_pending_ = false;
  if (bursts_) return book(now);
  if (budget_cycle_ != now) {
    budget_cycle_ = now;
    budget_used_ = 0;
  }
  while (budget_used_ < requests_per_cycle_ && outstanding_ < max_outstanding_) {
    if (generating_ == kNoOp) {
      if (waiting_.empty() || ops_[waiting_.front()].ready > now) break;
      const std::uint32_t slot = waiting_.front();
      waiting_.pop();
      generate(ops_[slot].op);
      ops_[slot].requests = static_cast<std::uint32_t>(requests_.size());
      if (requests_.empty()) {  // box outside the tensor, or an empty bulk copy
        complete(now, slot);
        continue;
      }
      generating_ = slot;
      line_request_ = MemRequest{0, request_bytes_, sm_, ops_[slot].op.op == Opcode::kTmaStore,
                                 false, slot, this};
    }
    MemRequest request = line_request_;
    request.addr = requests_[next_request_++];
    if (next_request_ == requests_.size()) {
      Op& op = ops_[generating_];
      op.generated = true;
      if (stores_complete_when_sent_ && request.write)
        events_.schedule(now + 1, *this, sent_payload(generating_, op.serial), Priority::kEngine);
      generating_ = kNoOp;
    }
    ++outstanding_;
    ++budget_used_;
    line_count_.add();
    memory_->send(now, request);
  }
  arm(now);
}

void TmaTraffic::on_response(Cycle now, const MemRequest& request) {
  --outstanding_;
  const auto slot = static_cast<std::uint32_t>(request.token);
  Op& op = ops_[slot];
  ++op.returned;
  if (loaded_bytes_per_cycle_ != 0 && !request.write) {
    op.from_dram += request.from_dram;
    // The share of the SM's recent lines fetched from DRAM, over about its last 256.
    dram_share_ += ((request.from_dram ? 1.0 : 0.0) - dram_share_) / 256;
  }
  const Cycle landed = port_line_time_ != 0 && !request.write ? pass_port(now) : now;
  if (op.generated && op.returned == op.requests) {
    if (landed == now)
      complete(now, slot);
    else
      events_.schedule(landed, *this, std::uint64_t{slot} << 32 | kLandedBit, Priority::kEngine);
  }
  if (bursts_) return book(now);
  arm(now);
}

void TmaTraffic::book(Cycle now) {
  // Line by line, a step sends while requests may be in flight, `requests_per_cycle_` a cycle,
  // each op's first once it is ready; a response frees a slot for the next step. Booked ahead,
  // line j leaves at the same cycle: the first slot after line j - 1's, at or after the op's
  // ready cycle and after a request slot frees (now). Responses only free slots, so the lines
  // booked while slots are free would each have found one at their step too.
  while (outstanding_ < max_outstanding_) {
    // The first free slot: in the cycle of the last booked line, or the next, or now.
    Cycle at = now;
    std::uint32_t used = 0;
    if (budget_cycle_ != kNever && budget_cycle_ >= now) {
      at = budget_cycle_;
      used = budget_used_;
      if (used >= requests_per_cycle_) {
        ++at;
        used = 0;
      }
    }
    if (generating_ == kNoOp) {
      if (waiting_.empty()) break;
      const std::uint32_t slot = waiting_.front();
      waiting_.pop();
      generate(ops_[slot].op);
      ops_[slot].requests = static_cast<std::uint32_t>(requests_.size());
      generating_ = slot;
    }
    Op& op = ops_[generating_];
    if (op.ready > at) {
      at = op.ready;
      used = 0;
    }
    if (requests_.empty()) {  // box outside the tensor, or an empty bulk copy: done at its turn
      if (at > now) {
        if (!step_pending_) events_.schedule(at, *this, 0, Priority::kEngine);
        step_pending_ = true;
        break;
      }
      const std::uint32_t slot = generating_;
      generating_ = kNoOp;
      complete(now, slot);
      continue;
    }
    const auto n = static_cast<std::uint32_t>(
        std::min<std::size_t>(requests_.size() - next_request_, max_outstanding_ - outstanding_));
    const bool store = op.op.op == Opcode::kTmaStore;
    MemRequest request{0, request_bytes_, sm_, store, false, generating_, this};
    // Lines leaving in this very cycle, none of the engine's booked in it before, go at once
    // (from a response, at memory priority rather than the engine's: the usual case while
    // max_outstanding binds, one line a response); the others as a burst.
    const std::uint32_t direct = at == now && used == 0 ? std::min(n, requests_per_cycle_) : 0;
    const std::size_t first = next_request_;
    budget_cycle_ = at + (used + n - 1) / requests_per_cycle_;
    budget_used_ = (used + n - 1) % requests_per_cycle_ + 1;
    next_request_ += n;
    outstanding_ += n;
    line_count_.add(n);
    if (next_request_ == requests_.size()) {
      op.generated = true;
      if (stores_complete_when_sent_ && store)
        events_.schedule(budget_cycle_ + 1, *this, sent_payload(generating_, op.serial),
                         Priority::kEngine);
      generating_ = kNoOp;
    }
    // Both before the next op's generate() reuses requests_.
    for (std::uint32_t i = 0; i < direct; ++i) {
      request.addr = requests_[first + i];
      memory_->send(now, request);
    }
    if (n > direct)
      memory_->send_burst(
          now, MemoryPort::Burst{request, &requests_[first + direct], n - direct,
                                 direct > 0 ? now + 1 : at,
                                 direct > 0 ? requests_per_cycle_ : requests_per_cycle_ - used,
                                 requests_per_cycle_});
  }
}

Cycle TmaTraffic::pass_port(Cycle now) {
  // The line passes when it arrives or when the port has done with the line before it, the
  // later of the two; the port is then busy for this line's bytes.
  const std::uint64_t start = std::max(now * kPortScale, port_free_);
  port_free_ = start + port_line_time_;
  return start == now * kPortScale ? now : (start + kPortScale - 1) / kPortScale;
}

void TmaTraffic::complete(Cycle now, std::uint32_t slot) {
  if (loaded_bytes_per_cycle_ != 0 && ops_[slot].op.op != Opcode::kTmaStore) {
    Op& op = ops_[slot];
    // The loaded-DRAM law holds a load that went to DRAM until its floor (on_event brings it back
    // here, the floor cleared); its bytes stay in flight until then.
    if (op.from_dram != 0 && op.not_before > now) {
      loaded_ops_.add();
      loaded_cycles_.add(op.not_before - now);
      events_.schedule(op.not_before, *this, std::uint64_t{slot} << 32 | kLandedBit,
                       Priority::kEngine);
      op.not_before = 0;
      return;
    }
    load_bytes_in_flight_ -= op.op.bytes;
    if (load_bytes_in_flight_ == 0) memory_->count_loading_sm(-1);
  }
  const std::uint64_t token = ops_[slot].op.token;
  const std::uint32_t bytes = ops_[slot].op.bytes;
  const bool reported = ops_[slot].reported;
  ops_[slot].serial = 0;  // a sent-report still pending for it finds no op
  ops_.release(slot);
  busy_.end(now);
  if (!reported) client_->on_tma_complete(now, token, bytes);
}

void TmaTraffic::report_sent(Cycle now, std::uint64_t payload) {
  const auto slot = static_cast<std::uint32_t>(payload & 0xffffffff) - 1;
  Op& op = ops_[slot];
  if (op.serial != payload >> 32 || op.reported) return;
  op.reported = true;
  client_->on_tma_complete(now, op.op.token, op.op.bytes);
}

Cycle TmaTraffic::next_step(Cycle now) const {
  if (outstanding_ >= max_outstanding_) return kNever;
  Cycle at;
  if (generating_ != kNoOp)
    at = now;
  else if (!waiting_.empty())
    at = std::max(now, ops_[waiting_.front()].ready);
  else
    return kNever;
  if (at == now && budget_cycle_ == now && budget_used_ >= requests_per_cycle_) ++at;
  return at;
}

void TmaTraffic::arm(Cycle now) {
  // A pending step is never later than needed: it waits either for the next cycle's budget or
  // for the FIFO head's setup, and neither an issue (appends behind the head) nor a response
  // (frees a request slot) makes anything possible earlier.
  if (step_pending_) return;
  const Cycle at = next_step(now);
  if (at == kNever) return;
  step_pending_ = true;
  // A port that runs steps runs it in the place of its event: the steps that the engines of all
  // SMs arm one after another cost one event (docs/performance.md §16).
  if (port_steps_) return memory_->defer_step(at, *this);
  events_.schedule(at, *this, 0, Priority::kEngine);
}

void TmaTraffic::finish(Cycle end) { busy_.finish(end); }

}  // namespace simfa::engines
