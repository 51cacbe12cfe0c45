// wgmma.half_n: in-order tensor-core pipeline with an instruction buffer and an N-dependent
// latency law.
#include "wgmma_half_n.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <stdexcept>

#include "simfa/error.h"
#include "simfa/int_math.h"

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

constexpr double kTimeEpsilon = 1e-9;

Cycle end_cycle(double t) {
  return static_cast<Cycle>(std::ceil(t - kTimeEpsilon));
}
}  // namespace

void Fp32Coupling::set(std::uint32_t slot, double fraction, Cycle until) {
  if (slot >= loads_.size()) loads_.resize(slot + 1);
  loads_[slot] = {std::clamp(fraction, 0.0, 1.0), until};
}

double Fp32Coupling::rate(double t, Cycle& next_change) const {
  double load = 0;
  next_change = kNever;
  if (!on()) return 1.0;
  for (const Load& l : loads_) {
    if (static_cast<double>(l.until) <= t) continue;
    load += l.fraction;
    next_change = std::min(next_change, l.until);
  }
  load = std::min(load, 1.0);
  // onset < 0 is 1 - share, written so that a full pipe stops the WGMMA exactly; a steep share
  // past its onset stops it too, never runs it backwards.
  const double rate = onset_ < 0 ? (1.0 - load) / share_ : 1.0 - (load - onset_) / share_;
  return std::clamp(rate, 0.0, 1.0);
}

Cycle wgmma_cycles(WgmmaLatencyModel model, double k_eff, std::uint32_t m, std::uint32_t n,
                   std::uint32_t k) {
  // m64nNk16 is the unit instruction (paper IV-B): larger M or K are that many instructions.
  const double base = model == WgmmaLatencyModel::kHalfN ? n / 2.0 : table_cycles(n);
  const double cycles =
      k_eff * base * static_cast<double>(ceil_div(m, 64)) * static_cast<double>(ceil_div(k, 16));
  return std::max<Cycle>(1, static_cast<Cycle>(std::llround(cycles)));
}

NFactors::NFactors(const std::string& text) {
  if (!text.empty() && text.back() == ',')
    throw std::invalid_argument("'" + text + "' ends with ',': a point is missing");
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = std::min(text.find(',', at), text.size());
    const std::string point = text.substr(at, end - at);
    const std::size_t colon = point.find(':');
    std::size_t used_n = 0, used_f = 0;
    double n = 0, factor = 0;
    try {
      if (colon == std::string::npos) throw std::invalid_argument("no ':'");
      n = std::stod(point.substr(0, colon), &used_n);
      factor = std::stod(point.substr(colon + 1), &used_f);
    } catch (const std::exception&) {
      used_n = 0;
    }
    if (used_n != colon || used_f != point.size() - colon - 1 || n <= 0 || factor <= 0)
      throw std::invalid_argument("'" + point + "' is not N:factor with N and factor > 0 (e.g. "
                                  "\"128:1.0,256:1.294\")");
    if (!points_.empty() && n <= points_.back().first)
      throw std::invalid_argument("the N of '" + point + "' must exceed the one before it");
    points_.emplace_back(n, factor);
    at = end + 1;
  }
}

double NFactors::at(double n) const {
  if (points_.empty()) return 1.0;
  if (n <= points_.front().first) return points_.front().second;
  for (std::size_t i = 1; i < points_.size(); ++i)
    if (n <= points_[i].first) {
      const auto [n0, f0] = points_[i - 1];
      const auto [n1, f1] = points_[i];
      return f0 + (n - n0) * (f1 - f0) / (n1 - n0);
    }
  return points_.back().second;
}

