// dram.fixed: one FIFO bandwidth queue plus a fixed latency.
#include "fixed_dram.h"

#include <algorithm>
#include <cmath>

namespace simfa::memory_models {

namespace {
// 10 ns buckets up to 1 us: a 128 B line takes 38 ns at 3.35 TB/s, so the histogram resolves a
// few lines of queueing and counts anything beyond 1 us as overflow.
constexpr std::uint64_t kQueueDelayBucketNs = 10;
constexpr std::size_t kQueueDelayBuckets = 100;
constexpr std::uint64_t kFemtosecondsPerNs = 1'000'000;
}  // namespace

void FixedDram::describe(Schema& schema) {
  // 40 ns: the idle device time of a 128 B read to a closed bank in dram.hbm3's H800_HBM3
  // preset, ACT + nRCD + 3 x nCCDL + nCL + nBL = 19 + 12 + 19 + 2 = 52 cycles of 0.764 ns
  // (39.7 ns). A round default, not a calibration: configs/h200.toml sets it from
  // validation/h200/.
  schema.real("latency_ns")
      .unit("ns")
      .def(40.0)
      .range(0, 1e6)
      .doc("time from the end of a request's transfer to its response");
  // As in dram.hbm3: 0, so latency_ns alone is the device; a card's manifest calibrates it.
  schema.real("controller_latency_ns")
      .unit("ns")
      .def(0.0)
      .range(0, 1e6)
      .doc("fixed time added to every response: the path between the L2 and the devices "
           "(crossbar, controller queues, PHY), as dram.hbm3's parameter of that name");
  // 3.35 TB/s: the H800/H100 SXM5 HBM3 peak (NVIDIA H100 datasheet; the paper's Table II).
  schema.bandwidth("bandwidth")
      .def(3.35e12)
      .range(1e6, 1e16)
      .doc("rate at which the FIFO queue transfers request bytes");
  DramTotals::describe(schema);
  schema.stat("queue_delay", StatKind::kHistogram, "ns",
              "time a request waited for the transfers ahead of it, in ns (rounded down)");
}

FixedDram::FixedDram(const BuildContext& context)
    : events_(context.events),
      clock_(context.gpu.sm_clock()),
      latency_(femtoseconds_from_ns(context.params.real("latency_ns")) +
               femtoseconds_from_ns(context.params.real("controller_latency_ns"))),
      bytes_per_second_(
          static_cast<std::uint64_t>(std::llround(context.params.bandwidth("bandwidth")))),
      totals_(context.stats, context.gpu.clock_mhz),
      queue_delay_(
          context.stats.histogram("queue_delay", kQueueDelayBucketNs, kQueueDelayBuckets)) {}

void FixedDram::send(Cycle now, const MemRequest& request) {
  totals_.count(request);
  const Femtoseconds arrival = clock_.start_of(now);
  const Femtoseconds start = std::max(arrival, queue_free_);
  // The transfer is rounded up to a whole femtosecond: at most 1 fs of drift per request.
  const auto transfer = static_cast<Femtoseconds>(
      mul_div_up(request.bytes, kFemtosecondsPerSecond, bytes_per_second_));
  queue_free_ = start + transfer;
  queue_delay_.sample((start - arrival) / kFemtosecondsPerNs);
  const Cycle done = std::max(clock_.cycle_at_or_after(queue_free_ + latency_), now + 1);
  events_.schedule(done, *this, in_flight_.add(request), Priority::kMemory);
}

void FixedDram::on_event(Cycle now, std::uint64_t payload) {
  const auto slot = static_cast<std::uint32_t>(payload);
  // Copy out and free first: the client may send again from inside on_response.
  const MemRequest request = in_flight_[slot];
  in_flight_.release(slot);
  request.client->on_response(now, request);
}

void FixedDram::finish(Cycle end) { totals_.finish(end); }

}  // namespace simfa::memory_models
