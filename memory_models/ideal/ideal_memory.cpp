// memory.ideal: fixed latency, unlimited bandwidth.
#include "ideal_memory.h"

#include <algorithm>

namespace simfa::memory_models {

void IdealMemory::describe(Schema& schema) {
  // 400 cycles: the order of a Hopper DRAM round trip as SM clocks see it (global-memory latency
  // is a few hundred cycles in Luo et al.'s H800 microbenchmarks, the paper's [12]); a round
  // figure for an idealized backend, not a calibration.
  schema.integer("latency")
      .unit("SM cycles")
      .def(400)
      .range(1, 1e9)
      .doc("cycles from send to response for every request (>= 1: responses arrive no earlier "
           "than the next cycle)");
  schema.boolean("bursts").def(false).doc(
      "take an engine's lines booked ahead as bursts, each sent at its cycle, one event a cycle "
      "for all SMs (docs/performance.md §10); false: line by line");
  schema.stat("reads", StatKind::kCounter, "requests", "read requests");
  schema.stat("writes", StatKind::kCounter, "requests", "write requests");
}

IdealMemory::IdealMemory(const BuildContext& context)
    : events_(context.events),
      latency_(static_cast<Cycle>(context.params.integer("latency"))),
      steps_(context.events),
      reads_(context.stats.counter("reads")),
      writes_(context.stats.counter("writes")) {
  if (context.params.boolean("bursts")) bursts_.emplace(context.events, *this);
}

void IdealMemory::count(bool write, std::uint64_t lines, std::uint64_t bytes) {
  if (write) {
    writes_.add(lines);
    bytes_.write += bytes;
  } else {
    reads_.add(lines);
    bytes_.read += bytes;
  }
}

void IdealMemory::send(Cycle now, const MemRequest& request) {
  count(request.write, 1, request.bytes);
  in_flight_.push(request);
  const Cycle when = now + latency_;
  // A batch of `when` still pending takes it (`when` is after now: it has not fired).
  if (last_batch_ == when) {
    ++batches_.back();
    return;
  }
  batches_.push(1);
  last_batch_ = when;
  events_.schedule(when, *this, 0, Priority::kMemory);
}

void IdealMemory::on_event(Cycle now, std::uint64_t /*payload*/) {
  const std::uint32_t n = batches_.front();
  batches_.pop();
  // A client sending from inside on_response queues a response of a later cycle behind these.
  for (std::uint32_t i = 0; i < n; ++i) {
    // Copy out and pop first: the client may send again from inside on_response.
    const MemRequest request = in_flight_.front();
    in_flight_.pop();
    request.client->on_response(now, request);
  }
}

void IdealMemory::send_counted(Cycle now, const Burst& burst) {
  counted_.push_back(burst);
  counted_.back().addrs = nullptr;
  // Folding the runs already past every so often keeps the list as short as the lines in flight
  // ahead of now, at a constant cost a run.
  if (counted_.size() >= fold_at_) {
    fold_counted(now, false);
    fold_at_ = std::max<std::size_t>(64, 2 * counted_.size());
  }
}

void IdealMemory::fold_counted(Cycle at, bool all) {
  std::size_t kept = 0;
  for (const Burst& run : counted_) {
    if (all || run.cycle_of(run.count - 1) <= at) {
      const std::uint32_t lines = all ? run.sent_by(at) : run.count;
      count(run.request.write, lines, std::uint64_t{lines} * run.request.bytes);
    } else {
      counted_[kept++] = run;
    }
  }
  counted_.resize(kept);
}

std::optional<MemoryTraffic> IdealMemory::traffic() const {
  ByteTotals bytes = bytes_;
  const Cycle now = events_.now();
  for (const Burst& run : counted_)
    (run.request.write ? bytes.write : bytes.read) +=
        std::uint64_t{run.sent_by(now)} * run.request.bytes;
  return MemoryTraffic{bytes, bytes};
}

}  // namespace simfa::memory_models
