#include "sliced_cache.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <string>

namespace simfa::memory_models {

namespace {
const char* const kHitsDoc = "requests served from the cache (shadow copies included)";
const char* const kMissesDoc = "requests that found their line absent (merged ones included)";
const char* const kHitRateDoc = "hits / (hits + misses)";
const char* const kWritebacksDoc = "dirty lines evicted, each written back as its dirty sectors";
const char* const kLlcReadDoc = "bytes of read requests arriving at the L2";
const char* const kLlcWriteDoc = "bytes of write requests arriving at the L2";
const char* const kSliceHitsDoc = "requests this slice served from its lines";
const char* const kSliceMissesDoc = "requests this slice missed (merged ones included)";
const char* const kMergesDoc = "misses merged into an MSHR already fetching their line";
const char* const kWaitDoc = "cycles requests spent in this slice's queue (bandwidth and MSHR stalls)";
const char* const kOccupancyDoc =
    "cycles spent at each MSHR occupancy (bucket width ceil(mshr_per_slice / 16); the overflow "
    "bucket counts cycles with every MSHR busy when mshr_per_slice is a multiple of 16 or at most 16)";

std::uint32_t u32(std::int64_t v) { return static_cast<std::uint32_t>(v); }
}  // namespace

void SlicedCache::describe(Schema& schema) {
  // 160 slices: Accel-Sim's A100 model (configs/tested-cfgs/SM80_A100/gpgpusim.config:
  // gpgpu_n_mem 40 x gpgpu_n_sub_partition_per_mchannel 4) gives its 10 active 512-bit memory
  // controllers 16 L2 slices each; H100/H800 SXM5 also enable 10 of GH100's 12 512-bit controllers
  // (Chips and Cheese, "Nvidia's H100: Funny L2, and Tons of Bandwidth", 2023), so 10 x 16.
  schema.integer("slices")
      .unit("slices")
      .def(160)
      .range(1, 4096)
      .doc("L2 slices; the slice_map picks one per line");
  // 50 MiB: H100/H800 SXM5 (NVIDIA H100 whitepaper; the paper's two 25 MB partitions, IV-C).
  schema.size("size")
      .def(std::int64_t{50} << 20)
      .range(16, 1024.0 * 1024 * 1024)
      .doc("total capacity over all slices; size / (slices x assoc x line_bytes) sets per slice");
  // 16 ways: Accel-Sim's A100 L2 (gpgpu_cache:dl2 S:128:128:16).
  schema.integer("assoc").unit("ways").def(16).range(1, 64).doc("ways per set");
  // 128 B lines of four 32 B sectors: NVIDIA's L2 line and sector (CUDA C++ Best Practices
  // Guide, "Coalesced Access to Global Memory"; Accel-Sim dl2 S:128:128:16 ... ,32).
  schema.integer("line_bytes").unit("bytes").def(128).range(16, 4096).doc("bytes per line");
  schema.integer("sector_bytes")
      .unit("bytes")
      .def(32)
      .range(1, 4096)
      .doc("dirty-tracking granularity: an eviction writes back only the dirty sectors (fills "
           "are whole lines)");
  // 200 cycles: Accel-Sim's L2 hit path on A100/H100 (gpgpu_l2_rop_latency 200); calibrated per
  // card from the pointer-chase floor (validation/h200/).
  schema.integer("hit_latency")
      .unit("cycles")
      .def(200)
      .range(1, 1e6)
      .doc("cycles from a slice taking a request to its response on a hit (>= 1)");
  // 0.25: A100's 5120 B/clk of L2 read bandwidth (NVIDIA A100 whitepaper) over 160 slices is
  // 32 B/clk per slice: one 128 B line every 4 cycles.
  schema.real("requests_per_cycle")
      .unit("requests/cycle")
      .def(0.25)
      .range(1.0 / 1024, 64)
      .doc("requests one slice takes per cycle (fractional: one every 1/x cycles)");
  // 256: the paper's calibration (IV-C, Figure 4: the inflection of a 192..384 sweep).
  schema.integer("mshr_per_slice")
      .unit("MSHRs")
      .def(256)
      .range(1, 65536)
      .doc("misses in flight per slice; a miss to a line already in flight merges, a miss "
           "finding none free waits at the head of the slice's queue");
  schema.slot("slice_map", "slice", "picks the slice of each line");

  schema.stat("hits", StatKind::kCounter, "requests", kHitsDoc);
  schema.stat("misses", StatKind::kCounter, "requests", kMissesDoc);
  schema.stat("hit_rate", StatKind::kFormula, "ratio", kHitRateDoc);
  schema.stat("writebacks", StatKind::kCounter, "lines", kWritebacksDoc);
  schema.stat("llc_read_bytes", StatKind::kCounter, "bytes", kLlcReadDoc);
  schema.stat("llc_write_bytes", StatKind::kCounter, "bytes", kLlcWriteDoc);
  schema.stat("slice[i].hits", StatKind::kCounter, "requests", kSliceHitsDoc);
  schema.stat("slice[i].misses", StatKind::kCounter, "requests", kSliceMissesDoc);
  schema.stat("slice[i].mshr_merges", StatKind::kCounter, "requests", kMergesDoc);
  schema.stat("slice[i].queue_wait_cycles", StatKind::kCounter, "cycles", kWaitDoc);
  schema.stat("slice[i].mshr_occupancy", StatKind::kHistogram, "cycles", kOccupancyDoc);
}

SlicedCache::SlicedCache(const BuildContext& context)
    : events_(context.events),
      slice_count_(u32(context.params.integer("slices"))),
      assoc_(u32(context.params.integer("assoc"))),
      line_bytes_(u32(context.params.integer("line_bytes"))),
      sector_bytes_(u32(context.params.integer("sector_bytes"))),
      mshrs_(u32(context.params.integer("mshr_per_slice"))),
      hit_latency_(static_cast<Cycle>(context.params.integer("hit_latency"))),
      interval_(static_cast<std::uint64_t>(
          std::llround(static_cast<double>(std::uint64_t{1} << kRateShift) /
                       context.params.real("requests_per_cycle")))),
      hits_(context.stats.counter("hits", "requests", kHitsDoc)),
      misses_(context.stats.counter("misses", "requests", kMissesDoc)),
      writebacks_(context.stats.counter("writebacks", "lines", kWritebacksDoc)),
      llc_read_bytes_(context.stats.counter("llc_read_bytes", "bytes", kLlcReadDoc)),
      llc_write_bytes_(context.stats.counter("llc_write_bytes", "bytes", kLlcWriteDoc)) {
  const Params& params = context.params;
  const std::int64_t size = params.size_bytes("size");
  const std::int64_t set_bytes = std::int64_t{slice_count_} * assoc_ * line_bytes_;
  if (size % set_bytes != 0)
    params.fail("size", "size (" + std::to_string(size) + " bytes) must be slices (" +
                            std::to_string(slice_count_) + ") x assoc (" + std::to_string(assoc_) +
                            ") x line_bytes (" + std::to_string(line_bytes_) +
                            ") x sets, with sets per slice a positive integer, but " +
                            std::to_string(size) + " / " + std::to_string(set_bytes) +
                            " is not a positive integer");
  sets_ = u32(size / set_bytes);  // >= 1: size > 0 and set_bytes divides it
  if (line_bytes_ % sector_bytes_ != 0 || line_bytes_ / sector_bytes_ > 32)
    params.fail("sector_bytes", "line_bytes (" + std::to_string(line_bytes_) +
                                    ") must be a multiple of sector_bytes (" +
                                    std::to_string(sector_bytes_) + ") with at most 32 sectors");
  const std::uint32_t sectors = line_bytes_ / sector_bytes_;
  full_mask_ = sectors == 32 ? ~std::uint32_t{0} : (std::uint32_t{1} << sectors) - 1;
  if (interval_ == 0) interval_ = 1;

  const std::size_t ways = std::size_t{slice_count_} * sets_ * assoc_;
  tags_.assign(ways, kInvalid);
  state_.assign(ways, WayState{});
  mshr_entries_.resize(std::size_t{slice_count_} * mshrs_);

  const std::uint32_t buckets = std::min<std::uint32_t>(mshrs_, 16);
  const std::uint32_t width = (mshrs_ + buckets - 1) / buckets;
  slice_state_.resize(slice_count_);
  for (std::uint32_t i = 0; i < slice_count_; ++i) {
    Slice& s = slice_state_[i];
    s.free_mshrs.resize(mshrs_);
    // Popped from the back: MSHR 0 is used first.
    for (std::uint32_t m = 0; m < mshrs_; ++m) s.free_mshrs[m] = mshrs_ - 1 - m;
    s.mshr_lines = LineTable(mshrs_);
    const StatsScope scope = context.stats.child("slice[" + std::to_string(i) + "]");
    s.stats = {&scope.counter("hits", "requests", kSliceHitsDoc),
               &scope.counter("misses", "requests", kSliceMissesDoc),
               &scope.counter("mshr_merges", "requests", kMergesDoc),
               &scope.counter("queue_wait_cycles", "cycles", kWaitDoc),
               &scope.histogram("mshr_occupancy", "cycles", kOccupancyDoc, width, buckets)};
  }
  context.stats.formula("hit_rate", "ratio", kHitRateDoc, Formula{{"hits"}, {"hits", "misses"}, 1.0});
}

void SlicedCache::connect(const SliceMap& slice_map, MemoryPort& dram) {
  slice_map_ = &slice_map;
  dram_ = &dram;
}

void SlicedCache::finish(Cycle end) {
  for (Slice& s : slice_state_) occupancy_changed(s, end);
}

std::uint32_t SlicedCache::shadow_ways(std::uint32_t slice, std::uint64_t line) const {
  const std::size_t base = set_base(slice, line);
  std::uint32_t n = 0;
  for (std::size_t w = base; w < base + assoc_; ++w) n += tags_[w] != kInvalid && state_[w].shadow;
  return n;
}

void SlicedCache::count_arrival(const MemRequest& request) {
  (request.write ? llc_write_bytes_ : llc_read_bytes_).add(request.bytes);
}

void SlicedCache::enqueue(Cycle now, std::uint32_t slice, const MemRequest& request, Route route) {
  Slice& s = slice_state_[slice];
  s.queue.push_back(allocate_pending(request, now, route));
  // A scheduled drain, an MSHR release or the drain on the stack gets to it; otherwise the
  // slice is idle and takes it now.
  if (s.wake_pending || s.blocked || s.draining) return;
  drain(slice, now);
}

void SlicedCache::insert_shadow(Cycle now, std::uint32_t slice, std::uint64_t line) {
  install(now, slice, line, true);
}

void SlicedCache::invalidate_shadow(std::uint32_t slice, std::uint64_t line) {
  const std::size_t way = find(slice, line);
  if (way != kNoWay && state_[way].shadow) {
    tags_[way] = kInvalid;
    state_[way] = WayState{};
  }
}

void SlicedCache::on_event(Cycle now, std::uint64_t payload) {
  if (payload & kRespond) {
    const auto p = static_cast<std::uint32_t>(payload & ~kRespond);
    // Copy out and free first: the client may send again from inside on_response.
    const MemRequest request = pending_[p].request;
    free_pending(p);
    request.client->on_response(now, request);
    return;
  }
  const auto slice = static_cast<std::uint32_t>(payload);
  slice_state_[slice].wake_pending = false;
  drain(slice, now);
}

// A DRAM response: a fill (token = the MSHR's global index) or a write-back's acknowledgement.
void SlicedCache::on_response(Cycle now, const MemRequest& response) {
  if (response.token == kWritebackToken) return;
  const auto global = static_cast<std::uint32_t>(response.token);
  const std::uint32_t slice = global / mshrs_;
  Slice& s = slice_state_[slice];
  const Mshr entry = mshr_entries_[global];
  const std::size_t way = install(now, slice, entry.line, false);
  occupancy_changed(s, now);
  s.mshr_lines.erase(entry.line);
  s.free_mshrs.push_back(global - slice * mshrs_);
  // Waiters in arrival order; on_served touches other slices only, so `way` stays this line's.
  for (std::uint32_t p = entry.head; p != kNone;) {
    const Pending waiter = pending_[p];
    if (waiter.request.write) state_[way].dirty |= sector_mask(waiter.request);
    on_served(now, slice, entry.line, waiter.request, waiter.route);
    respond(p, now + hit_latency_ + waiter.route.extra_latency);
    p = waiter.next;
  }
  if (s.blocked) {
    s.blocked = false;
    drain(slice, now);
  }
}

void SlicedCache::drain(std::uint32_t slice, Cycle now) {
  Slice& s = slice_state_[slice];
  s.draining = true;
  const std::uint64_t next_cycle = (now + 1) << kRateShift;
  while (!s.queue.empty()) {
    if (s.next_free >= next_cycle) {  // this cycle's bandwidth is spent
      s.wake_pending = true;
      events_.schedule(s.next_free >> kRateShift, *this, slice, Priority::kMemory);
      break;
    }
    const std::uint32_t p = s.queue.front();
    const Cycle arrival = pending_[p].arrival;
    if (!access(slice, p, now)) {  // no MSHR: wait for a fill to free one
      s.blocked = true;
      break;
    }
    s.queue.pop_front();
    s.stats.queue_wait_cycles->add(now - arrival);
    s.next_free = std::max(s.next_free, now << kRateShift) + interval_;
  }
  s.draining = false;
}

bool SlicedCache::access(std::uint32_t slice, std::uint32_t p, Cycle now) {
  Slice& s = slice_state_[slice];
  // Copies: the hooks may add pending requests, which can move the pool.
  const MemRequest request = pending_[p].request;
  const Route route = pending_[p].route;
  const std::uint64_t line = line_of(request.addr);
  const std::size_t way = find(slice, line);

  if (way == kNoWay && route.shadow) {  // the shadow copy was evicted while the request waited
    free_pending(p);
    on_shadow_miss(now, request);
    return true;
  }
  if (way != kNoWay) {
    touch(way);
    if (request.write) state_[way].dirty |= sector_mask(request);
    hits_.add();
    s.stats.hits->add();
    on_served(now, slice, line, request, route);
    respond(p, now + hit_latency_ + route.extra_latency);
    return true;
  }

  const std::uint32_t base = slice * mshrs_;
  if (const std::uint32_t m = s.mshr_lines.find(line); m != LineTable::kNone) {
    Mshr& e = mshr_entries_[base + m];
    pending_[p].next = kNone;
    pending_[e.tail].next = p;
    e.tail = p;
    misses_.add();
    s.stats.misses->add();
    s.stats.mshr_merges->add();
    return true;
  }
  if (request.write && sector_mask(request) == full_mask_) {  // nothing to fetch
    const std::size_t w = install(now, slice, line, false);
    state_[w].dirty = full_mask_;
    misses_.add();
    s.stats.misses->add();
    on_served(now, slice, line, request, route);
    respond(p, now + hit_latency_ + route.extra_latency);
    return true;
  }
  if (s.free_mshrs.empty()) return false;
  occupancy_changed(s, now);
  const std::uint32_t m = s.free_mshrs.back();
  s.free_mshrs.pop_back();
  s.mshr_lines.insert(line, m);
  mshr_entries_[base + m] = Mshr{line, p, p};
  pending_[p].next = kNone;
  misses_.add();
  s.stats.misses->add();
  dram_->send(now, MemRequest{line * line_bytes_, line_bytes_, request.sm, false, base + m, this});
  return true;
}

void SlicedCache::respond(std::uint32_t p, Cycle when) {
  events_.schedule(when, *this, kRespond | p, Priority::kMemory);
}

std::uint32_t SlicedCache::allocate_pending(const MemRequest& request, Cycle now, Route route) {
  const Pending entry{request, now, route, kNone};
  if (free_pending_.empty()) {
    pending_.push_back(entry);
    return static_cast<std::uint32_t>(pending_.size() - 1);
  }
  const std::uint32_t p = free_pending_.back();
  free_pending_.pop_back();
  pending_[p] = entry;
  return p;
}

std::size_t SlicedCache::find(std::uint32_t slice, std::uint64_t line) const {
  const std::size_t base = set_base(slice, line);
  for (std::size_t w = base; w < base + assoc_; ++w)
    if (tags_[w] == line) return w;
  return kNoWay;
}

std::size_t SlicedCache::install(Cycle now, std::uint32_t slice, std::uint64_t line, bool shadow) {
  const std::size_t base = set_base(slice, line);
  std::size_t victim = base;
  for (std::size_t w = base; w < base + assoc_; ++w) {
    if (tags_[w] == kInvalid) {
      victim = w;
      break;
    }
    if (state_[w].stamp < state_[victim].stamp) victim = w;
  }
  if (tags_[victim] != kInvalid && state_[victim].dirty != 0) {
    writebacks_.add();
    const auto bytes =
        static_cast<std::uint32_t>(std::popcount(state_[victim].dirty)) * sector_bytes_;
    dram_->send(now, MemRequest{tags_[victim] * line_bytes_, bytes, 0, true, kWritebackToken, this});
  }
  tags_[victim] = line;
  state_[victim] = WayState{++tick_, 0, shadow ? 1u : 0u};
  return victim;
}

std::uint32_t SlicedCache::sector_mask(const MemRequest& request) const {
  const std::uint64_t offset = request.addr % line_bytes_;
  const std::uint64_t last_byte = std::min<std::uint64_t>(
      offset + std::max<std::uint32_t>(request.bytes, 1) - 1, line_bytes_ - 1);
  const std::uint64_t first = offset / sector_bytes_, last = last_byte / sector_bytes_;
  // Bits first..last, computed in 64 bits so that last = 31 needs no special case.
  return static_cast<std::uint32_t>(((std::uint64_t{2} << last) - 1) &
                                    ~((std::uint64_t{1} << first) - 1));
}

void SlicedCache::occupancy_changed(Slice& s, Cycle now) {
  if (now > s.occupancy_since)
    s.stats.mshr_occupancy->sample(mshrs_ - s.free_mshrs.size(), now - s.occupancy_since);
  s.occupancy_since = now;
}

void SlicedCache::RequestQueue::push_back(std::uint32_t value) {
  auto mask = static_cast<std::uint32_t>(buffer_.size()) - 1;
  if (count_ == buffer_.size()) {
    std::vector<std::uint32_t> grown(buffer_.size() * 2);
    for (std::uint32_t i = 0; i < count_; ++i) grown[i] = buffer_[(head_ + i) & mask];
    buffer_ = std::move(grown);
    head_ = 0;
    mask = static_cast<std::uint32_t>(buffer_.size()) - 1;
  }
  buffer_[(head_ + count_) & mask] = value;
  ++count_;
}

}  // namespace simfa::memory_models
