// `wgmma.half_n`: the tensor-core engine of the paper's section IV-B. One in-order pipeline per
// SM behind an instruction buffer of issued-but-unfinished WGMMAs. A WGMMA starts when the
// pipeline frees, occupies it for its latency-law cycles, and completes (leaving the buffer) when
// that occupancy ends plus `completion_latency`.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "simfa/component.h"
#include "simfa/core.h"
#include "simfa/ring_queue.h"


namespace simfa::engines {

/// Per-instruction pipeline cycles of one m64nNk16 FP16 WGMMA, before the M/K/k_eff scaling.
enum class WgmmaLatencyModel : std::uint8_t {
  kHalfN,  ///< N / 2 (the paper's section IV-B, after Luo et al. [12])
  kTable,  ///< measured per-N latencies, interpolated linearly between measured N
};

/// Pipeline occupancy of an M x N x K WGMMA: k_eff * base(N) * ceil(M/64) * ceil(K/16), rounded
/// to the nearest cycle and at least 1.
Cycle wgmma_cycles(WgmmaLatencyModel model, double k_eff, std::uint32_t m, std::uint32_t n,
                   std::uint32_t k);

/// Per-N multipliers of the latency law, for a card whose sustained rates were measured: points
/// (N, factor) written "128:1.0,256:1.294", linear in N between points, the end points' factors
/// beyond them; no points: 1 everywhere.
class NFactors {
 public:
  /// Throws std::invalid_argument, with a message for the user, on a malformed list.
  explicit NFactors(const std::string& text);
  double at(double n) const;

 private:
  std::vector<std::pair<double, double>> points_;  ///< (N, factor), N increasing
};

class WgmmaHalfN final : public TensorCoreEngine, private EventTarget {
 public:
  explicit WgmmaHalfN(const BuildContext& context);
  static void describe(Schema& schema);

  void connect(TensorCoreClient& client) override;
  /// False while the buffer is full or `issue_interval` has not elapsed since the last issue; a
  /// refusal is answered by one on_wgmma_slot_free when issuing becomes possible again.
  bool can_accept(Cycle now) const override;
  void issue(Cycle now, const WgmmaOp& op) override;
  void finish(Cycle end) override;

 private:
  enum Event : std::uint64_t {
    kComplete,   ///< the oldest buffered WGMMA completes
    kIssuePort,  ///< `issue_interval` elapsed since the last issue
  };
  void on_event(Cycle now, std::uint64_t payload) override;
  bool accepts(Cycle now) const;
  void notify_if_refused(Cycle now);

  EventQueue& events_;
  WgmmaLatencyModel model_;
  double k_eff_;
  NFactors n_factors_;
  std::uint32_t buffer_depth_;
  Cycle issue_interval_;
  Cycle completion_latency_;
  TensorCoreClient* client_ = nullptr;

  /// Tokens of the buffered WGMMAs. They complete in issue order (in-order pipeline, one fixed
  /// completion latency), so each completion event pops the front.
  RingQueue<std::uint64_t> buffer_;
  Cycle pipeline_free_ = 0;  ///< when the pipeline finishes the last accepted WGMMA
  Cycle next_issue_ = 0;     ///< earliest cycle of the next accepted issue
  /// can_accept said no since the last on_wgmma_slot_free: the client waits for a call.
  mutable bool refused_ = false;

  Counter& issued_;
  Counter& busy_cycles_;
  Counter& flops_;
};

}  // namespace simfa::engines
