#include "lrc_coalescer.h"

#include <algorithm>
#include <string>

#include "host_prefetch.h"
#include "sm_groups.h"

namespace simfa::memory_models {

void LrcCoalescer::describe(Schema& schema) {
  // 2: "coalescing units for every pair of SMs" (the paper, VI-D), as FA3 coalesces across
  // SM pairs.
  schema.integer("group_size")
      .unit("SMs")
      .def(2)
      .range(1, 1024)
      .doc(
          "SMs sharing one coalescing unit: SMs s and t merge when s / group_size == "
          "t / group_size");
  schema.string("group_sizes")
      .def("")
      .doc(
          "sizes of consecutive SM groups, comma-separated (\"16,16,18\": SMs 0-15, 16-31, "
          "32-49), repeating past their sum; empty: groups of group_size");
  schema.integer("max_merged")
      .unit("requests")
      .def(0)
      .range(0, 1024)
      .doc(
          "reads one in-flight read answers besides its own; the next read of the line is "
          "forwarded and opens a new window (0: no limit)");
  // 128 B: the L2 line (CUDA C++ Best Practices Guide, "Coalesced Access to Global Memory").
  schema.integer("line_bytes")
      .unit("bytes")
      .def(128)
      .range(1, 4096)
      .doc("granularity at which requests are identical: same address / line_bytes");
  schema.stat("requests", StatKind::kCounter, "requests", "requests arriving from the SMs");
  schema.stat("merged", StatKind::kCounter, "requests",
              "reads answered by another in-flight read of their SM group");
  schema.stat("forwarded", StatKind::kCounter, "requests",
              "requests sent on to the L2 (requests - merged)");
}

namespace {

// The group of each SM of one period of `group_sizes`, or of one group of `group_size` SMs when
// it is empty.
std::vector<std::uint32_t> group_period(const Params& params) {
  std::vector<std::uint32_t> period = sm_group_period(params, "group_sizes");
  if (period.empty()) period.assign(static_cast<std::size_t>(params.integer("group_size")), 0);
  return period;
}

}  // namespace

LrcCoalescer::LrcCoalescer(const BuildContext& context)
    : group_period_(group_period(context.params)),
      groups_per_period_(group_period_.back() + 1),
      max_merged_(static_cast<std::uint32_t>(context.params.integer("max_merged"))),
      line_bytes_(static_cast<std::uint32_t>(context.params.integer("line_bytes"))),
      windows_(group_of(static_cast<std::uint32_t>(std::max(context.gpu.sm_count, 1)) - 1) + 1,
               LineChains(8, kBucketsPerWindow)),
      requests_(context.stats.counter("requests")),
      merged_(context.stats.counter("merged")),
      forwarded_(context.stats.counter("forwarded")),
      predictor_(static_cast<std::size_t>(std::max(context.gpu.sm_count, 1))) {
  if (std::has_single_bit(line_bytes_)) line_shift_ = std::countr_zero(line_bytes_);
  sm_group_.resize(static_cast<std::size_t>(std::max(context.gpu.sm_count, 1)));
  for (std::uint32_t sm = 0; sm < sm_group_.size(); ++sm) sm_group_[sm] = group_of(sm);
}

void LrcCoalescer::send(Cycle now, const MemRequest& request) {
  requests_.add();
  const std::uint32_t e = allocate(request);
  if (!request.write) {
    LineChains& windows = window_table(request.sm);
    const std::uint64_t line = line_of(request.addr);
    // Start fetching what the SM's next reads will most likely look up, a stage a read: the
    // bucket of the read after next, and the entry heading the bucket of the next read (fetched
    // at this SM's previous read). That entry, a read of another SM of the group, was written a
    // round trip ago: it was send's main stall (docs/performance.md §14).
    const auto [next, after_next] = predictor_.next_two(request.sm, line);
    windows.prefetch(after_next);
    if (const std::uint32_t head = windows.head(next); head != LineChains::kNone)
      prefetch_object(&entries_[head]);
    const std::uint32_t open = windows.find_or_insert(line, e, window_line(), window_link());
    if (open == LineChains::kNone) {  // e now owns the line's window
      entries_[e].window = true;
    } else if (Entry& first = entries_[open];
               first.addr <= request.addr &&
               request.addr + request.bytes <= first.addr + first.bytes) {
      if (max_merged_ != 0 && first.merged == max_merged_) {
        // The window is full: this read goes on to the L2 and opens the line's next window.
        windows.erase(line, open, window_link());
        first.window = false;
        windows.insert(line, e, window_line(), window_link());
        entries_[e].window = true;
        forward(now, request, e);
        return;
      }
      entries_[e].next = first.next;
      first.next = e;
      if (max_merged_ != 0) ++first.merged;
      merged_.add();
      return;
    }
  }
  forward(now, request, e);
}

void LrcCoalescer::forward(Cycle now, const MemRequest& request, std::uint32_t e) {
  forwarded_.add();
  MemRequest forwarded = request;
  forwarded.token = e;
  forwarded.client = this;
  l2_->send(now, forwarded);
}

void LrcCoalescer::on_response(Cycle now, const MemRequest& response) {
  const auto e = static_cast<std::uint32_t>(response.token);
  const Entry done = entries_[e];
  // Close the window before anyone is answered: a requester may send again from inside its
  // on_response, and that request must not join a read that has already returned.
  if (done.window) window_table(done.sm).erase(line_of(done.addr), e, window_link());
  release(e);
  // The first requester's answer says whether the L2 fetched the line from DRAM for it; the
  // merged ones' never do (they asked nothing of the L2).
  MemRequest first = done.request();
  first.from_dram = response.from_dram;
  if (done.next == kNone) {
    first.client->on_response(now, first);
    return;
  }
  // Copy the merged requests out (newest first) and free them before anyone is answered: a
  // re-entrant send may reuse their entries. The buffer is taken, not shared, for the same reason.
  std::vector<MemRequest> waiters = std::move(answering_);
  waiters.clear();
  for (std::uint32_t m = done.next; m != kNone;) {
    const Entry& waiter = entries_[m];
    waiters.push_back(waiter.request());
    const std::uint32_t next = waiter.next;
    release(m);
    m = next;
  }
  first.client->on_response(now, first);
  // The merged requests in arrival order.
  for (auto it = waiters.rbegin(); it != waiters.rend(); ++it) it->client->on_response(now, *it);
  if (waiters.capacity() > answering_.capacity()) answering_ = std::move(waiters);
}

void LrcCoalescer::prefetch_response(const MemRequest& response) {
  // The response's entry was written at its send, hundreds of requests ago, and so was the
  // window's bucket: both were on_response's main stalls (docs/performance.md §11).
  const auto e = static_cast<std::uint32_t>(response.token);
  prefetch_object(&entries_[e]);
  if (response.sm < sm_group_.size())
    windows_[sm_group_[response.sm]].prefetch(line_of(response.addr));
  // Then the merged requests, a link a stage: the first of the entry fetched three hints ago,
  // the second of the one fetched six ago. A hinted entry may have been answered and reused since:
  // its links still name entries, so at worst an unneeded line is fetched.
  hinted_[hints_ % kHinted] = e;
  if (hints_ >= 6) {
    if (const std::uint32_t m = entries_[hinted_[(hints_ - 3) % kHinted]].next; m != kNone)
      prefetch_object(&entries_[m]);
    if (const std::uint32_t m = entries_[hinted_[(hints_ - 6) % kHinted]].next; m != kNone)
      if (const std::uint32_t m2 = entries_[m].next; m2 != kNone)
        prefetch_object(&entries_[m2]);
  }
  ++hints_;
}

std::uint32_t LrcCoalescer::group_of(std::uint32_t sm) const {
  const auto period = static_cast<std::uint32_t>(group_period_.size());
  return sm / period * groups_per_period_ + group_period_[sm % period];
}

LineChains& LrcCoalescer::added_window_table(std::uint32_t sm) {
  const std::uint32_t group = group_of(sm);
  // An SM beyond gpu.sm_count adds its group.
  if (group >= windows_.size()) windows_.resize(group + 1, LineChains(8, kBucketsPerWindow));
  return windows_[group];
}

}  // namespace simfa::memory_models
