// tma.fixed: completion = setup latency + queueing + bytes / bytes_per_cycle.
#include "tma_fixed.h"

#include <algorithm>
#include <cmath>

namespace simfa::engines {

namespace {
// Default per-SM bandwidth: the H800 SXM's HBM3 bandwidth (3.35 TB/s, NVIDIA H100/H800 SXM
// datasheet) shared by its 132 SMs at the paper's locked 1830 MHz clock (section VI-C):
// 3.35e12 / 132 / 1.83e9 = 13.87 B/cycle per SM when every SM streams at once.
constexpr double kH800DramBytesPerSecond = 3.35e12;
constexpr double kH800SmCount = 132;
constexpr double kH800ClockHz = 1.83e9;
constexpr double kDefaultBytesPerCycle = kH800DramBytesPerSecond / kH800SmCount / kH800ClockHz;

}  // namespace

void TmaFixed::describe(Schema& schema) {
  TmaSetup::describe(schema);
  schema.real("bytes_per_cycle")
      .unit("B/cycle")
      .def(kDefaultBytesPerCycle)
      .range(1e-3, 1e6)
      .doc("per-SM transfer bandwidth; ops transfer one after another in issue order. Level 0 "
           "charges no memory round trip: fold one into launch_latency if wanted");
  schema.stat("ops", StatKind::kCounter, "ops", "TMA operations issued");
  schema.stat("bytes", StatKind::kCounter, "bytes", "bytes delivered by TMA operations");
  schema.stat("busy_cycles", StatKind::kCounter, "cycles",
              "cycles with at least one TMA operation in flight");
}

TmaFixed::TmaFixed(const BuildContext& context)
    : events_(context.events),
      setup_(context.params),
      bytes_per_cycle_(context.params.real("bytes_per_cycle")),
      ops_(context.stats.counter("ops")),
      bytes_(context.stats.counter("bytes")),
      busy_(context.stats.counter("busy_cycles")) {}

void TmaFixed::connect(MemoryPort& /*memory*/, TmaClient& client) { client_ = &client; }

void TmaFixed::issue(Cycle now, const TmaOp& op) {
  const double ready = static_cast<double>(now + setup_.latency(op.op));
  channel_free_ = std::max(ready, channel_free_) + op.bytes / bytes_per_cycle_;
  const auto done = static_cast<Cycle>(std::ceil(channel_free_));
  in_flight_.push({op.token, op.bytes});
  events_.schedule(done, *this, 0, Priority::kMemory);
  ops_.add();
  bytes_.add(op.bytes);
  busy_.begin(now);
}

void TmaFixed::on_event(Cycle now, std::uint64_t /*payload*/) {
  const InFlight done = in_flight_.front();
  in_flight_.pop();
  busy_.end(now);
  client_->on_tma_complete(now, done.token, done.bytes);
}

void TmaFixed::finish(Cycle end) { busy_.finish(end); }

}  // namespace simfa::engines
