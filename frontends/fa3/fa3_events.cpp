#include "fa3_events.h"

#include "simfa/error.h"

namespace simfa::fa3 {

namespace {

constexpr const char* kEventNames[kEventTypes] = {"TMA_Q_ISSUE",   "TMA_K_ISSUE",  "TMA_V_ISSUE",
                                                  "WAIT_K_START",  "WAIT_V_START", "GEMM_QK_ISSUE",
                                                  "GEMM_PV_ISSUE", "WAIT_WG_1",    "WAIT_WG_0"};

}  // namespace

const char* event_name(Fa3Event event) {
  return kEventNames[static_cast<int>(event)];
}

bool find_event(std::string_view name, Fa3Event& event) {
  for (int i = 0; i < kEventTypes; ++i) {
    if (name == kEventNames[i]) {
      event = static_cast<Fa3Event>(i);
      return true;
    }
  }
  return false;
}

void generate_events(const Fa3Kernel& kernel, std::uint64_t index, CtaEvents& out) {
  out.resize(1 + kernel.consumers());
  for (auto& stream : out) stream.clear();
  const Fa3Kernel::Tile tile = kernel.tile_of(index);
  const std::int64_t n_max = kernel.n_block_max(tile.m_block);
  if (n_max == 0) return;  // FA3 skips the mainloop and stores zeros
  auto add = [](std::vector<EventRecord>& stream, Fa3Event event, std::int64_t tile_index) {
    EventRecord r;
    r.event = event;
    r.tile = static_cast<std::uint32_t>(tile_index);
    stream.push_back(r);
  };

  // CollectiveMainloopFwdSm90::load: the first K, Q, then K of n with V of n + 1, the last V.
  std::vector<EventRecord>& producer = out[0];
  add(producer, Fa3Event::kTmaKIssue, n_max - 1);
  add(producer, Fa3Event::kTmaQIssue, tile.m_block);
  for (std::int64_t n = n_max - 2; n >= 0; --n) {
    add(producer, Fa3Event::kTmaKIssue, n);
    add(producer, Fa3Event::kTmaVIssue, n + 1);
  }
  add(producer, Fa3Event::kTmaVIssue, 0);

  // CollectiveMainloopFwdSm90::mma: S of the first tile alone, then fwd_step (S of n and P V of
  // n + 1), then the last P V. With the scheduler barrier only the first consumer waits on the
  // K and V mbarriers inside fwd_step: the others get their turn after it, when the data is in.
  for (std::uint32_t c = 0; c < kernel.consumers(); ++c) {
    std::vector<EventRecord>& e = out[1 + c];
    if (!kernel.shape().intra_wg_overlap) {
      // Without IntraWGOverlap: S of tile n, its softmax, then P V of the same tile.
      for (std::int64_t n = n_max - 1; n >= 0; --n) {
        add(e, Fa3Event::kWaitKStart, n);
        add(e, Fa3Event::kGemmQkIssue, n);
        add(e, Fa3Event::kWaitWg0, n);
        add(e, Fa3Event::kWaitVStart, n);
        add(e, Fa3Event::kGemmPvIssue, n);
        add(e, Fa3Event::kWaitWg0, n);
      }
      continue;
    }
    const bool waits = !kernel.scheduler_barrier() || c == 0;
    add(e, Fa3Event::kWaitKStart, n_max - 1);
    add(e, Fa3Event::kGemmQkIssue, n_max - 1);
    add(e, Fa3Event::kWaitWg0, n_max - 1);
    for (std::int64_t n = n_max - 2; n >= 0; --n) {
      if (waits) add(e, Fa3Event::kWaitKStart, n);
      add(e, Fa3Event::kGemmQkIssue, n);
      if (waits) add(e, Fa3Event::kWaitVStart, n + 1);
      add(e, Fa3Event::kGemmPvIssue, n + 1);
      add(e, Fa3Event::kWaitWg1, n + 1);
      add(e, Fa3Event::kWaitWg0, n + 1);
    }
    add(e, Fa3Event::kWaitVStart, 0);
    add(e, Fa3Event::kGemmPvIssue, 0);
    add(e, Fa3Event::kWaitWg0, 0);
  }
}

void write_event_log(const Fa3Kernel& kernel, const std::string& comment, std::ostream& out) {
  std::string text = "# " + comment + "\n" + std::string(kLogHeader) + "\n";
  CtaEvents events;
  auto emit = [&](std::uint64_t cta, std::uint32_t warp, const std::vector<EventRecord>& stream) {
    std::uint64_t timestamp = 0;
    for (const EventRecord& r : stream) {
      text += std::to_string(cta) + ',' + std::to_string(warp) + ',' + std::to_string(timestamp++) +
              ',' + event_name(r.event) + ',' + std::to_string(r.tile) + '\n';
    }
  };
  for (std::uint64_t cta = 0; cta < kernel.cta_count(); ++cta) {
    generate_events(kernel, cta, events);
    emit(cta, 0, events[0]);
    for (std::uint32_t wg = 1; wg < events.size(); ++wg)
      for (std::uint32_t w = 0; w < kWarpsPerWarpGroup; ++w)
        emit(cta, wg * kWarpsPerWarpGroup + w, events[wg]);
    if (text.size() >= (1u << 20)) {
      out.write(text.data(), static_cast<std::streamsize>(text.size()));
      text.clear();
    }
  }
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.flush();
  if (!out) throw InputError("cannot write the FA3 event log");
}

}  // namespace simfa::fa3
