// The memory path's cost per request (issue 4's benchmark): nanoseconds per L2 request on the hit
// path and on the miss path, DRAM requests per wall second for dram.hbm3, and nanoseconds per L2
// request of a streaming workload through the whole simulator (DESIGN.md §11).
//
// The component benchmarks build the plugins' _impl libraries directly against the kernel's
// CalendarQueue and stats registry (as tests/memory/memory_harness.h does against its manual
// queue), with the parameters configs/h800.toml gives them. A closed-loop streamer stands in for
// the SMs' TMA engines: it sends up to `per_cycle` requests a cycle while fewer than `window` are
// outstanding. Each benchmark iteration continues the same stream for a batch of requests, so the
// cache and the queues stay in their steady state.
//
//   cmake -S . -B build/perf -G Ninja -DCMAKE_BUILD_TYPE=Release && cmake --build build/perf
//   build/perf/bin/memory_bench
#include <benchmark/benchmark.h>

#include <cstdint>
#include <deque>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "engine_harness.h"  // resolve_params: a component's parameters from its own schema
#include "hbm3_dram.h"
#include "kernel/event_queue.h"
#include "kernel/manifest.h"
#include "kernel/plugin_host.h"
#include "kernel/simulation.h"
#include "kernel/stats_registry.h"
#include "kernel/workload_spec.h"
#include "lru_replacement.h"
#include "memory_harness.h"  // TestSlots: the L2's replacement sub-slot
#include "remote_copy_l2.h"
#include "simfa/component.h"
#include "simfa/memory.h"
#include "simfa/slot_pool.h"
#include "unified_l2.h"
#include "xor_slice_map.h"

namespace {

using namespace simfa;
using simfa::kernel::CalendarQueue;
using simfa::test::ParamOverrides;

constexpr std::uint32_t kLine = 128;
constexpr int kSms = 132;
constexpr std::uint64_t kBatch = 1 << 16;  // requests per benchmark iteration

// configs/h800.toml's [memory.l2] (l2.remote_copy) and its GPU.
const ParamOverrides kH800L2 = {{"size", std::int64_t{50} << 20},
                                {"slices", std::int64_t{160}},
                                {"assoc", std::int64_t{16}},
                                {"hit_latency", std::int64_t{200}},
                                {"mshr_per_slice", std::int64_t{256}},
                                {"far_latency", std::int64_t{170}},
                                {"max_insert_probability", 0.5},
                                {"occupancy_threshold", 0.5}};
const ParamOverrides kUnifiedL2 = {{"size", std::int64_t{50} << 20},
                                   {"slices", std::int64_t{160}},
                                   {"assoc", std::int64_t{16}},
                                   {"hit_latency", std::int64_t{200}},
                                   {"mshr_per_slice", std::int64_t{256}}};

/// Components built as the kernel builds them, against one CalendarQueue and stats registry.
class Rig {
 public:
  Rig() {
    gpu.sm_count = kSms;
    gpu.clock_mhz = 1830;
  }
  template <typename T>
  std::unique_ptr<T> make(const ParamOverrides& overrides, const std::string& prefix,
                          const SlotResolver* slots = nullptr) {
    params_.push_back(test::resolve_params<T>(overrides));
    T::describe(schemas_.emplace_back());
    const BuildContext context{
        params_.back(), events, StatsScope(stats, prefix, &schemas_.back()), gpu, 1, -1, slots};
    return std::make_unique<T>(context);
  }
  /// Fires events until `done` holds or none is left.
  template <typename Done>
  void run_until(Done done) {
    while (!done() && events.fire_next()) {
    }
  }

  CalendarQueue events;
  kernel::StatsRegistryImpl stats;
  GpuConfig gpu;

 private:
  std::deque<Params> params_;
  std::deque<Schema> schemas_;  // a component's statistics' declarations outlive it
};

/// A fixed-latency memory below the L2 (the miss path without DRAM timing): answers each request
/// `latency` cycles after it was sent, from a pool.
class FixedLatencyMemory final : public MemoryPort, private EventTarget {
 public:
  FixedLatencyMemory(EventQueue& events, Cycle latency) : events_(events), latency_(latency) {}
  void send(Cycle now, const MemRequest& request) override {
    events_.schedule(now + latency_, *this, in_flight_.add(request), Priority::kMemory);
  }