namespace {
NFactors parse_n_factors(const Params& params) {
  try {
    return NFactors(params.string("n_factors"));
  } catch (const std::invalid_argument& e) {
    params.fail("n_factors", e.what());
  }
}
}  // namespace

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
  schema.string("n_factors")
      .def("")
      .doc("per-N multipliers of the law from measured sustained rates, \"N:factor,...\" with N "
           "increasing, linear in between, the ends' factors beyond them (\"\": 1)");
  // Undisclosed on Hopper. 8 holds one whole GEMM of the FA3 / GEMM loops the paper simulates
  // (eight WGMMAs each, sections VI-B and VII), so a WarpGroup never stalls inside one.
  schema.integer("buffer_depth")
      .unit("instructions")
      .def(8)
      .range(1, 1024)
      .doc("issued-but-unfinished WGMMAs the instruction buffer holds; issue stalls when full");
  schema.string("service_order")
      .def("issue")
      .choices({"issue", "round_robin"})
      .doc("the order the pipeline takes the buffered WGMMAs in: issue = as issued; round_robin = "
           "the WarpGroups' in turn, each WarpGroup's in its own order, so two WarpGroups' "
           "WGMMAs issued together finish together");
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
  schema.real("fp32_share")
      .unit("fraction of the FP32 pipe")
      .def(0.0)
      .range(0, 4)
      .doc(
          "FP32 work beside the tensor core: while a fraction `load` of the SM's FP32 pipe (its "
          "register-file bandwidth) is in use, the pipeline runs at min(1, 1 - (load - "
          "fp32_onset) / fp32_share) of its rate (0: no coupling)");
  schema.real("fp32_onset")
      .unit("fraction of the FP32 pipe")
      .def(-1.0)
      .range(-1, 1)
      .doc(
          "the FP32 load up to which the pipeline keeps its full rate; -1: 1 - fp32_share (a "
          "WGMMA at its full rate holds fp32_share of the pipe, FP32 work served first)");
  schema.stat("wgmma_issued", StatKind::kCounter, "instructions", "WGMMA instructions issued");
  schema.stat("busy_cycles", StatKind::kCounter, "cycles",
              "cycles the tensor-core pipeline is occupied");
  schema.stat("flops", StatKind::kCounter, "FLOP",
              "floating-point operations issued (2 M N K per WGMMA)");
  schema.stat("fp32_delay_cycles", StatKind::kCounter, "cycles",
              "cycles the pipeline took beyond the law because FP32 work held the register file "
              "(fp32_share)");
}

WgmmaHalfN::WgmmaHalfN(const BuildContext& context)
    : events_(context.events),
      model_(context.params.string("latency_model") == "table" ? WgmmaLatencyModel::kTable
                                                               : WgmmaLatencyModel::kHalfN),
      k_eff_(context.params.real("k_eff")),
      n_factors_(parse_n_factors(context.params)),
      buffer_depth_(static_cast<std::uint32_t>(context.params.integer("buffer_depth"))),
      issue_interval_(static_cast<Cycle>(context.params.integer("issue_interval"))),
      completion_latency_(static_cast<Cycle>(context.params.integer("completion_latency"))),
      coupling_(context.params.real("fp32_share"), context.params.real("fp32_onset")),
      round_robin_(context.params.string("service_order") == "round_robin"),
      served_as_time_passes_(coupling_.on() || round_robin_),
      issued_(context.stats.counter("wgmma_issued")),
      busy_cycles_(context.stats.counter("busy_cycles")),
      flops_(context.stats.counter("flops")),
      fp32_delay_cycles_(context.stats.counter("fp32_delay_cycles")) {}

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
  const Cycle cycles = wgmma_cycles(model_, k_eff_ * n_factors_.at(op.n), op.m, op.n, op.k);
  if (served_as_time_passes_) {
    serve_until(now);
    buffer_.push({op.token, next_serial_++, cycles, static_cast<double>(cycles), 0, kNever,
                  kNever, op.warpgroup});
    if (round_robin_) place_in_turn();
    schedule_checks();
  } else {
    pipeline_free_ = std::max(now, pipeline_free_) + cycles;
    buffer_.push({op.token});
    events_.schedule(pipeline_free_ + completion_latency_, *this, kComplete, Priority::kMemory);
  }
  // With an interval of 1 the SM's single issue per cycle already is the limit: no event needed.
  if (issue_interval_ > 1) {
    next_issue_ = now + issue_interval_;
    events_.schedule(next_issue_, *this, kIssuePort, Priority::kEngine);
  }
  issued_.add();
  busy_cycles_.add(cycles);
  flops_.add(2ull * op.m * op.n * op.k);
}

