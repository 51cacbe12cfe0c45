#include "kernel/counter_tracks.h"

#include <algorithm>

#include <fmt/format.h>

namespace simfa::kernel {

CounterTracks::CounterTracks(const std::vector<SmCore*>& sms, const MemoryPort& memory,
                             const std::vector<int>& traced, double clock_mhz, Cycle window)
    : sms_(sms),
      memory_(memory),
      meters_(sms.size()),
      meters_read_(sms.size()),
      window_(std::max<Cycle>(window, 1)) {
  // Bytes per SM cycle to GB/s: clock_mhz * 1e6 cycles per second, 1e9 bytes per GB.
  const double gb_per_s = clock_mhz / 1e3;
  // The SMs' meters: a pipeline's busy share and each level per traced SM, each level over
  // every SM.
  std::vector<SmMeter> meters;
  auto meter_track = [&](const SmMeter& m, int sm) {
    const std::string where = sm >= 0 ? fmt::format("SM {} ", sm) : "";
    Track t;
    t.sm = sm, t.source = Source::kMeter, t.meter = m.name;
    if (m.kind == SmMeter::Kind::kPipelineBusy) {
      t.name = where + m.name + " busy", t.unit = "%", t.kind = Kind::kBusy, t.scale = 100.0;
    } else {
      t.name = where + m.name + (sm < 0 ? " (all SMs)" : ""), t.unit = m.unit;
      t.kind = Kind::kLevel;
    }
    tracks_.push_back(std::move(t));
  };
  for (int sm : traced) {
    if (sm < 0 || static_cast<std::size_t>(sm) >= sms_.size()) continue;
    meters.clear();
    sms_[static_cast<std::size_t>(sm)]->meters(meters);
    for (const SmMeter& m : meters)
      if (m.kind == SmMeter::Kind::kPipelineBusy || m.kind == SmMeter::Kind::kLevel)
        meter_track(m, sm);
  }
  if (!sms_.empty()) {
    meters.clear();
    sms_.front()->meters(meters);
    for (const SmMeter& m : meters)
      if (m.kind == SmMeter::Kind::kLevel) meter_track(m, -1);
  }
  if (memory_.cache_use()) {
    Track t;
    t.name = "L2 hit rate", t.unit = "%", t.kind = Kind::kRatio, t.source = Source::kCacheUse;
    t.scale = 100.0;
    tracks_.push_back(std::move(t));
  }
  // The byte totals of the stats contract (docs/stats.md), where the memory reports them.
  if (memory_.traffic())
    for (const auto& [name, source] : {std::pair{"L2 bandwidth", Source::kLlcBytes},
                                       std::pair{"DRAM bandwidth", Source::kDramBytes}}) {
      Track t;
      t.name = name, t.unit = "GB/s", t.source = source, t.scale = gb_per_s;
      tracks_.push_back(std::move(t));
    }
}

std::pair<double, double> CounterTracks::meter(const std::string& name, int sm) {
  double value = 0, less = 0;
  const std::size_t first = sm < 0 ? 0 : static_cast<std::size_t>(sm);
  const std::size_t last = sm < 0 ? sms_.size() : first + 1;
  for (std::size_t i = first; i < last; ++i) {
    if (!meters_read_[i]) {  // once per SM and sample
      meters_[i].clear();
      sms_[i]->meters(meters_[i]);
      meters_read_[i] = true;
    }
    for (const SmMeter& m : meters_[i])
      if (name == m.name) {
        value += static_cast<double>(m.value);
        less += static_cast<double>(m.less);
        break;
      }
  }
  return {value, less};
}

void CounterTracks::record() {
  std::fill(meters_read_.begin(), meters_read_.end(), false);
  for (Track& t : tracks_) {
    switch (t.source) {
      case Source::kLlcBytes:
      case Source::kDramBytes: {
        const MemoryTraffic traffic = memory_.traffic().value_or(MemoryTraffic{});
        const ByteTotals bytes = t.source == Source::kLlcBytes ? traffic.llc : traffic.dram;
        t.a_values.push_back(static_cast<double>(bytes.read) + static_cast<double>(bytes.write));
        t.b_values.push_back(0);
        break;
      }
      case Source::kMeter: {
        const auto [value, less] = meter(t.meter, t.sm);
        t.a_values.push_back(value);
        t.b_values.push_back(less);
        break;
      }
      case Source::kCacheUse: {
        const CacheUse use = memory_.cache_use().value_or(CacheUse{});
        t.a_values.push_back(static_cast<double>(use.hits));
        t.b_values.push_back(static_cast<double>(use.misses));
        break;
      }
    }
  }
}

void CounterTracks::sample_until(Cycle now) {
  if (next_ > now) return;
  std::size_t first = boundaries_.size();
  record();
  for (; next_ <= now; next_ += window_) boundaries_.push_back(next_);
  // Every boundary passed in this call saw the same statistics.
  for (Track& t : tracks_) {
    t.a_values.resize(boundaries_.size(), t.a_values[first]);
    t.b_values.resize(boundaries_.size(), t.b_values[first]);
  }
}

void CounterTracks::finish(Cycle end) {
  sample_until(end == 0 ? 0 : end - 1);
  if (boundaries_.back() == end) {
    for (Track& t : tracks_) t.a_values.pop_back(), t.b_values.pop_back();
    boundaries_.pop_back();
  }
  boundaries_.push_back(end);
  record();
  next_ = kNever;
}

std::vector<CounterTracks::Point> CounterTracks::series(const Track& t) const {
  std::vector<Point> out;
  const std::size_t n = boundaries_.size();
  if (n == 0) return out;
  double backlog = 0;  // kBusy: busy cycles counted at issue and not yet run
  for (std::size_t k = 0; k + 1 < n; ++k) {
    const double length = static_cast<double>(boundaries_[k + 1] - boundaries_[k]);
    const double da = t.a_values[k + 1] - t.a_values[k];
    const double db = t.b_values[k + 1] - t.b_values[k];
    double v = 0;
    switch (t.kind) {
      case Kind::kRate:
        v = t.scale * da / length;
        break;
      case Kind::kRatio:
        v = da + db > 0 ? t.scale * da / (da + db) : 0;
        break;
      case Kind::kLevel:
        v = t.scale * (t.a_values[k] - t.b_values[k]);
        break;
      case Kind::kBusy: {
        // A tensor core counts an instruction's cycles when it is issued, and one pipeline runs
        // them in order: the cycles beyond a window's length run in the next windows. The last
        // window takes what is left, so the windows sum to the statistic's total.
        const double ran = k + 2 == n ? backlog + da : std::min(length, backlog + da);
        backlog += da - ran;
        v = t.scale * ran / length;
        break;
      }
    }
    out.push_back({boundaries_[k], v});
  }
  const double last =
      t.kind == Kind::kLevel ? t.scale * (t.a_values[n - 1] - t.b_values[n - 1]) : 0;
  out.push_back({boundaries_[n - 1], last});
  return out;
}

}  // namespace simfa::kernel
