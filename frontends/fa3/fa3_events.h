// The nine event types an instrumented FlashAttention-3 kernel records (the paper's section
// VI-A), one CTA's events grouped by WarpGroup, and the generator that produces them for any
// shape in the order FA3's code issues them, with the writer of the event-log file
// (docs/workloads.md gives its format).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "fa3_kernel.h"

namespace simfa::fa3 {

enum class Fa3Event : std::uint8_t {
  kTmaQIssue,    ///< producer, before the Q cp.async.bulk.tensor; tile: Q tile (m_block)
  kTmaKIssue,    ///< producer, before a K load; tile: K tile (n_block)
  kTmaVIssue,    ///< producer, before a V load; tile: V tile
  kWaitKStart,   ///< consumer, at the K mbarrier.try_wait; tile: the K tile waited for
  kWaitVStart,   ///< consumer, at the V mbarrier.try_wait; tile: the V tile waited for
  kGemmQkIssue,  ///< consumer, before S = Q K^T's wgmma.mma_async; tile: the K tile
  kGemmPvIssue,  ///< consumer, before O += P V's wgmma.mma_async; tile: the V tile
  kWaitWg1,      ///< consumer, at wgmma.wait_group 1; tile: that of the last GEMM issued
  kWaitWg0,      ///< consumer, at wgmma.wait_group 0; tile: that of the last GEMM issued
};
inline constexpr int kEventTypes = 9;

/// The name the paper and the log use ("TMA_Q_ISSUE", ...).
const char* event_name(Fa3Event event);
/// The event of that name; false when there is none.
bool find_event(std::string_view name, Fa3Event& event);

struct EventRecord {
  Fa3Event event = Fa3Event::kTmaQIssue;
  std::uint8_t warp = 0;     ///< the warp whose line introduced it (logs only)
  std::uint16_t column = 0;  ///< 1-based column of the event field (logs only)
  std::uint32_t tile = 0;
  std::uint32_t line = 0;  ///< 1-based line in the log; 0 for generated events
};

/// One CTA's events, one stream per WarpGroup after deduplication: [0] is the producer,
/// [1 + c] consumer c.
using CtaEvents = std::vector<std::vector<EventRecord>>;

/// The events of work tile `tile_index` (Fa3Kernel::tile_of; CTA `tile_index`'s when each CTA
/// computes one tile), as FA3's producer and consumer code issues them
/// (hopper/mainloop_fwd_sm90_tma_gmma_ws.hpp, IntraWGOverlap): KV tiles from the last to the
/// first; K before Q; then K of tile n with V of tile n + 1. Without intra_wg_overlap each
/// consumer computes S of a tile, waits, then P V of the same tile.
void generate_events(const Fa3Kernel& kernel, std::uint64_t tile_index, CtaEvents& out);

/// The header line of the CSV event log.
inline constexpr std::string_view kLogHeader = "cta,warp,timestamp,event,tile";

/// Writes the log of every CTA: `comment` as a '#' line, the header, then per CTA the producer's
/// events on warp 0 (the only producer warp that issues TMA) and each consumer's on all four of
/// its warps; a warp's timestamps count its events. Throws InputError when `out` fails.
void write_event_log(const Fa3Kernel& kernel, const std::string& comment, std::ostream& out);

}  // namespace simfa::fa3