 private:
  void on_event(Cycle now, std::uint64_t payload) override {
    const auto slot = static_cast<std::uint32_t>(payload);
    const MemRequest request = in_flight_[slot];
    in_flight_.release(slot);
    request.client->on_response(now, request);
  }
  EventQueue& events_;
  Cycle latency_;
  SlotPool<MemRequest> in_flight_;
};

/// The SMs' TMA engines, closed loop: line `next_line(i)` for request i, from SM i % 132, up to
/// `per_cycle` a cycle while fewer than `window` are outstanding.
template <typename NextLine>
class Streamer final : public MemClient, private EventTarget {
 public:
  Streamer(EventQueue& events, MemoryPort& port, std::uint32_t per_cycle, std::uint32_t window,
           NextLine next_line)
      : events_(events), port_(port), per_cycle_(per_cycle), window_(window), next_line_(next_line) {}

  /// Sends `count` more requests; run the queue until answered() reaches the new total.
  void extend(std::uint64_t count) {
    limit_ += count;
    arm(events_.now());
  }
  std::uint64_t answered() const { return answered_; }
  std::uint64_t limit() const { return limit_; }

  void on_response(Cycle now, const MemRequest&) override {
    --outstanding_;
    ++answered_;
    arm(now);
  }

 private:
  void on_event(Cycle now, std::uint64_t) override {
    armed_ = false;
    for (std::uint32_t k = 0; k < per_cycle_ && outstanding_ < window_ && sent_ < limit_; ++k) {
      const std::uint64_t i = sent_++;
      ++outstanding_;
      port_.send(now, MemRequest{next_line_(i) * kLine, kLine, static_cast<std::uint16_t>(i % kSms),
                                 false, false, i, this});
    }
    if (outstanding_ < window_ && sent_ < limit_) {
      armed_ = true;
      events_.schedule(now + 1, *this, 0, Priority::kEngine);
    }
  }
  void arm(Cycle now) {
    if (armed_ || outstanding_ >= window_ || sent_ >= limit_) return;
    armed_ = true;
    events_.schedule(now, *this, 0, Priority::kEngine);
  }

