// wgmma.half_n: in-order tensor-core pipeline with an instruction buffer and an N-dependent
// latency law.
#include "wgmma_half_n.h"

#include <algorithm>
#include <cmath>
#include <iterator>

#include "simfa/error.h"

namespace simfa::engines {

namespace {
struct MeasuredLatency {
  double n;
  double cycles;
};
// m64nNk16 FP16 WGMMA latencies measured for Accel-Sim 2.0 (the paper's reference [14]). They
// match N/2 from N = 64 up and flatten to a fixed cost below.
constexpr MeasuredLatency kMeasured[] = {{8, 18},  {16, 20},  {32, 24},
                                         {64, 32}, {128, 64}, {256, 128}};

// Linear interpolation between the measured N around `n`; outside [8, 256] the end segment is
// extended (N = 256 is Hopper's largest WGMMA N, 8 its smallest).
double table_cycles(double n) {
  std::size_t hi = 1;
  while (hi + 1 < std::size(kMeasured) && n > kMeasured[hi].n) ++hi;
  const MeasuredLatency& a = kMeasured[hi - 1];
  const MeasuredLatency& b = kMeasured[hi];
  return a.cycles + (n - a.n) * (b.cycles - a.cycles) / (b.n - a.n);
}

std::uint32_t ceil_div(std::uint32_t a, std::uint32_t b) { return (a + b - 1) / b; }

const char* const kIssuedDoc = "WGMMA instructions issued";
const char* const kBusyDoc = "cycles the tensor-core pipeline is occupied";
const char* const kFlopsDoc = "floating-point operations issued (2 M N K per WGMMA)";
}  // namespace

Cycle wgmma_cycles(WgmmaLatencyModel model, double k_eff, std::uint32_t m, std::uint32_t n,
                   std::uint32_t k) {
  // m64nNk16 is the unit instruction (paper IV-B): larger M or K are that many instructions.
  const double base = model == WgmmaLatencyModel::kHalfN ? n / 2.0 : table_cycles(n);
  const double cycles = k_eff * base * ceil_div(m, 64) * ceil_div(k, 16);
  return std::max<Cycle>(1, static_cast<Cycle>(std::llround(cycles)));
}

void WgmmaHalfN::describe(Schema& schema) {
  schema.string("latency_model")
      .def("half_n")
      .choices({"half_n", "table"})
      .doc("per-instruction pipeline cycles: half_n = N/2 (paper IV-B, Luo et al.); table = "
           "Accel-Sim 2.0's measured per-N latencies (8:18 16:20 32:24 64:32 128:64 256:128), "
           "linear in between");
  schema.real("k_eff")
      .unit("x")
      .def(1.0)
      .range(1e-3, 1e3)
      .doc("latency multiplier of the law (paper VI-C: 5.176 on H20, 1 on H800)");
  // Undisclosed on Hopper. 8 holds one whole GEMM of the FA3 / GEMM loops the paper simulates
  // (eight WGMMAs each, sections VI-B and VII), so a WarpGroup never stalls inside one.
  schema.integer("buffer_depth")
      .unit("instructions")
      .def(8)
      .range(1, 1024)
      .doc("issued-but-unfinished WGMMAs the instruction buffer holds; issue stalls when full");
  schema.integer("issue_interval")
      .unit("SM cycles")
      .def(1)
      .range(1, 1e6)
      .doc("minimum cycles between accepted issues (1: no limit beyond the SM's one issue per "
           "cycle)");
  schema.integer("completion_latency")
      .unit("SM cycles")
      .def(0)
      .range(0, 1e6)
      .doc("fixed cycles from the end of pipeline occupancy to completion (buffer slot frees "
           "then)");
  schema.stat("wgmma_issued", StatKind::kCounter, "instructions", kIssuedDoc);
  schema.stat("busy_cycles", StatKind::kCounter, "cycles", kBusyDoc);
  schema.stat("flops", StatKind::kCounter, "FLOP", kFlopsDoc);
}

WgmmaHalfN::WgmmaHalfN(const BuildContext& context)
    : events_(context.events),
      model_(context.params.string("latency_model") == "table" ? WgmmaLatencyModel::kTable
                                                                : WgmmaLatencyModel::kHalfN),
      k_eff_(context.params.real("k_eff")),
      buffer_depth_(static_cast<std::uint32_t>(context.params.integer("buffer_depth"))),
      issue_interval_(static_cast<Cycle>(context.params.integer("issue_interval"))),
      completion_latency_(static_cast<Cycle>(context.params.integer("completion_latency"))),
      issued_(context.stats.counter("wgmma_issued", "instructions", kIssuedDoc)),
      busy_cycles_(context.stats.counter("busy_cycles", "cycles", kBusyDoc)),
      flops_(context.stats.counter("flops", "FLOP", kFlopsDoc)) {}

void WgmmaHalfN::connect(TensorCoreClient& client) { client_ = &client; }

bool WgmmaHalfN::accepts(Cycle now) const {
  return buffer_.size() < buffer_depth_ && now >= next_issue_;
}

bool WgmmaHalfN::can_accept(Cycle now) const {
  const bool ok = accepts(now);
  if (!ok) refused_ = true;
  return ok;
}

void WgmmaHalfN::issue(Cycle now, const WgmmaOp& op) {
  if (!accepts(now)) throw Error("internal: WGMMA issued while the tensor core refuses it");
  const Cycle cycles = wgmma_cycles(model_, k_eff_, op.m, op.n, op.k);
  pipeline_free_ = std::max(now, pipeline_free_) + cycles;
  buffer_.push(op.token);
  events_.schedule(pipeline_free_ + completion_latency_, *this, kComplete, Priority::kMemory);
  // With an interval of 1 the SM's single issue per cycle already is the limit: no event needed.
  if (issue_interval_ > 1) {
    next_issue_ = now + issue_interval_;
    events_.schedule(next_issue_, *this, kIssuePort, Priority::kEngine);
  }
  issued_.add();
  busy_cycles_.add(cycles);
  flops_.add(2ull * op.m * op.n * op.k);
}

void WgmmaHalfN::on_event(Cycle now, std::uint64_t payload) {
  if (payload == kComplete) {
    const std::uint64_t token = buffer_.front();
    buffer_.pop();
    client_->on_wgmma_complete(now, token);
  }
  notify_if_refused(now);
}

void WgmmaHalfN::notify_if_refused(Cycle now) {
  if (!refused_ || !accepts(now)) return;
  refused_ = false;
  client_->on_wgmma_slot_free(now);
}

void WgmmaHalfN::finish(Cycle end) {
  // Occupancy is counted at issue; a run stopped early (watchdog) must not count the future.
  // From the last issue on the pipeline is busy without a gap, so the excess is one interval.
  if (pipeline_free_ > end) busy_cycles_.set(busy_cycles_.value() - (pipeline_free_ - end));
}

}  // namespace simfa::engines
