// Counter tracks: the SMs' meters (SmCore::meters) and the memory system's cache use and traffic
// (MemoryPort::cache_use, traffic) sampled every `window` SM cycles while a run goes, so the
// timeline shows tensor-core utilization, TMA bytes in flight, L2 hit rate and bandwidth and DRAM
// bandwidth over time beside the WarpGroups' spans (docs/pictures.md). Sampling only reads; it
// schedules no event and changes nothing the simulation does.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "simfa/core.h"
#include "simfa/memory.h"
#include "simfa/types.h"

namespace simfa::kernel {

class CounterTracks {
 public:
  enum class Kind {
    kRate,   ///< scale * (change of a) / window
    kBusy,   ///< 100% * busy cycles of a single pipeline per window (see busy_series)
    kRatio,  ///< (change of a) / (change of a + change of b)
    kLevel,  ///< a - b at each window's start: an amount held, e.g. bytes in flight
  };
  /// Where a track's a and b come from.
  enum class Source {
    kMeter,      ///< the SM meter `meter`: its value and its `less`, summed over `sm` (-1: all)
    kCacheUse,   ///< the memory's last-level cache (MemoryPort::cache_use): hits and misses
    kLlcBytes,   ///< the memory's traffic (MemoryPort::traffic): llc read + write bytes; b is 0
    kDramBytes,  ///< the same of DRAM
  };
  struct Track {
    std::string name;  ///< e.g. "SM 0 tensor core busy"
    std::string unit;  ///< the value's unit, e.g. "%", "GB/s", "bytes"
    int sm = -1;       ///< the SM it belongs to, or -1 for the whole GPU
    Kind kind = Kind::kRate;
    Source source = Source::kMeter;
    double scale = 1;
    std::string meter;                       ///< kMeter: SmMeter::name
    std::vector<double> a_values, b_values;  ///< cumulative sums at each sample
  };
  /// One step of a track: `value` holds from `begin` to the next point's begin.
  struct Point {
    Cycle begin;
    double value;
  };

  /// The tracks of the SMs' meters (per SM of `traced`, and over all `sms` for the levels), of
  /// the memory's last-level cache where it has one, and of the memory's traffic where it
  /// reports it.
  CounterTracks(const std::vector<SmCore*>& sms, const MemoryPort& memory,
                const std::vector<int>& traced, double clock_mhz, Cycle window);

  /// The first sample boundary not yet recorded.
  Cycle next_sample() const { return next_; }
  /// Records every window boundary up to `now`, with the statistics as they stand before the
  /// events of cycle `now` (none fired in between, so each boundary sees that state).
  void sample_until(Cycle now);
  /// Records the end of the run (after the components' finish()), closing the last window.
  void finish(Cycle end);

  Cycle window() const { return window_; }
  const std::vector<Track>& tracks() const { return tracks_; }
  /// The track's value per window, then a last point at the end of the run.
  std::vector<Point> series(const Track& track) const;

 private:
  void record();
  /// The meter `name` of SM `sm` (-1: summed over every SM) as it stands: value and less.
  std::pair<double, double> meter(const std::string& name, int sm);

  std::vector<SmCore*> sms_;
  const MemoryPort& memory_;
  std::vector<std::vector<SmMeter>> meters_;  ///< per SM, read at each sample
  std::vector<bool> meters_read_;             ///< per SM, in the current sample
  Cycle window_;
  Cycle next_ = 0;
  std::vector<Cycle> boundaries_;  ///< the cycle of each sample
  std::vector<Track> tracks_;
};

}  // namespace simfa::kernel
