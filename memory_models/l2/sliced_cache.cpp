#include "sliced_cache.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <string>

#include "host_prefetch.h"
#include "simfa/error.h"
#include "simfa/int_math.h"

#if defined(__linux__)
#include <sys/mman.h>
#else
#include <cstdlib>
#include <cstring>
#endif
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace simfa::memory_models {

namespace {

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
      .unit("memory cycles")
      .def(200)
      .range(1, 1e6)
      .doc("memory cycles from a slice taking a request to its response on a hit (>= 1)");
  // 0.25: A100's 5120 B/clk of L2 read bandwidth (NVIDIA A100 whitepaper) over 160 slices is
  // 32 B/clk per slice: one 128 B line every 4 cycles.
  schema.real("requests_per_cycle")
      .unit("requests/memory cycle")
      .def(0.25)
      .range(1.0 / 1024, 64)
      .doc("requests one slice takes per memory cycle (fractional: one every 1/x cycles)");
  // 256: the paper's calibration (IV-C, Figure 4: the inflection of a 192..384 sweep).
  schema.integer("mshr_per_slice")
      .unit("MSHRs")
      .def(256)
      .range(1, 65536)
      .doc("misses in flight per slice; a miss to a line already in flight merges, a miss "
           "finding none free waits at the head of the slice's queue");
  // modulo: Accel-Sim's and the paper's set index. fold: rows a large power of two apart share
  // the low bits of line / slices and crowd a few sets of each slice (30 MiB of panels at a
  // 64 KiB pitch: 26% of their lines find no way under modulo; docs/memory-hierarchy.md §3).
  schema.string("set_index")
      .def("modulo")
      .choices({"modulo", "fold"})
      .doc("set of a line within its slice, from q = line / slices: modulo takes q mod sets; fold "
           "takes (q ^ q >> b ^ q >> 2b ^ ...) mod sets, b the bits of sets - 1, so rows a large "
           "power of two apart spread over every set (docs/memory-hierarchy.md §2)");
  // What a timed "cold L2" holds depends on how it was emptied: a write flush (triton's do_bench,
  // `cache.zero_()` of 256 MiB; validation/h200's GEMM, attention and ring runs) leaves every set
  // full of the flush buffer's lines, part of them dirty, which the kernel's misses write back; a
  // read flush (membench.cu's and dram_stride.cu's flush_read) leaves clean ones, as good as empty.
  schema.real("start_dirty")
      .unit("share of lines")
      .def(0)
      .range(0, 1)
      .doc("the L2 at the start as a write flush leaves it (such as do_bench's cache.zero_()): "
           "above 0, every way holds a line of a buffer the run never reads, this share of them "
           "dirty and written back when a miss evicts it; 0: empty (as good as after a read "
           "flush)");
  schema.slot("slice_map", "slice", "picks the slice of each line");
  schema.slot("replacement", "replacement", "picks the way a new line evicts from a full set",
              "replacement.lru");

  schema.stat("hits", StatKind::kCounter, "requests",
              "requests served from the cache (shadow copies included)");
  schema.stat("misses", StatKind::kCounter, "requests",
              "requests that found their line absent (merged ones included)");
  schema.stat("hit_rate", StatKind::kFormula, "ratio", "hits / (hits + misses)");
  schema.stat("writebacks", StatKind::kCounter, "lines",
              "dirty lines evicted, each written back as its dirty sectors");
  schema.stat("llc_read_bytes", StatKind::kCounter, "bytes",
              "bytes of read requests arriving at the L2");
  schema.stat("llc_write_bytes", StatKind::kCounter, "bytes",
              "bytes of write requests arriving at the L2");
  schema.stat("slice[i].hits", StatKind::kCounter, "requests",
              "requests this slice served from its lines");
  schema.stat("slice[i].misses", StatKind::kCounter, "requests",
              "requests this slice missed (merged ones included)");
  schema.stat("slice[i].mshr_merges", StatKind::kCounter, "requests",
              "misses merged into an MSHR already fetching their line");
  schema.stat("slice[i].queue_wait_cycles", StatKind::kCounter, "cycles",
              "cycles requests spent in this slice's queue (bandwidth and MSHR stalls)");
  schema.stat(
      "slice[i].mshr_occupancy", StatKind::kHistogram, "cycles",
      "cycles spent at each MSHR occupancy (bucket width ceil(mshr_per_slice / 16); the overflow "
      "bucket counts cycles with every MSHR busy when mshr_per_slice is a multiple of 16 or at "
      "most 16)");
}

SlicedCache::SlicedCache(const BuildContext& context)
    : events_(context.events),
      replacement_(&slot_as<ReplacementPolicy>(context, "replacement")),
      slice_count_(u32(context.params.integer("slices"))),
      assoc_(u32(context.params.integer("assoc"))),
      line_bytes_(u32(context.params.integer("line_bytes"))),
      sector_bytes_(u32(context.params.integer("sector_bytes"))),
      mshrs_(u32(context.params.integer("mshr_per_slice"))),
      start_dirty_(context.params.real("start_dirty")),
      // The slices count memory cycles; the event queue, SM cycles.
      hit_latency_(context.gpu.memory_clock().latency_in(
          context.gpu.sm_clock(),
          static_cast<std::uint64_t>(context.params.integer("hit_latency")))),
      interval_(static_cast<std::uint64_t>(
          std::llround(static_cast<double>(std::uint64_t{1} << kRateShift) /
                       context.gpu.memory_clock().rate_in(
                           context.gpu.sm_clock(), context.params.real("requests_per_cycle"))))),
      hits_(context.stats.counter("hits")),
      misses_(context.stats.counter("misses")),
      writebacks_(context.stats.counter("writebacks")),
      llc_read_bytes_(context.stats.counter("llc_read_bytes")),
      llc_write_bytes_(context.stats.counter("llc_write_bytes")),
      predictor_(static_cast<std::size_t>(std::max(context.gpu.sm_count, 1))) {
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
  if (std::has_single_bit(line_bytes_)) line_shift_ = std::countr_zero(line_bytes_);
  slice_divisor_ = Divisor(slice_count_);
  set_divisor_ = Divisor(sets_);
  if (params.string("set_index") == "fold") {
    fold_sets_ = true;
    set_fold_ = XorFold(std::max(1, static_cast<int>(std::bit_width(sets_ - 1))));
  }

  const std::size_t sets = std::size_t{slice_count_} * sets_;
  state_word_ = round_up(std::size_t{assoc_}, 16) / 2;  // whole lines of 16 keys
  mask_word_ = state_word_ + (assoc_ + 7) / 8;
  block_words_ = round_up(mask_word_ + 3, 8);  // whole 64-byte lines
  blocks_ = HostTable(sets * block_words_ * sizeof(std::uint64_t));
  block_base_ = static_cast<std::uint64_t*>(blocks_.data());
  dirty_.assign(sets * assoc_, 0);

  const std::uint32_t buckets = std::min<std::uint32_t>(mshrs_, 16);
  const auto width = static_cast<std::uint32_t>(ceil_div(mshrs_, buckets));
  slice_state_.resize(slice_count_);
  for (std::uint32_t i = 0; i < slice_count_; ++i) {
    Slice& s = slice_state_[i];
    s.mshr_lines = LineChains(std::size_t{mshrs_} * 2);
    const StatsScope scope = context.stats.child("slice[" + std::to_string(i) + "]");
    s.stats = {&scope.counter("hits"), &scope.counter("misses"), &scope.counter("mshr_merges"),
               &scope.counter("queue_wait_cycles"),
               &scope.histogram("mshr_occupancy", width, buckets)};
  }
  context.stats.formula("hit_rate", Formula{{"hits"}, {"hits", "misses"}, 1.0});
}

void SlicedCache::connect(const SliceMap& slice_map, MemoryPort& dram) {
  slice_map_ = &slice_map;
  dram_ = &dram;
  if (start_dirty_ > 0) fill_dirty();
}

void SlicedCache::fill_dirty() {
  // A write flush leaves every way holding one of the flush buffer's lines. The L2 has written
  // the older ones of each set back already: the dirty ones are a set's newest, so misses evict
  // clean lines first and write back once a set's clean ones are gone; how many are dirty varies
  // from set to set, evenly between (2 share - 1) x assoc and 2 share x assoc (within 0 and
  // assoc), which gives silicon's curve of write-backs against bytes read (docs/calibration.md
  // §42). The flush buffer's lines, consecutive from just below the first tensor (keys stay
  // narrow for the frontends' workloads), go to their sets until every way is taken.
  const std::size_t sets = std::size_t{slice_count_} * sets_;
  std::vector<std::uint8_t> filled(sets, 0);
  std::size_t left = sets;
  const std::uint64_t first = line_of(kFlushBufferBase);
  const double low = std::max(0.0, 2 * start_dirty_ - 1), high = std::min(1.0, 2 * start_dirty_);
  // Every set fills long before the limit with any slice map that spreads lines; a map that
  // never reaches some set leaves it partly empty rather than looping.
  const std::uint64_t limit = std::uint64_t{4} * sets * assoc_;
  for (std::uint64_t line = first; left != 0 && line - first < limit; ++line) {
    const std::size_t b = block_of(slice_of(line, slice_count_), line);
    const std::uint32_t k = filled[b];
    if (k == assoc_) continue;
    const Way way = install_in_block(0, b, line, false);
    // The set's place in [0, 1), a fixed scatter (the golden ratio's fraction), and from it its
    // dirty count; its last `dirty` lines in are dirty.
    const double scattered = static_cast<double>(b) * 0.6180339887498949;
    const double place = scattered - std::floor(scattered);
    const auto dirty = static_cast<std::uint32_t>(std::lround((low + (high - low) * place) * assoc_));
    if (k + dirty >= assoc_) mark_dirty(way, full_mask_);
    if (++filled[b] == assoc_) --left;
  }
  // The flush lines keep their own lines (kWideKey), and the narrow keys' window is left to the
  // workload's first line: a workload far from the buffer (a trace's tensors at 8 GiB) would
  // otherwise get wide keys and a scan of the set's wide ways at every lookup.
  if (wide_lines_.empty()) wide_lines_.assign(sets * assoc_, 0);
  for (std::size_t b = 0; b < sets; ++b) {
    std::uint64_t* set = block(b);
    for (std::uint32_t w = 0; w < assoc_; ++w) {
      if (keys(set)[w] == 0) continue;
      wide_lines_[b * assoc_ + w] = line_in(b, set, w);
      keys(set)[w] = kWideKey;
    }
  }
  key_base_set_ = false;
}

void SlicedCache::finish(Cycle end) {
  for (Slice& s : slice_state_) occupancy_changed(s, end);
}

HostTable::HostTable(std::size_t bytes) {
  if (bytes == 0) return;
#if defined(__linux__)
  // Anonymous memory comes zeroed. The mapping is padded so that the table can start on a 2 MiB
  // boundary: the kernel backs only aligned 2 MiB stretches with huge pages.
  constexpr std::size_t kHuge = std::size_t{2} << 20;
  const std::size_t padded = bytes + kHuge;
  void* p = mmap(nullptr, padded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    throw Error("l2: cannot map " + std::to_string(padded) + " bytes for the tag array");
  mapping_ = p;
  mapping_bytes_ = padded;
  const std::uintptr_t start = round_up(reinterpret_cast<std::uintptr_t>(p), kHuge);
  data_ = reinterpret_cast<void*>(start);
  // Advice only: without huge pages the table works the same, on 4 KiB pages.
  madvise(data_, round_up(bytes, kHuge), MADV_HUGEPAGE);
#else
  const std::size_t rounded = round_up(bytes, 64);
  mapping_ = std::aligned_alloc(64, rounded);
  if (mapping_ == nullptr)
    throw Error("l2: cannot allocate " + std::to_string(rounded) + " bytes for the tag array");
  std::memset(mapping_, 0, rounded);
  mapping_bytes_ = rounded;
  data_ = mapping_;
#endif
}

HostTable& HostTable::operator=(HostTable&& other) noexcept {
  if (this != &other) {
    release();
    mapping_ = std::exchange(other.mapping_, nullptr);
    mapping_bytes_ = std::exchange(other.mapping_bytes_, 0);
    data_ = std::exchange(other.data_, nullptr);
  }
  return *this;
}

void HostTable::release() {
  if (mapping_ == nullptr) return;
#if defined(__linux__)
  munmap(mapping_, mapping_bytes_);
#else
  std::free(mapping_);
#endif
  mapping_ = nullptr;
  data_ = nullptr;
}

SlicedCache::Divisor::Divisor(std::uint64_t d) {
  // l = ceil(log2 d); m = floor(2^64 (2^l - d) / d) + 1 fits in 64 bits.
  const int l = d <= 1 ? 0 : 64 - std::countl_zero(d - 1);
  multiplier_ = static_cast<std::uint64_t>((((Uint128{1} << l) - d) << 64) / d + 1);
  shift1_ = std::min(l, 1);
  shift2_ = std::max(l - 1, 0);
}

std::uint32_t SlicedCache::shadow_ways(std::uint32_t slice, std::uint64_t line) const {
  // Shadow bits are kept for valid ways only.
  return static_cast<std::uint32_t>(std::popcount(shadow_mask(block(block_of(slice, line)))));
}

void SlicedCache::prefetch_block(std::size_t b) const {
  __builtin_prefetch(block(b));
}

void SlicedCache::enqueue(Cycle now, std::uint32_t slice, std::size_t b, const MemRequest& request,
                          Route route) {
  Slice& s = slice_state_[slice];
  const std::uint64_t line = line_of(request.addr);
  const Queued q{line, allocate_pending(request, now, route), static_cast<std::uint32_t>(b)};
  // A scheduled drain, an MSHR release or the drain on the stack gets to it; otherwise the
  // slice is idle and takes it now.
  if (s.wake_pending || s.blocked || s.draining || !s.queue.empty()) {
    s.queue.push(q);
    if (!s.wake_pending && !s.blocked && !s.draining) drain(slice, now);
    return;
  }
  // The usual case, an idle slice with an empty queue: drain() of a queue holding only this
  // request, without queueing it.
  if (s.next_free >= (now + 1) << kRateShift) {  // this cycle's bandwidth is spent
    s.queue.push(q);
    s.wake_pending = true;
    events_.schedule(s.next_free >> kRateShift, *this, slice, Priority::kMemory);
    return;
  }
  s.draining = true;
  if (!access(slice, q, now)) {  // no MSHR: wait for a fill to free one
    s.queue.push(q);
    s.blocked = true;
    s.draining = false;
    return;
  }
  // It waited no cycle (queue_wait_cycles += 0).
  s.next_free = std::max(s.next_free, now << kRateShift) + interval_;
  s.draining = false;
  if (!s.queue.empty()) drain(slice, now);  // requests the hooks queued here meanwhile
}

void SlicedCache::insert_shadow(Cycle now, std::size_t b, std::uint64_t line) {
  install_in_block(now, b, line, true);
}

void SlicedCache::invalidate_shadow(std::size_t b, std::uint64_t line) {
  std::uint64_t* set = block(b);
  const std::uint32_t w = find_in(set, line);
  if (w == kNone) return;
  const std::uint64_t bit = std::uint64_t{1} << w;
  if ((shadow_mask(set) & bit) == 0) return;
  keys(set)[w] = 0;
  shadow_mask(set) &= ~bit;
  dirty_mask(set) &= ~bit;  // shadow copies are never written; kept for the invariant
}

void SlicedCache::on_event(Cycle now, std::uint64_t payload) {
  if (payload & kRespond) {
    ResponseClass& c = response_classes_[static_cast<std::uint32_t>(payload)];
    const std::uint32_t n = c.batches.front();
    c.batches.pop();
    // A response's client may send again, which schedules responses of later cycles only (the
    // hit latency is at least one cycle): they queue behind this batch's n.
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::uint32_t p = c.scheduled.front();
      c.scheduled.pop();
      if (c.scheduled.size() > kPrefetchAhead)
        prefetch_object(&pending_[c.scheduled.at(kPrefetchAhead)]);
      if (c.scheduled.size() > kHintAhead) {
        const Pending& soon = pending_[c.scheduled.at(kHintAhead)];
        soon.client->prefetch_response(soon.request());
      }
      // Copy out and free first: the client may send again from inside on_response.
      const MemRequest request = pending_[p].request();
      free_pending(p);
      request.client->on_response(now, request);
    }
    return;
  }
  const auto slice = static_cast<std::uint32_t>(payload);
  slice_state_[slice].wake_pending = false;
  drain(slice, now);
}

// A DRAM response: a fill (token = slice << 32 | the pending request owning the MSHR) or a
// write-back's acknowledgement.
void SlicedCache::on_response(Cycle now, const MemRequest& response) {
  if (response.token == kWritebackToken) return;
  const auto slice = static_cast<std::uint32_t>(response.token >> 32);
  const auto owner = static_cast<std::uint32_t>(response.token);
  // The waiters' entries were written when they missed, a DRAM round trip ago: fetch the owner's
  // while the line (the fill's own address) is installed, and each next waiter's while the one
  // before is answered (docs/performance.md §14).
  prefetch_object(&pending_[owner]);
  Slice& s = slice_state_[slice];
  const std::uint64_t line = line_of(response.addr);
  const Way way = install(now, slice, line, false);
  occupancy_changed(s, now);
  s.mshr_lines.erase(line, owner, mshr_link());
  --s.mshrs_busy;
  // Waiters in arrival order, the owner first; on_served touches other slices only, so `way`
  // stays this line's.
  for (std::uint32_t p = owner; p != kNone;) {
    const Pending waiter = pending_[p];
    if (waiter.next != kNone) prefetch_object(&pending_[waiter.next]);
    if (p == owner) pending_[p].route_flags |= Pending::kFilled;  // its answer says from_dram
    const MemRequest request = waiter.request();
    if (request.write) mark_dirty(way, sector_mask(request));
    on_served(now, slice, line, way.block - slice, request, waiter.route());
    respond(p, now + hit_latency_ + waiter.extra_latency);
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
    const Queued q = s.queue.front();
    const Cycle arrival = pending_[q.p].arrival();
    if (!access(slice, q, now)) {  // no MSHR: wait for a fill to free one
      s.blocked = true;
      break;
    }
    s.queue.pop();
    s.stats.queue_wait_cycles->add(now - arrival);
    s.next_free = std::max(s.next_free, now << kRateShift) + interval_;
  }
  if (s.wake_pending) {
    // The next head is served at the drain just scheduled, a few cycles on: start fetching its
    // entry, its set and, for a miss, its MSHR bucket, which it may have waited for long enough
    // to leave the host's caches (docs/performance.md §8).
    const Queued next = s.queue.front();
    prefetch_object(&pending_[next.p]);
    const std::uint64_t* set = block(next.block);
    __builtin_prefetch(set);
    __builtin_prefetch(state(set));
    s.mshr_lines.prefetch(next.line);
  }
  s.draining = false;
}

bool SlicedCache::access(std::uint32_t slice, Queued q, Cycle now) {
  Slice& s = slice_state_[slice];
  const std::uint32_t p = q.p;
  // Copies: the hooks may add pending requests, which can move the pool.
  const MemRequest request = pending_[p].request();
  const Route route = pending_[p].route();
  const std::uint64_t line = q.line;
  const Way way{q.block, find_in(block(q.block), line)};

  if (!way.found() && route.shadow) {  // the shadow copy was evicted while the request waited
    free_pending(p);
    on_shadow_miss(now, request);
    return true;
  }
  if (way.found()) {
    touch(way);
    if (request.write) mark_dirty(way, sector_mask(request));
    hits_.add();
    s.stats.hits->add();
    on_served(now, slice, line, q.block - slice, request, route);
    respond(p, now + hit_latency_ + route.extra_latency);
    return true;
  }

  if (const std::uint32_t owner = s.mshr_lines.find(line, mshr_line(), mshr_link());
      owner != LineChains::kNone) {
    pending_[p].next = kNone;
    pending_[pending_[owner].last_waiter()].next = p;
    pending_[owner].last_waiter() = p;
    misses_.add();
    s.stats.misses->add();
    s.stats.mshr_merges->add();
    return true;
  }
  if (request.write && sector_mask(request) == full_mask_) {  // nothing to fetch
    mark_dirty(install_in_block(now, q.block, line, false), full_mask_);
    misses_.add();
    s.stats.misses->add();
    on_served(now, slice, line, q.block - slice, request, route);
    respond(p, now + hit_latency_ + route.extra_latency);
    return true;
  }
  if (s.mshrs_busy == mshrs_) return false;
  occupancy_changed(s, now);
  ++s.mshrs_busy;
  Pending& entry = pending_[p];
  entry.next = kNone;
  entry.last_waiter() = p;
  s.mshr_lines.insert(line, p, mshr_line(), mshr_link());
  misses_.add();
  s.stats.misses->add();
  dram_->send(now, MemRequest{line * line_bytes_, line_bytes_, request.sm, false, false,
                              std::uint64_t{slice} << 32 | p, this});
  return true;
}

void SlicedCache::respond(std::uint32_t p, Cycle when) {
  const std::uint32_t extra = pending_[p].extra_latency;
  std::uint32_t c = 0;
  while (c < response_classes_.size() && response_classes_[c].extra_latency != extra) ++c;
  if (c == response_classes_.size()) response_classes_.push_back({extra, {}, {}, kNever});
  ResponseClass& cls = response_classes_[c];
  cls.scheduled.push(p);
  // A batch of `when` still pending takes it (`when` is after now, so the batch has not fired).
  if (cls.last_batch == when) {
    ++cls.batches.back();
    return;
  }
  cls.batches.push(1);
  cls.last_batch = when;
  events_.schedule(when, *this, kRespond | c, Priority::kMemory);
}

void SlicedCache::throw_extra_latency(Cycle extra_latency) {
  throw Error("l2: a route's extra latency of " + std::to_string(extra_latency) +
              " cycles is beyond the 2^32 - 1 the L2 keeps");
}

std::uint64_t SlicedCache::ways_keyed(const std::uint64_t* set, std::uint32_t key) const {
  const std::uint32_t* k = keys(set);
  std::uint64_t ways = 0;
#if defined(__SSE2__)
  // A line of 16 keys at a time: four 4-key compares, packed to 16 bytes of 0 or -1.
  const __m128i wanted = _mm_set1_epi32(static_cast<int>(key));
  for (std::uint32_t w = 0; w < assoc_; w += 16) {
    const auto* line = reinterpret_cast<const __m128i*>(k + w);
    const __m128i low = _mm_packs_epi32(_mm_cmpeq_epi32(_mm_load_si128(line), wanted),
                                        _mm_cmpeq_epi32(_mm_load_si128(line + 1), wanted));
    const __m128i high = _mm_packs_epi32(_mm_cmpeq_epi32(_mm_load_si128(line + 2), wanted),
                                         _mm_cmpeq_epi32(_mm_load_si128(line + 3), wanted));
    ways |= std::uint64_t{static_cast<std::uint16_t>(_mm_movemask_epi8(_mm_packs_epi16(low, high)))}
            << w;
  }
#else
  for (std::uint32_t w = 0; w < assoc_; ++w) ways |= std::uint64_t{k[w] == key} << w;
#endif
  // The keys past assoc_ that pad the last line are 0.
  return assoc_ == 64 ? ways : ways & ((std::uint64_t{1} << assoc_) - 1);
}

std::uint32_t SlicedCache::find_in(const std::uint64_t* set, std::uint64_t line) const {
  // A hit updates the replacement state next: start fetching its line alongside the keys.
  __builtin_prefetch(state(set));
  const std::uint32_t key = key_of(line);
  std::uint64_t ways = ways_keyed(set, key);
  // A line holds one way of its set at most, and a key other than kWideKey names one line.
  if (key != kWideKey)
    return ways != 0 ? static_cast<std::uint32_t>(std::countr_zero(ways)) : kNone;
  const auto b = static_cast<std::size_t>(set - block_base_) / block_words_;
  for (; ways != 0; ways &= ways - 1) {
    const auto w = static_cast<std::uint32_t>(std::countr_zero(ways));
    if (wide_lines_[b * assoc_ + w] == line) return w;
  }
  return kNone;
}

SlicedCache::Way SlicedCache::find(std::uint32_t slice, std::uint64_t line) const {
  const std::size_t b = block_of(slice, line);
  return Way{b, find_in(block(b), line)};
}

SlicedCache::Way SlicedCache::install_in_block(Cycle now, std::size_t b, std::uint64_t line,
                                               bool shadow) {
  std::uint64_t* set = block(b);
  // The first empty way, else the policy's victim.
  const std::uint64_t empty = ways_keyed(set, 0);
  const ReplacementPolicy::Set state = replacement_state(set);
  const std::uint32_t victim = empty != 0 ? static_cast<std::uint32_t>(std::countr_zero(empty))
                                          : replacement_->victim(state);
  const std::uint64_t bit = std::uint64_t{1} << victim;
  if (empty == 0 && (dirty_mask(set) & bit) != 0) {
    writebacks_.add();
    const auto bytes =
        static_cast<std::uint32_t>(std::popcount(dirty_[b * assoc_ + victim])) * sector_bytes_;
    dram_->send(now, MemRequest{line_in(b, set, victim) * line_bytes_, bytes, 0, true, false,
                                kWritebackToken, this});
  }
  if (!key_base_set_) {
    // The tensors of a workload lie close together, often far above 0 (kFirstTensorBase: line
    // 2^40 with 128-byte lines). No key was given before: a lookup found nothing whatever the
    // base.
    key_base_ = line - std::min(line, std::uint64_t{1} << 31);
    key_base_set_ = true;
  }
  const std::uint32_t key = key_of(line);
  keys(set)[victim] = key;
  if (key == kWideKey) {
    if (wide_lines_.empty()) wide_lines_.assign(std::size_t{slice_count_} * sets_ * assoc_, 0);
    wide_lines_[b * assoc_ + victim] = line;
  }
  replacement_->on_fill(state, victim);
  dirty_mask(set) &= ~bit;
  shadow_mask(set) = shadow ? shadow_mask(set) | bit : shadow_mask(set) & ~bit;
  return Way{b, victim};
}

void SlicedCache::mark_dirty(Way w, std::uint32_t sectors) {
  std::uint64_t& mask = dirty_mask(block(w.block));
  const std::uint64_t bit = std::uint64_t{1} << w.way;
  std::uint32_t& dirty = dirty_[w.block * assoc_ + w.way];
  // A way that is not dirty has no sectors to keep (they are not cleared on eviction).
  dirty = ((mask & bit) != 0 ? dirty : 0) | sectors;
  mask |= bit;
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
    s.stats.mshr_occupancy->sample(s.mshrs_busy, now - s.occupancy_since);
  s.occupancy_since = now;
}

}  // namespace simfa::memory_models
