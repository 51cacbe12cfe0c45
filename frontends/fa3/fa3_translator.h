// Translates one CTA's deduplicated FlashAttention-3 events into its simfa program by the rules
// of the paper's section VI-B (docs/workloads.md lists them with their sources in FA3's code):
// loads become ACQUIRE_STAGE + TMA_LOAD with addresses from the tile indices, GEMM issues become
// one WGMMA group each, WAIT_WG_n becomes WGMMA_WAIT n followed by the RELEASE_STAGEs of the
// GEMMs it retires and, after an S = Q K^T, the softmax bubble; named barriers pass the tensor
// core between the consumers. Events that break the kernel's structure are InputErrors at the
// event's line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fa3_events.h"
#include "fa3_kernel.h"
#include "simfa/program.h"
#include "simfa/program_builder.h"

namespace simfa::fa3 {

class Fa3EventTranslator {
 public:
  /// `file` names the log in error messages (the events' lines are its lines).
  Fa3EventTranslator(const Fa3Kernel& kernel, std::string file);

  /// CTA `cta`'s program when it computes one work tile, the CTA's own (scheduler kNone).
  void translate(std::uint64_t cta, const CtaEvents& events, CtaProgram& out);

  /// A persistent CTA, one work tile at a time: begin, then append each tile's events in the
  /// CTA's order (`tile_index` for Fa3Kernel::tile_of), then finish. The K/V rings, the WGMMA
  /// groups and the consumers' turns run on across tiles; the i-th tile's Q is in Q ring slot
  /// i mod q_stages, released after the tile's last P V when another tile follows. One tile
  /// appended gives translate's program.
  void begin(std::uint64_t cta, CtaProgram& out);
  void append(std::uint64_t tile_index, const CtaEvents& events, bool last);
  void finish();

  /// CTAs 0 to `ctas` - 1 are the launch's first wave: begin() puts Fa3Shape::first_wave_bubble
  /// first in each of their WarpGroups.
  void set_first_wave(std::uint64_t ctas) { first_wave_ctas_ = ctas; }

 private:
  struct ConsumerState {
    std::uint64_t k_used = 0;  ///< GEMMs issued on K and V loads so far
    std::uint64_t v_used = 0;
    bool started = false;  ///< took part in the turns (its first arrival is behind it)
  };
  void producer(const std::vector<EventRecord>& events, WarpGroupCode code);
  void consumer(std::uint32_t c, const std::vector<EventRecord>& events, bool last,
                WarpGroupCode code);
  void issue_cost(WarpGroupCode& code) const;
  [[noreturn]] void fail(const EventRecord& at, const std::string& message) const;

  const Fa3Kernel& kernel_;
  std::string file_;
  std::uint64_t cta_ = 0;
  std::optional<CtaProgramBuilder> program_;  ///< the CTA's, from begin() to finish()
  std::uint64_t first_wave_ctas_ = 0;
  Fa3Kernel::Tile tile_;
  std::vector<std::uint32_t> k_tiles_;  ///< the producer's K loads, in order, over the CTA's tiles
  std::vector<std::uint32_t> v_tiles_;
  std::size_t k_tile_begin_ = 0;  ///< this tile's first K and V loads
  std::size_t v_tile_begin_ = 0;
  std::vector<ConsumerState> consumers_;
  std::uint64_t tiles_begun_ = 0;  ///< tiles of this CTA appended so far (the tile hand-off)
  std::uint8_t q_slot_ = 0;        ///< the Q ring slot of the tile being appended
};

}  // namespace simfa::fa3