  EventQueue& events_;
  MemoryPort& port_;
  std::uint32_t per_cycle_, window_;
  NextLine next_line_;
  std::uint64_t sent_ = 0, answered_ = 0, limit_ = 0;
  std::uint32_t outstanding_ = 0;
  bool armed_ = false;
};

template <typename Streamer>
void run_batches(benchmark::State& state, Rig& rig, Streamer& streamer) {
  std::uint64_t requests = 0;
  for (auto _ : state) {
    streamer.extend(kBatch);
    rig.run_until([&] { return streamer.answered() >= streamer.limit(); });
    requests += kBatch;
  }
  using benchmark::Counter;
  state.counters["ns_per_request"] =
      Counter(static_cast<double>(requests), Counter::kIsRate | Counter::kInvert, Counter::kIs1000);
  state.counters["requests_per_s"] = Counter(static_cast<double>(requests), Counter::kIsRate);
}

template <typename L2>
void l2_bench(benchmark::State& state, const ParamOverrides& params, bool hits) {
  Rig rig;
  auto lru = rig.make<memory_models::LruReplacement>({}, "l2.replacement");
  test::TestSlots slots;
  slots.add("replacement", *lru);
  auto l2 = rig.make<L2>(params, "l2", &slots);
  auto map = rig.make<memory_models::XorSliceMap>({}, "l2.slice_map");
  // 500 cycles: about what dram.hbm3 answers an unloaded line read in at 1830 MHz.
  FixedLatencyMemory dram(rig.events, 500);
  l2->connect(*map, dram);
  // Hits: 64Ki lines (8 MiB, spread over every slice and set) read round and round, after one
  // pass that brings them in. Misses: a stream that never returns to a line.
  constexpr std::uint64_t kWorkingSet = 1 << 16;
  constexpr std::uint64_t kBase = 0x7f0000000000 / kLine;
  auto next_line = [hits](std::uint64_t i) { return kBase + (hits ? i % kWorkingSet : i); };
  // 32 a cycle: below the 160 slices' 40 a cycle; 16Ki in flight: 132 SMs x 128 outstanding.
  Streamer streamer(rig.events, *l2, 32, 16384, next_line);
  if (hits) {
    streamer.extend(kWorkingSet);
    rig.run_until([&] { return streamer.answered() >= streamer.limit(); });
  }
  run_batches(state, rig, streamer);
  const CacheUse use = *l2->cache_use();
  state.counters["hit_rate"] =
      static_cast<double>(use.hits) / static_cast<double>(use.hits + use.misses);
}

// ns per L2 request on the hit path: l2.remote_copy as configs/h800.toml has it.
void BM_L2HitPath(benchmark::State& state) {
  l2_bench<memory_models::RemoteCopyL2>(state, kH800L2, true);
}
BENCHMARK(BM_L2HitPath)->Unit(benchmark::kMillisecond);

// ns per L2 request on the miss path: every request misses, fetches its line from a fixed-latency
// memory and evicts the set's LRU line.
void BM_L2MissPath(benchmark::State& state) {
  l2_bench<memory_models::RemoteCopyL2>(state, kH800L2, false);
}
BENCHMARK(BM_L2MissPath)->Unit(benchmark::kMillisecond);

void BM_UnifiedL2HitPath(benchmark::State& state) {
  l2_bench<memory_models::UnifiedL2>(state, kUnifiedL2, true);
}
BENCHMARK(BM_UnifiedL2HitPath)->Unit(benchmark::kMillisecond);

void BM_UnifiedL2MissPath(benchmark::State& state) {
  l2_bench<memory_models::UnifiedL2>(state, kUnifiedL2, false);
}
BENCHMARK(BM_UnifiedL2MissPath)->Unit(benchmark::kMillisecond);

// DRAM requests (128 B line reads) per wall second through dram.hbm3 (the H800_HBM3 preset):
// `sequential` streams consecutive lines, otherwise lines are scattered over 16 GiB (row misses
// and conflicts). 16 a cycle and 8Ki in flight keep every channel's queue busy.
void dram_bench(benchmark::State& state, bool sequential) {
  Rig rig;
  auto dram = rig.make<memory_models::Hbm3Dram>({}, "dram");
  auto next_line = [sequential](std::uint64_t i) {
    return sequential ? i : (i * 0x9E3779B97F4A7C15ull >> 37);  // 2^27 lines = 16 GiB
  };
  Streamer streamer(rig.events, *dram, 16, 8192, next_line);
  run_batches(state, rig, streamer);
}
void BM_Hbm3Sequential(benchmark::State& state) { dram_bench(state, true); }
BENCHMARK(BM_Hbm3Sequential)->Unit(benchmark::kMillisecond);
void BM_Hbm3Scattered(benchmark::State& state) { dram_bench(state, false); }
BENCHMARK(BM_Hbm3Scattered)->Unit(benchmark::kMillisecond);

// The whole simulator on configs/h800.toml: each of 132 CTAs (one per SM) streams 36 TMA tiles of
// 16 KiB over its own part of a 74 MiB tensor (larger than the 50 MiB L2) through a 4-stage ring.
// No line is read twice: every L2 request misses and goes to dram.hbm3. ns per L2 request = wall
// time / (L2 hits + misses).
std::string stream_trace() {
  auto path = std::filesystem::temp_directory_path() / "simfa_bench_stream.trace";
  std::ofstream(path) << R"(let T = 32
let S = 4
let R = 128
grid 132
tensormap X base=0x7f0000000000 elem=fp16 shape=[64, 132 * (T + S) * R] box=[64, R]
cta {
  smem S * 16KiB
  stages S
  warpgroup main regs=64 {
    repeat p in 0..S {
      ACQUIRE_STAGE p
      TMA_LOAD X, 0, (cta * (T + S) + p) * R, p
    }
    repeat k in 0..T {
      MB_WAIT k % S
      RELEASE_STAGE k % S
      ACQUIRE_STAGE k % S
      TMA_LOAD X, 0, (cta * (T + S) + k + S) * R, k % S
    }
    repeat k in T..T + S {
      MB_WAIT k % S
      RELEASE_STAGE k % S
    }
  }
}
)";
  return path.string();
}

void BM_StreamEndToEnd(benchmark::State& state) {
  kernel::PluginHost host;
  host.load_directories({SIMFA_PLUGIN_BUILD_DIR});
  const kernel::Manifest manifest = kernel::resolve_manifest(
      kernel::read_manifest(SIMFA_SOURCE_DIR "/configs/h800.toml", {}), host);
  const kernel::ComponentConfig workload = kernel::parse_workload_spec(stream_trace(), host);
  double requests = 0, events = 0;
  for (auto _ : state) {
    kernel::Simulation sim(manifest, workload, host, kernel::RunOptions{});
    const kernel::RunResult r = sim.run();
    const CacheUse use = *sim.memory().cache_use();
    requests += static_cast<double>(use.hits + use.misses);
    events += static_cast<double>(r.events);
  }
  using benchmark::Counter;
  state.counters["ns_per_request"] =
      Counter(requests, Counter::kIsRate | Counter::kInvert, Counter::kIs1000);
  state.counters["requests_per_s"] = Counter(requests, Counter::kIsRate);
  state.counters["events_per_request"] = events / requests;
}
BENCHMARK(BM_StreamEndToEnd)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