void WgmmaHalfN::fp32_load(Cycle now, std::uint32_t slot, double fraction, Cycle until) {
  if (!coupling_.on()) return;
  serve_until(now);
  coupling_.set(slot, fraction, until);
  schedule_checks();
}

void WgmmaHalfN::place_in_turn() {
  // The WGMMAs the pipeline has not begun, each with its turn: its rank among its WarpGroup's.
  // The new one's turn follows its WarpGroup's others; it goes after every unstarted WGMMA whose
  // turn is not later than its own. Earlier WGMMAs keep their places (a queue is reordered only
  // at an issue).
  const std::size_t last = buffer_.size() - 1;
  std::size_t first_unstarted = 0;
  while (first_unstarted < last && (buffer_.at(first_unstarted).served_for > 0 ||
                                    buffer_.at(first_unstarted).finish != kNever))
    ++first_unstarted;
  const std::uint32_t warpgroup = buffer_.at(last).warpgroup;
  std::size_t turn = 0;
  for (std::size_t i = first_unstarted; i < last; ++i) turn += buffer_.at(i).warpgroup == warpgroup;
  std::size_t place = first_unstarted;
  turns_.assign(turns_.size(), 0);
  for (std::size_t i = first_unstarted; i < last; ++i) {
    const std::uint32_t w = buffer_.at(i).warpgroup;
    if (w >= turns_.size()) turns_.resize(w + 1, 0);
    if (turns_[w]++ <= turn) place = i + 1;
  }
  for (std::size_t i = last; i > place; --i) std::swap(buffer_.at(i), buffer_.at(i - 1));
}

Cycle WgmmaHalfN::busy_until(Cycle now) const {
  if (!served_as_time_passes_) return std::max(now, pipeline_free_);
  // The buffer holds finished WGMMAs only until their completion latency is over; the last
  // unfinished one ends the occupancy, at the FP32 load said so far.
  if (known_end_ == kNever) {
    Cycle end = 0;
    double t = served_to_;
    for (std::size_t i = 0; i < buffer_.size(); ++i) {
      const Buffered& b = buffer_.at(i);
      end = std::max(end, b.finish != kNever ? b.finish : predicted_finish(b.left, t));
    }
    known_end_ = end;
  }
  return std::max(now, known_end_);
}

void WgmmaHalfN::on_event(Cycle now, std::uint64_t payload) {
  if (payload == kComplete) {
    const std::uint64_t token = buffer_.front().token;
    buffer_.pop();
    client_->on_wgmma_complete(now, token);
  } else if (payload % kEventKinds == kCheck) {
    on_check(now, payload / kEventKinds);
  }
  notify_if_refused(now);
}

void WgmmaHalfN::serve_until(Cycle now) {
  // Every change of the coupled state (served time, the buffer, the FP32 loads) begins here.
  known_end_ = kNever;
  double t = served_to_;
  const auto until = static_cast<double>(now);
  for (std::size_t i = 0; i < buffer_.size() && t < until; ++i) {
    Buffered& b = buffer_.at(i);
    while (b.finish == kNever && t < until) {
      Cycle change = kNever;
      const double rate = coupling_.rate(t, change);
      const double segment_end = std::min(until, static_cast<double>(change));
      if (rate > 0 && t + b.left / rate <= segment_end + kTimeEpsilon) {
        t += b.left / rate;
        b.served_for += b.left / rate;
        b.left = 0;
        b.finish = end_cycle(t);
        const auto delay = std::llround(b.served_for) - static_cast<std::int64_t>(b.law);
        if (delay > 0) {
          busy_cycles_.add(static_cast<std::uint64_t>(delay));
          fp32_delay_cycles_.add(static_cast<std::uint64_t>(delay));
        }
      } else {
        b.left -= rate * (segment_end - t);
        b.served_for += segment_end - t;
        t = segment_end;
      }
    }
  }
  // An idle pipeline starts the next WGMMA when it is issued.
  served_to_ = std::max(t, until);
}

