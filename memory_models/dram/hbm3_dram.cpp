// dram.hbm3: the component around the channels: parameters, clock domains, requests, events.
#include "hbm3_dram.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "simfa/int_math.h"

namespace simfa::memory_models {

namespace {

// The preset-overridable integer fields, each a manifest key of the same name whose default -1
// keeps the preset's value, and the least value it may be set to.
template <typename Struct>
struct IntField {
  const char* name;
  int Struct::*member;
  const char* unit;
  int min;
  const char* doc;
};

// Largest values: far beyond any device, small enough that products of organization fields
// (banks per channel, bits per burst) and sums of timing fields cannot overflow.
constexpr double kOrganizationMax = 4096;
constexpr double kTimingMax = 1e7;

constexpr IntField<Hbm3Organization> kOrganizationFields[] = {
    {"stacks", &Hbm3Organization::stacks, "stacks", 1, "HBM stacks"},
    {"channels_per_stack", &Hbm3Organization::channels_per_stack, "channels", 1,
     "independent channels per stack"},
    {"pseudo_channels", &Hbm3Organization::pseudo_channels, "pseudo-channels", 1,
     "pseudo-channels per channel, each with its own data bus and banks"},
    {"bank_groups", &Hbm3Organization::bank_groups, "bank groups", 1,
     "bank groups per pseudo-channel"},
    {"banks_per_group", &Hbm3Organization::banks_per_group, "banks", 1, "banks per bank group"},
    {"columns", &Hbm3Organization::columns, "bursts", 1,
     "bursts per row (the row buffer holds columns x burst bytes)"},
    {"pc_width_bits", &Hbm3Organization::pc_width_bits, "bits", 1,
     "data pins per pseudo-channel"},
    {"burst_length", &Hbm3Organization::burst_length, "beats", 1, "data beats per burst"},
};

constexpr IntField<Hbm3Timing> kTimingFields[] = {
    {"nBL", &Hbm3Timing::nBL, "tCK", 1, "data-bus cycles of one burst"},
    {"nCL", &Hbm3Timing::nCL, "tCK", 1, "read latency: RD to first data"},
    {"nCWL", &Hbm3Timing::nCWL, "tCK", 0, "write latency: WR to first data"},
    {"nRCD", &Hbm3Timing::nRCD, "tCK", 1, "ACT to RD or WR in the same bank"},
    {"nRP", &Hbm3Timing::nRP, "tCK", 1, "PRE to ACT in the same bank"},
    {"nRAS", &Hbm3Timing::nRAS, "tCK", 1, "ACT to PRE in the same bank"},
    {"nRC", &Hbm3Timing::nRC, "tCK", 1, "ACT to ACT in the same bank"},
    {"nWR", &Hbm3Timing::nWR, "tCK", 0, "write recovery: end of write data to PRE, same bank"},
    {"nRTP", &Hbm3Timing::nRTP, "tCK", 1, "RD to PRE in the same bank"},
    {"nCCDS", &Hbm3Timing::nCCDS, "tCK", 1,
     "RD to RD or WR to WR in different bank groups of a pseudo-channel"},
    {"nCCDL", &Hbm3Timing::nCCDL, "tCK", 1, "RD to RD or WR to WR in the same bank group"},
    {"nRRDS", &Hbm3Timing::nRRDS, "tCK", 1,
     "ACT to ACT in different bank groups of a pseudo-channel"},
    {"nRRDL", &Hbm3Timing::nRRDL, "tCK", 1, "ACT to ACT in the same bank group"},
    {"nFAW", &Hbm3Timing::nFAW, "tCK", 0, "window holding at most four ACTs, per pseudo-channel"},
    {"nWTRS", &Hbm3Timing::nWTRS, "tCK", 0,
     "end of write data to RD in a different bank group"},
    {"nWTRL", &Hbm3Timing::nWTRL, "tCK", 0, "end of write data to RD in the same bank group"},
    {"nRTW", &Hbm3Timing::nRTW, "tCK", 0,
     "read-to-write bus turnaround: end of read data to start of write data"},
    {"nRFC", &Hbm3Timing::nRFC, "tCK", 1, "refresh: REF to ACT"},
    {"nREFI", &Hbm3Timing::nREFI, "tCK", 0, "refresh interval (0: no refresh)"},
    {"nRFCpb", &Hbm3Timing::nRFCpb, "tCK", 0, "per-bank refresh: REFpb to ACT in the refreshed bank"},
    {"nREFIpb", &Hbm3Timing::nREFIpb, "tCK", 0,
     "per-bank refresh interval: a REFpb to the channel's next bank in turn every nREFIpb cycles "
     "(0: no per-bank refresh)"},
};

std::string preset_choices() {
  std::string s;
  for (const Hbm3Preset& p : kHbm3Presets) s += std::string(s.empty() ? "" : ", ") + std::string(p.name);
  return s;
}

template <typename Struct, std::size_t N>
void declare(Schema& schema, const IntField<Struct> (&fields)[N], double max) {
  for (const auto& f : fields)
    schema.integer(f.name)
        .unit(f.unit)
        .def(-1)
        .range(-1, max)
        .doc(std::string(f.doc) + " (-1: the preset's; at least " + std::to_string(f.min) + ")");
}

template <typename Struct, std::size_t N>
void override_fields(const Params& params, const IntField<Struct> (&fields)[N], Struct& out) {
  for (const auto& f : fields) {
    const std::int64_t v = params.integer(f.name);
    if (v == -1) continue;
    if (v < f.min)
      params.fail(f.name, std::string(f.name) + " = " + std::to_string(v) + " must be -1 (the preset's) or at least " +
                              std::to_string(f.min));
    out.*f.member = static_cast<int>(v);
  }
}

// Occupancy buckets of 4 bursts (one 128 B line) up to 256 bursts.
constexpr std::uint64_t kOccupancyBucket = 4;
constexpr std::size_t kOccupancyBuckets = 64;

Hbm3Organization resolve_organization(const Params& params, const Hbm3Preset& preset) {
  Hbm3Organization o = preset.organization;
  override_fields(params, kOrganizationFields, o);
  if (o.pc_width_bits * o.burst_length % 8 != 0)
    params.fail("burst_length", "a burst (pc_width_bits x burst_length = " +
                                    std::to_string(o.pc_width_bits * o.burst_length) +
                                    " bits) must be whole bytes");
  return o;
}

Hbm3Timing resolve_timing(const Params& params, const Hbm3Preset& preset) {
  Hbm3Timing t = preset.timing;
  override_fields(params, kTimingFields, t);
  const double tck = params.real("tCK_ns");
  if (tck != -1.0) {
    if (tck <= 0) params.fail("tCK_ns", "tCK_ns must be -1 (the preset's) or positive");
    t.tCK_ns = tck;
  }
  // A channel refreshes all its banks at once or one at a time: with both, the all-bank REF, which
  // waits for every bank, would wait forever behind the per-bank ones, and no access would issue.
  if (t.nREFI > 0 && t.nREFIpb > 0)
    params.fail("nREFIpb",
                "nREFIpb = " + std::to_string(t.nREFIpb) +
                    " asks for per-bank refresh while nREFI = " + std::to_string(t.nREFI) +
                    " (the preset's unless set) asks for all-bank refresh: set nREFI = 0 "
                    "for per-bank refresh, or nREFIpb = 0 for all-bank");
  return t;
}

const Hbm3Preset& resolve_preset(const Params& params) {
  const Hbm3Preset* p = find_hbm3_preset(params.string("preset"));
  if (!p) params.fail("preset", "unknown preset '" + params.string("preset") + "' (one of " + preset_choices() + ")");
  return *p;
}

std::uint32_t resolve_interleave(const Params& params, const Hbm3Organization& o) {
  const auto bytes = static_cast<std::uint32_t>(params.integer("interleave_bytes"));
  const auto burst = static_cast<std::uint32_t>(o.burst_bytes());
  const auto row = std::uint64_t{burst} * static_cast<std::uint64_t>(o.columns);
  if (bytes % burst != 0 || row % bytes != 0)
    params.fail("interleave_bytes", "interleave_bytes = " + std::to_string(bytes) +
                                        " must be a multiple of the burst (" + std::to_string(burst) +
                                        " B) that divides the row (columns x burst = " +
                                        std::to_string(row) + " B)");
  return bytes;
}

Hbm3AddressMap resolve_map(const Params& params, const Hbm3Organization& o) {
  const std::uint32_t interleave = resolve_interleave(params, o);
  // The schema allows only these two.
  const Hbm3AddressHash hash =
      params.string("address_hash") == "xor" ? Hbm3AddressHash::kXor : Hbm3AddressHash::kNone;
  try {
    return Hbm3AddressMap(params.string("address_mapping"), o, interleave, hash);
  } catch (const std::invalid_argument& e) {
    params.fail("address_mapping", e.what());
  }
}

}  // namespace

void Hbm3Dram::describe(Schema& schema) {
  std::vector<std::string> names;
  for (const Hbm3Preset& p : kHbm3Presets) names.emplace_back(p.name);
  schema.string("preset")
      .def("H800_HBM3")
      .choices(std::move(names))
      .doc("organization and timing to start from (memory_models/dram/hbm3_config.h cites each); "
           "every field below overrides its value");
  declare(schema, kOrganizationFields, kOrganizationMax);
  schema.real("tCK_ns")
      .unit("ns")
      .def(-1.0)
      .range(-1, 1000)
      .doc("memory clock period; the data rate per pin is burst_length / (nBL x tCK) (-1: the "
           "preset's)");
  declare(schema, kTimingFields, kTimingMax);
  schema.string("address_mapping")
      .def("RoCoBaBgStChPc")
      .doc("how an interleave granule's index splits into row (Ro), column group (Co), bank (Ba), "
           "bank group (Bg), pseudo-channel (Pc), channel (Ch) and stack (St), most significant "
           "first, Ro first (docs/memory-hierarchy.md)");
  schema.string("address_hash")
      .def("none")
      .choices({"none", "xor"})
      .doc("none: the mapping's digits as they are; xor: the channel-level (Pc, Ch, St) and "
           "bank-level (Bg, Ba) digits XORed with GF(2) residues of the digits above them, so "
           "that rows a power-of-two stride apart spread over every channel and bank (a "
           "bijection; docs/memory-hierarchy.md)");
  schema.integer("interleave_bytes")
      .unit("bytes")
      .def(128)
      .range(1, 1 << 20)
      .doc("bytes kept in consecutive columns of one row before the address map moves on (a "
           "whole number of bursts dividing the row)");
  // 16: Ramulator's FRFCFS_Cap scheduler cap (CMU-SAFARI/ramulator, src/Scheduler.h).
  schema.integer("max_row_hits")
      .unit("column commands")
      .def(16)
      .range(1, 1e9)
      .doc("column commands an open row may serve before its remaining hits lose their priority "
           "over an older request to another row of the same bank");
  // 0: the device alone. A card's manifest calibrates it from a pointer chase's DRAM plateau
  // (configs/h200.toml, docs/calibration.md).
  schema.real("controller_latency_ns")
      .unit("ns")
      .def(0.0)
      .range(0, 1e6)
      .doc("fixed time added to every response after its last data: the path between the L2 "
           "and the devices (crossbar, controller queues, PHY) that the bank timing leaves out");

  DramTotals::describe(schema);
  schema.stat("row_hits", StatKind::kCounter, "commands",
              "column commands that found their row open");
  schema.stat("row_misses", StatKind::kCounter, "commands",
              "column commands whose row was opened in a precharged bank");
  schema.stat("row_conflicts", StatKind::kCounter, "commands",
              "column commands whose bank had another row to close first");
  schema.stat("row_hit_rate", StatKind::kFormula, "ratio",
              "row_hits / (row_hits + row_misses + row_conflicts)");
  schema.stat("activates", StatKind::kCounter, "commands", "ACT commands");
  schema.stat("precharges", StatKind::kCounter, "commands", "PRE and PREA commands");
  schema.stat("refreshes", StatKind::kCounter, "commands",
              "REF commands, each refreshing a whole channel, and REFpb commands, each one bank");
  schema.stat("channel[i].row_hits", StatKind::kCounter, "commands", "row_hits in this channel");
  schema.stat("channel[i].row_misses", StatKind::kCounter, "commands", "row_misses in this channel");
  schema.stat("channel[i].row_conflicts", StatKind::kCounter, "commands", "row_conflicts in this channel");
  schema.stat("channel[i].read_bytes", StatKind::kCounter, "bytes",
              "bytes of read bursts on the data bus");
  schema.stat("channel[i].write_bytes", StatKind::kCounter, "bytes",
              "bytes of write bursts on the data bus");
  schema.stat("channel[i].achieved_bandwidth", StatKind::kFormula, "GB/s",
              "(read_bytes + write_bytes) / run time");
  schema.stat("channel[i].queue_occupancy", StatKind::kHistogram, "bursts",
              "bursts queued in the channel, sampled at each arrival");
}

Hbm3Dram::Hbm3Dram(const BuildContext& context)
    : events_(context.events),
      organization_(resolve_organization(context.params, resolve_preset(context.params))),
      timing_(resolve_timing(context.params, resolve_preset(context.params))),
      clock_(context.gpu.sm_clock()),
      tck_(femtoseconds_from_ns(timing_.tCK_ns)),
      controller_latency_(femtoseconds_from_ns(context.params.real("controller_latency_ns"))),
      burst_bytes_(static_cast<std::uint32_t>(organization_.burst_bytes())),
      map_(resolve_map(context.params, organization_)),
      totals_(context.stats, context.gpu.clock_mhz) {
  const StatsScope& s = context.stats;
  const DramTotalCounters totals{s.counter("row_hits"),      s.counter("row_misses"),
                                 s.counter("row_conflicts"), s.counter("activates"),
                                 s.counter("precharges"),    s.counter("refreshes")};
  s.formula("row_hit_rate",
            Formula{{"row_hits"}, {"row_hits", "row_misses", "row_conflicts"}, 1.0});

  const auto count = static_cast<std::uint32_t>(organization_.channels());
  const auto max_row_hits = static_cast<std::uint32_t>(context.params.integer("max_row_hits"));
  channels_.reserve(count);
  wakes_.resize(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::string name = "channel[" + std::to_string(i) + "]";
    const StatsScope c = s.child(name);
    const DramChannelCounters own{
        c.counter("row_hits"),
        c.counter("row_misses"),
        c.counter("row_conflicts"),
        c.counter("read_bytes"),
        c.counter("write_bytes"),
        c.histogram("queue_occupancy", kOccupancyBucket, kOccupancyBuckets)};
    totals_.bandwidth_formula(name + ".achieved_bandwidth",
                              {name + ".read_bytes", name + ".write_bytes"});
    DramBurstListener& listener = *this;
    channels_.emplace_back(i, organization_, timing_, max_row_hits, listener, own, totals);
  }
}

void Hbm3Dram::set_command_observer(DramCommandObserver* observer) {
  for (Hbm3Channel& c : channels_) c.set_observer(observer);
}

MemCycle Hbm3Dram::horizon(Cycle c) const {
  // Asked for the same cycle by every send and wake within it: remembered (128-bit division).
  if (c != horizon_cycle_) {
    horizon_cycle_ = c;
    horizon_ = static_cast<MemCycle>(clock_.start_of(c) / tck_);
  }
  return horizon_;
}

Cycle Hbm3Dram::sm_cycle_of(MemCycle m) const {
  return clock_.cycle_at_or_after(static_cast<Femtoseconds>(m) * tck_);
}

void Hbm3Dram::send(Cycle now, const MemRequest& request) {
  now_ = now;
  totals_.count(request);

  const Addr first = request.addr - request.addr % burst_bytes_;
  const Addr end = request.addr + std::max<std::uint32_t>(request.bytes, 1);
  const auto bursts =
      static_cast<std::uint32_t>(ceil_div(static_cast<std::int64_t>(end - first), burst_bytes_));

  const std::uint32_t slot =
      pending_.add(Pending{.request = request, .sent = now, .done = 0, .bursts_left = bursts});

  // Everything a channel does up to the current memory cycle happens before this request
  // arrives, at the next memory-clock edge. A request's bursts mostly share a channel: each run
  // of them is queued, then the channel's wake set once.
  const MemCycle h = horizon(now);
  std::uint32_t channel = 0;
  // Consecutive bursts to one row (those of one interleave granule, at least) are queued as one
  // run.
  DramLocation at, run_at;
  std::uint32_t run = 0;
  for (std::uint32_t k = 0; k < bursts; ++k) {
    const Addr burst = first + Addr{k} * burst_bytes_;
    if (k == 0 || map_.starts_granule(burst)) at = map_.locate(burst);
    if (run > 0 && at.channel == run_at.channel && at.pseudo_channel == run_at.pseudo_channel &&
        at.bank_group == run_at.bank_group && at.bank == run_at.bank && at.row == run_at.row) {
      ++run;
      continue;
    }
    if (run > 0) channels_[channel].enqueue(run_at, request.write, slot, h + 1, run);
    if (k == 0 || at.channel != channel) {
      if (k > 0) arm(channel, now);
      channel = at.channel;
      if (channels_[channel].next_possible() <= h) channels_[channel].advance(h);
    }
    run_at = at;
    run = 1;
  }
  channels_[channel].enqueue(run_at, request.write, slot, h + 1, run);
  arm(channel, now);
}

void Hbm3Dram::arm(std::uint32_t channel, Cycle now) {
  const MemCycle next = channels_[channel].advance(horizon(now));
  Wake& wake = wakes_[channel];
  Cycle at = kNever;  // sm_cycle_of(next), once computed
  if (wake.at != kNever) {
    // A wake still pending is kept when it comes no later than needed and has not been
    // overtaken by this call (one at `now` would find its work done).
    if (!channels_[channel].empty() && wake.at > now && wake.at <= (at = sm_cycle_of(next)))
      return;
    // Instead of cancelled, the wake is left to fire as a no-op: a cancelled event that stays
    // stored puts the kernel's queue on its slow path until time reaches it. It changes no
    // result: it is at `now` (already an event's cycle) or before a command of the bursts queued
    // when it was set, whose response is an event at or after it.
    ++wake.generation;
    wake.at = kNever;
  }
  if (channels_[channel].empty()) return;
  // `next` is past the horizon, so its SM cycle is after `now`.
  wake.at = at != kNever ? at : sm_cycle_of(next);
  events_.schedule(wake.at, *this,
                   kWakeTag | std::uint64_t{wake.generation & kGenerationMask} << 32 | channel,
                   Priority::kMemory);
}

void Hbm3Dram::on_event(Cycle now, std::uint64_t payload) {
  now_ = now;
  if (payload & kWakeTag) {
    const auto channel = static_cast<std::uint32_t>(payload);
    if ((payload >> 32 & kGenerationMask) != (wakes_[channel].generation & kGenerationMask))
      return;  // superseded (see arm())
    wakes_[channel].at = kNever;
    arm(channel, now);
    return;
  }
  const auto slot = static_cast<std::uint32_t>(payload);
  // Copy out and free first: the client may send again from inside on_response.
  const MemRequest request = pending_[slot].request;
  pending_.release(slot);
  request.client->on_response(now, request);
}

void Hbm3Dram::on_burst_done(std::uint32_t request, MemCycle data_end) {
  Pending& p = pending_[request];
  p.done = std::max(p.done, data_end);
  if (--p.bursts_left > 0) return;
  const Cycle at = std::max(
      {clock_.cycle_at_or_after(static_cast<Femtoseconds>(p.done) * tck_ + controller_latency_),
       p.sent + 1, now_});
  events_.schedule(at, *this, request, Priority::kMemory);
}

void Hbm3Dram::finish(Cycle end) {
  totals_.finish(end);
  // Idle channels owe the refreshes due since they went quiet (counted in `refreshes`); busy
  // ones stopped mid-run (a watchdog) and are left as they are.
  for (Hbm3Channel& c : channels_)
    if (c.empty()) c.advance(horizon(end));
}

}  // namespace simfa::memory_models
