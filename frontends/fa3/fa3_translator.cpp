#include "fa3_translator.h"

#include <utility>

#include "simfa/error.h"

namespace simfa::fa3 {

namespace {

std::string tile_text(const EventRecord& r) {
  return std::string(event_name(r.event)) + " tile " + std::to_string(r.tile);
}

/// A GEMM issued and not yet retired by a WAIT_WG: S = Q K^T of the i-th K tile or O += P V of
/// the i-th V tile.
struct Gemm {
  bool qk;
  std::uint64_t index;
};

}  // namespace

Fa3EventTranslator::Fa3EventTranslator(const Fa3Kernel& kernel, std::string file)
    : kernel_(kernel), file_(std::move(file)) {}

void Fa3EventTranslator::fail(const EventRecord& at, const std::string& message) const {
  throw InputError(SourceLocation{file_, at.line, at.column},
                   "CTA " + std::to_string(cta_) + ": " + message);
}

void Fa3EventTranslator::translate(std::uint64_t cta, const CtaEvents& events, CtaProgram& out) {
  begin(cta, out);
  append(cta, events, true);
  finish();
}

void Fa3EventTranslator::begin(std::uint64_t cta, CtaProgram& out) {
  cta_ = cta;
  CtaProgramBuilder& program = program_.emplace(out, cta, kernel_.maps());
  program.smem(kernel_.smem_bytes());
  program.stages(kernel_.stage_count(), kernel_.consumers());
  if (kernel_.tile_barriers()) {
    // Turn barriers keep the default 2 (the previous consumer's arrival and the wait); the tile
    // hand-off's full and empty barriers hold the producer and every consumer, the start one the
    // consumers.
    program.barrier(Fa3Kernel::tile_full_barrier(), 1 + kernel_.consumers());
    program.barrier(Fa3Kernel::tile_empty_barrier(), 1 + kernel_.consumers());
    program.barrier(Fa3Kernel::tile_start_barrier(), kernel_.consumers());
  }
  tiles_begun_ = 0;
  program.add_warpgroups(1, kernel_.producer_registers_per_thread());
  program.add_warpgroups(kernel_.consumers(), kernel_.consumer_registers_per_thread());
  if (cta < first_wave_ctas_ && kernel_.shape().first_wave_bubble > 0)
    for (std::uint32_t w = 0; w < program.warpgroup_count(); ++w)
      program.warpgroup(w).bubble(static_cast<std::uint32_t>(kernel_.shape().first_wave_bubble));
  // The first tile's index: the producer loads nothing before the counter answers.
  if (kernel_.shape().scheduler == Fa3Scheduler::kDynamic && kernel_.shape().first_index_cycles > 0)
    program.warpgroup(0).bubble(static_cast<std::uint32_t>(kernel_.shape().first_index_cycles));
  k_tiles_.clear();
  v_tiles_.clear();
  consumers_.assign(kernel_.consumers(), ConsumerState{});
}

void Fa3EventTranslator::append(std::uint64_t tile_index, const CtaEvents& events, bool last) {
  tile_ = kernel_.tile_of(tile_index);
  q_slot_ = kernel_.q_stage(tiles_begun_);
  k_tile_begin_ = k_tiles_.size();
  v_tile_begin_ = v_tiles_.size();
  WarpGroupCode producer_code = program_->warpgroup(0);
  producer(events[0], producer_code);
  if (kernel_.tile_barriers()) {
    // The next tile's index, written once the consumers have read this one's (none before the
    // CTA's first tile, which comes from its CTA index).
    if (tiles_begun_ > 0)
      producer_code.push(Instruction::bar_wait(Fa3Kernel::tile_empty_barrier()));
    producer_code.push(Instruction::bar_arrive(Fa3Kernel::tile_full_barrier()));
  }
  ++tiles_begun_;
  for (std::uint32_t c = 0; c < kernel_.consumers(); ++c) {
    if (events[1 + c].empty() && !events[0].empty())
      fail(events[0].front(), "consumer WarpGroup " + std::to_string(1 + c) +
                                  " records no events, while the producer loads Q, " +
                                  std::to_string(k_tiles_.size() - k_tile_begin_) + " K and " +
                                  std::to_string(v_tiles_.size() - v_tile_begin_) + " V tiles");
    consumer(c, events[1 + c], last, program_->warpgroup(1 + c));
  }
}

void Fa3EventTranslator::finish() {
  program_->finish();
  program_.reset();
}

void Fa3EventTranslator::issue_cost(WarpGroupCode& code) const {
  if (kernel_.shape().producer_issue_cycles > 0)
    code.bubble(static_cast<std::uint32_t>(kernel_.shape().producer_issue_cycles));
}

void Fa3EventTranslator::producer(const std::vector<EventRecord>& events, WarpGroupCode code) {
  bool q_loaded = false;
  for (const EventRecord& r : events) {
    switch (r.event) {
      case Fa3Event::kTmaQIssue:
        if (q_loaded) fail(r, "the producer loads Q twice");
        if (r.tile != tile_.m_block)
          fail(r, "TMA_Q_ISSUE loads Q tile " + std::to_string(r.tile) +
                      ", but this CTA computes Q tile " + std::to_string(tile_.m_block) +
                      " (head " + std::to_string(tile_.head) + ", batch " +
                      std::to_string(tile_.batch) + ") in FA3's tile order");
        q_loaded = true;
        code.push(Instruction::acquire_stage(q_slot_));
        code.tma_load(kMapQ,
                      {0, std::int64_t{r.tile} * kernel_.shape().block_m, tile_.head, tile_.batch},
                      q_slot_);
        issue_cost(code);
        break;
      case Fa3Event::kTmaKIssue:
      case Fa3Event::kTmaVIssue: {
        const bool k = r.event == Fa3Event::kTmaKIssue;
        if (r.tile >= kernel_.n_blocks())
          fail(r, tile_text(r) + " is outside the " + std::to_string(kernel_.n_blocks()) +
                      " K/V tiles of seqlen_k");
        std::vector<std::uint32_t>& tiles = k ? k_tiles_ : v_tiles_;
        const std::uint8_t stage =
            k ? kernel_.k_stage(tiles.size()) : kernel_.v_stage(tiles.size());
        code.push(Instruction::acquire_stage(stage));
        code.tma_load(k ? kMapK : kMapV,
                      {0, std::int64_t{r.tile} * kernel_.shape().block_n,
                       kernel_.kv_head(tile_.head), tile_.batch},
                      stage);
        issue_cost(code);
        tiles.push_back(r.tile);
        break;
      }
      default:
        fail(r, std::string(event_name(r.event)) + " is a consumer event, but warp " +
                    std::to_string(r.warp) + " is in the producer WarpGroup (warps 0-3)");
    }
  }
  if (!q_loaded && !events.empty()) fail(events.back(), "the producer never issues TMA_Q_ISSUE");
}

void Fa3EventTranslator::consumer(std::uint32_t c, const std::vector<EventRecord>& events,
                                  bool last, WarpGroupCode code) {
  // O's rows this consumer computes, which it stores at the tile's end.
  const std::int64_t store_row =
      tile_.m_block * kernel_.shape().block_m + std::int64_t{c} * kRowsPerConsumer;
  auto store = [&] { code.tma_store(kMapO, {0, store_row, tile_.head, tile_.batch}); };
  const bool hand_off = kernel_.tile_barriers();
  // The tile's end: the next tile's index from the producer, read, then the read announced (not
  // after the CTA's last tile, whose index says there is none and which no producer waits on).
  auto tile_end = [&] {
    if (!hand_off) return;
    code.push(Instruction::bar_wait(Fa3Kernel::tile_full_barrier()));
    if (!last) code.push(Instruction::bar_arrive(Fa3Kernel::tile_empty_barrier()));
  };
  if (events.empty()) {  // no KV tile to attend: FA3 writes zeros
    store();
    tile_end();
    return;
  }
  ConsumerState& state = consumers_[c];
  const bool barrier = kernel_.scheduler_barrier();
  const bool exp2_turns = barrier && kernel_.shape().turn == Fa3Turn::kExp2;
  // mma_init, once a CTA: the first consumer's own arrival lets it take the first turn.
  if (barrier && c == 0 && !state.started)
    code.push(Instruction::bar_arrive(Fa3Kernel::turn_barrier(0)));
  state.started = true;
  if (kernel_.shape().tile_start_cycles > 0)
    code.bubble(static_cast<std::uint32_t>(kernel_.shape().tile_start_cycles));
  code.push(Instruction::mb_wait(q_slot_));
  if (hand_off) code.push(Instruction::bar_wait(Fa3Kernel::tile_start_barrier()));

  const bool pipes = kernel_.shape().softmax == Fa3Softmax::kPipes;
  std::uint64_t& k_used = state.k_used;  // GEMMs issued on K and V loads
  std::uint64_t& v_used = state.v_used;
  const std::uint64_t k_first = k_used, v_first = v_used;
  bool k_waited = false, v_waited = false;
  bool in_turn = false;
  bool rescale = false;  // a softmax whose scale O still owes (kPipes: after P V's wait)
  std::vector<Gemm> outstanding;
  auto check_tile = [&](const EventRecord& r, bool k, std::uint64_t i) {
    const std::vector<std::uint32_t>& tiles = k ? k_tiles_ : v_tiles_;
    const std::size_t first = k ? k_tile_begin_ : v_tile_begin_;
    if (i >= tiles.size())
      fail(r, tile_text(r) + " needs the producer's " + (k ? "K" : "V") + " load " +
                  std::to_string(i - first + 1) + ", but it loads " +
                  std::to_string(tiles.size() - first));
    if (tiles[i] != r.tile)
      fail(r, tile_text(r) + " uses the producer's " + (k ? "K" : "V") + " load " +
                  std::to_string(i - first + 1) + ", which is of tile " + std::to_string(tiles[i]));
  };
  auto compute = [&](const Fa3Kernel::Phase& phase) { code.compute(phase.latency, phase.work); };
  auto gemm = [&](bool qk, std::uint32_t count, std::int64_t n) {
    code.wgmma_group(count, static_cast<std::uint16_t>(kRowsPerConsumer),
                     static_cast<std::uint16_t>(n), static_cast<std::uint16_t>(kWgmmaK));
    // The integer work issued with the GEMM runs beside its execution.
    if (pipes) {
      const Fa3Kernel::Phase issue = kernel_.gemm_issue_phase(qk);
      if (issue.work != ComputeWork{}) code.compute(issue.latency, issue.work);
    }
  };

  for (std::size_t i = 0; i < events.size(); ++i) {
    const EventRecord& r = events[i];
    switch (r.event) {
      case Fa3Event::kWaitKStart:
      case Fa3Event::kWaitVStart: {
        const bool k = r.event == Fa3Event::kWaitKStart;
        bool& waited = k ? k_waited : v_waited;
        if (waited)
          fail(r, std::string("a second ") + event_name(r.event) + " before the GEMM that uses it");
        check_tile(r, k, k ? k_used : v_used);
        code.push(Instruction::mb_wait(k ? kernel_.k_stage(k_used) : kernel_.v_stage(v_used)));
        waited = true;
        break;
      }
      case Fa3Event::kGemmQkIssue: {
        check_tile(r, true, k_used);
        // fwd_step: a turn on the tensor core is S of one tile and P V of the previous one,
        // issued between warp_scheduler_barrier_sync and _arrive.
        bool turn = false;
        for (std::size_t j = i + 1; barrier && !exp2_turns && j < events.size(); ++j) {
          const Fa3Event next = events[j].event;
          if (next == Fa3Event::kWaitKStart || next == Fa3Event::kWaitVStart) continue;
          turn = next == Fa3Event::kGemmPvIssue;
          break;
        }
        if (turn) code.push(Instruction::bar_wait(Fa3Kernel::turn_barrier(c)));
        // Every consumer waits on the K mbarrier in the model (its phase count must advance);
        // where the log has no wait, the data is in by the time the turn comes.
        if (!k_waited) code.push(Instruction::mb_wait(kernel_.k_stage(k_used)));
        gemm(true, kernel_.qk_wgmmas(), kernel_.shape().block_n);
        outstanding.push_back({true, k_used++});
        k_waited = false;
        in_turn = turn;
        break;
      }
      case Fa3Event::kGemmPvIssue:
        check_tile(r, false, v_used);
        if (!v_waited) code.push(Instruction::mb_wait(kernel_.v_stage(v_used)));
        gemm(false, kernel_.pv_wgmmas(), kernel_.shape().head_dim);
        outstanding.push_back({false, v_used++});
        v_waited = false;
        if (in_turn)
          code.push(Instruction::bar_arrive(Fa3Kernel::turn_barrier(kernel_.next_consumer(c))));
        in_turn = false;
        break;
      case Fa3Event::kWaitWg1:
      case Fa3Event::kWaitWg0: {
        const std::size_t keep = r.event == Fa3Event::kWaitWg1 ? 1 : 0;
        code.push(Instruction::wgmma_wait(static_cast<std::uint32_t>(keep)));
        bool softmax = false, pv = false;
        std::uint64_t k_index = 0;
        std::size_t retired = 0;
        for (; outstanding.size() - retired > keep; ++retired) {
          const Gemm& g = outstanding[retired];
          code.push(Instruction::release_stage(g.qk ? kernel_.k_stage(g.index)
                                                    : kernel_.v_stage(g.index)));
          if (g.qk) k_index = g.index;
          softmax = softmax || g.qk;
          pv = pv || !g.qk;
        }
        outstanding.erase(outstanding.begin(),
                          outstanding.begin() + static_cast<std::ptrdiff_t>(retired));
        if (pipes && pv && rescale) {  // rescale_o, once P V of the next tile is in O
          compute(kernel_.rescale_phase());
          rescale = false;
        }
        if (softmax && !pipes) {
          code.bubble(kernel_.softmax_bubble());
        } else if (softmax) {
          const bool cut =
              kernel_.masked(tile_.m_block, k_tiles_[static_cast<std::size_t>(k_index)], c);
          for (const Fa3Kernel::Phase& phase : kernel_.softmax_phases(cut)) {
            const bool turn = exp2_turns && phase.exp2;
            if (turn) code.push(Instruction::bar_wait(Fa3Kernel::turn_barrier(c)));
            compute(phase);
            if (turn)
              code.push(Instruction::bar_arrive(Fa3Kernel::turn_barrier(kernel_.next_consumer(c))));
          }
          // S's scale reaches O after the P V it overlaps (IntraWGOverlap); the first S of a tile
          // has no O to rescale. With o_rescale = with_exp the exp phase holds it.
          rescale = !outstanding.empty() || !kernel_.shape().intra_wg_overlap;
          if (!kernel_.shape().intra_wg_overlap && k_index == k_first) rescale = false;
          if (kernel_.shape().o_rescale == Fa3ORescale::kWithExp) rescale = false;
        }
        break;
      }
      default:
        fail(r, std::string(event_name(r.event)) + " is a producer event, but warp " +
                    std::to_string(r.warp) + " is in consumer WarpGroup " + std::to_string(1 + c));
    }
  }

  const EventRecord& end = events.back();
  if (!outstanding.empty())
    fail(end, "truncated: the consumer's events end with " + std::to_string(outstanding.size()) +
                  " GEMM(s) never waited for (no WAIT_WG_0 after its last " + tile_text(end) + ")");
  if (k_waited || v_waited)
    fail(end, std::string("truncated: the consumer's events end after a ") +
                  (k_waited ? "WAIT_K_START" : "WAIT_V_START") + " without its GEMM");
  if (k_used != k_tiles_.size() || v_used != v_tiles_.size())
    fail(end, "consumer WarpGroup " + std::to_string(1 + c) + " multiplies " +
                  std::to_string(k_used - k_first) + " K and " + std::to_string(v_used - v_first) +
                  " V tiles, but the producer loads " +
                  std::to_string(k_tiles_.size() - k_tile_begin_) + " and " +
                  std::to_string(v_tiles_.size() - v_tile_begin_) + ": the log is truncated");
  // The Q slot is free once the tile's last GEMM is done (cuDNN's SASS arrives on Q's empty
  // mbarrier after its last P V's wait, before the epilogue): the producer may load a later
  // tile's Q into it.
  if (!last) code.push(Instruction::release_stage(q_slot_));
  if (pipes)
    compute(kernel_.epilogue_phase());
  else
    code.bubble(kernel_.epilogue_bubble());
  store();
  tile_end();
}

}  // namespace simfa::fa3