void WgmmaHalfN::schedule_checks() {
  // The predictions of busy_until(), in the same order from the same state: they give it its
  // answer too.
  double t = served_to_;
  Cycle end = 0;
  for (std::size_t i = 0; i < buffer_.size(); ++i) {
    Buffered& b = buffer_.at(i);
    const Cycle finish = b.finish != kNever ? b.finish : predicted_finish(b.left, t);
    end = std::max(end, finish);
    const Cycle complete = finish + completion_latency_;
    if (complete < b.check_at) {
      b.check_at = complete;
      events_.schedule(complete, *this, kCheck + kEventKinds * b.serial, Priority::kMemory);
    }
  }
  known_end_ = end;
}

Cycle WgmmaHalfN::predicted_finish(double left, double& t) const {
  for (;;) {
    Cycle change = kNever;
    const double rate = coupling_.rate(t, change);
    const auto segment_end = static_cast<double>(change);
    if (rate > 0 && (change == kNever || t + left / rate <= segment_end + kTimeEpsilon)) {
      t += left / rate;
      return end_cycle(t);
    }
    if (change == kNever) throw Error("internal: the tensor core stalls with no end of load");
    left -= rate * (segment_end - t);
    t = segment_end;
  }
}

void WgmmaHalfN::on_check(Cycle now, std::uint64_t serial) {
  serve_until(now);
  while (!buffer_.empty() && buffer_.front().finish != kNever &&
         buffer_.front().finish + completion_latency_ <= now) {
    const std::uint64_t token = buffer_.front().token;
    buffer_.pop();
    known_end_ = kNever;  // the client may ask busy_until() from its answer
    client_->on_wgmma_complete(now, token);
  }
  // This check was its WGMMA's latest and came too early (the FP32 load rose): check again. A
  // WGMMA no longer buffered has completed. (round_robin: the buffer is not in serial order.)
  std::size_t i = 0;
  while (i < buffer_.size() && buffer_.at(i).serial != serial) ++i;
  if (i == buffer_.size()) return;
  Buffered& b = buffer_.at(i);
  if (b.check_at != now) return;
  b.check_at = kNever;
  schedule_checks();
}

void WgmmaHalfN::notify_if_refused(Cycle now) {
  if (!refused_ || !accepts(now)) return;
  refused_ = false;
  client_->on_wgmma_slot_free(now);
}

void WgmmaHalfN::finish(Cycle end) {
  // Occupancy is counted at issue; a run stopped early (watchdog) must not count the future.
  if (served_as_time_passes_) {
    serve_until(end);
    // An unfinished WGMMA was counted at its law's cycles and has been served for its own.
    auto busy = static_cast<std::int64_t>(busy_cycles_.value());
    for (std::size_t i = 0; i < buffer_.size(); ++i) {
      const Buffered& b = buffer_.at(i);
      if (b.finish == kNever) busy += std::llround(b.served_for) - static_cast<std::int64_t>(b.law);
    }
    busy_cycles_.set(static_cast<std::uint64_t>(std::max<std::int64_t>(busy, 0)));
    return;
  }
  // From the last issue on the pipeline is busy without a gap, so the excess is one interval.
  if (pipeline_free_ > end) busy_cycles_.set(busy_cycles_.value() - (pipeline_free_ - end));
}

}  // namespace simfa::engines
