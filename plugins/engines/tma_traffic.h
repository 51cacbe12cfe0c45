// `tma.traffic`: the level-1 TMA engine (the paper's section IV-C). Each op pays its setup
// latency, then its global lines (from the TensorMap box, clipped at the tensor edge, or the bulk
// range; with edge_rows = requested, a load's rows past the edge are requested too, from a few
// reserved lines) go to the memory system as real requests; the op completes when its last line
// returns (a store with store_completion = "sent": the cycle after its last line left).
//
// Ops generate requests one at a time in issue order (FIFO), at most `requests_per_cycle` per
// cycle and `max_outstanding` in flight; the requests of consecutive ops overlap in flight. Setup
// latencies of queued ops overlap each other (each op is ready `setup` cycles after its issue).
// Nothing is scheduled while the engine waits: a response or an issue re-arms it. With a memory
// port that takes bursts, lines are booked ahead instead, each at the cycle the step would send
// it, so that a step event per line is not needed (docs/performance.md §10).
//
// With a memory port of fixed latency (memory.ideal), no response port and no loaded-DRAM law,
// the engine times each op's lines itself when it is issued, at the cycles its steps would send
// them and answered `latency` later, and has the port only count them: one event an op, not
// two a line (docs/performance.md §20).
//
// With `response_bytes_per_cycle`, the lines a load gets back pass the SM's response port one
// after another in arrival order, the port busy for a line's bytes at its rate; a load completes
// when its last line has passed. A line that finds the port idle passes at once: the port adds
// queueing, not latency.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <utility>
#include <vector>

#include "busy_time.h"
#include "simfa/component.h"
#include "simfa/core.h"
#include "simfa/memory.h"
#include "simfa/ring_queue.h"
#include "simfa/slot_pool.h"
#include "tma_setup.h"

namespace simfa::engines {

class TmaTraffic final : public TmaEngine, public MemClient, private EventTarget {
 public:
  explicit TmaTraffic(const BuildContext& context);
  static void describe(Schema& schema);

  void connect(MemoryPort& memory, TmaClient& client) override;
  void issue(Cycle now, const TmaOp& op) override;
  std::uint64_t busy_cycles() const override { return busy_.cycles(); }
  std::uint64_t issued_bytes() const override { return bytes_.value(); }
  std::uint64_t line_requests() const override { return line_count_.value(); }
  void on_response(Cycle now, const MemRequest& request) override;
  /// The step a response deferred to a port that runs steps.
  void on_step(Cycle now) override { on_event(now, 0); }
  void finish(Cycle end) override;

 private:
  static constexpr std::uint32_t kNoOp = ~std::uint32_t{0};

  struct Op {
    // What every response reads comes first, in the host cache line the slot's address starts.
    std::uint32_t requests = 0;   ///< known once generation starts
    std::uint32_t returned = 0;
    bool generated = false;       ///< every request sent
    bool reported = false;        ///< its completion went to the client (store_completion = sent)
    std::uint32_t serial = 0;     ///< which op holds the slot (0: none), for late sent-reports
    Cycle ready = 0;              ///< setup done: may start generating requests
    Cycle not_before = 0;         ///< the loaded-DRAM law's floor on its completion (0: none)
    std::uint32_t from_dram = 0;  ///< its lines the L2 fetched from DRAM for it
    TmaOp op;
  };

  /// The request-generation step of one cycle (payload 0), or a store's sent-report.
  void on_event(Cycle now, std::uint64_t payload) override;
  /// Fill `requests_` with the op's request addresses, deduplicated when `dedup_`.
  void generate(const TmaOp& op);
  /// Drops the lines of `requests_` seen before, keeping each at its first position; `repeats`:
  /// adjacent repeats generate() already dropped.
  void deduplicate_out_of_order(std::size_t repeats);
  /// The first address of the request unit that holds `addr`.
  Addr unit_start(Addr addr) const {
    return request_mask_ != 0 ? addr & ~request_mask_ : addr / request_bytes_ * request_bytes_;
  }
  /// Append the requests of the box's rows past the tensor's edge (edge_rows = requested).
  void append_edge_requests(const TmaOp& op);
  std::uint64_t edge_request_count(const TmaOp& op) const;
  /// The number of requests generate() would make of the op, rows past the edge included and
  /// counted in the stats, where no line can repeat (a bulk copy, a box whose rows inside the
  /// tensor run along one dimension, start alike in a request unit and share none); none
  /// otherwise.
  std::optional<std::uint64_t> count_in_closed_form(const TmaOp& op);
  void complete(Cycle now, std::uint32_t slot);
  /// A load's floor under the loaded-DRAM law (0: none), counting it in flight from now.
  Cycle loaded_floor(Cycle now, const TmaOp& op);
  /// A store's completion once its last line has left (store_completion = sent); `payload` is
  /// sent_payload(slot, serial).
  void report_sent(Cycle now, std::uint64_t payload);
  static std::uint64_t sent_payload(std::uint32_t slot, std::uint32_t serial) {
    return std::uint64_t{serial} << 32 | (std::uint64_t{slot} + 1);
  }
  /// The cycle a load's line that arrives now passes the response port.
  Cycle pass_port(Cycle now);
  /// Marks the event payload of a load's completion after its last line's turn at the port:
  /// (slot << 32) | kLandedBit; sent_payload's low word, a slot + 1, never has the bit.
  static constexpr std::uint64_t kLandedBit = std::uint64_t{1} << 31;
  /// The first cycle at which a step could send a request or start an op (kNever: none until a
  /// response or an issue changes the state).
  Cycle next_step(Cycle now) const;
  void arm(Cycle now);
  /// With a port of fixed latency: the cycles the op's lines leave, as its steps would send
  /// them, counted by the port; its completion scheduled at its last line's response.
  void time_lines(Cycle now, std::uint32_t slot);
  /// Moves (at, used), a cycle and the sends used in it, to the first send slot the next line
  /// may take: a send left in its cycle, a request slot free (the line max_outstanding before it
  /// answered). Whether it waited for the request slot.
  bool first_free_slot(Cycle& at, std::uint32_t& used) const;
  /// Records `n` lines sent from (at, used) on, a line in every send slot, and drops the lines
  /// no later line can wait for.
  void record_sent(Cycle at, std::uint32_t used, std::uint64_t n);
  /// With a port that takes bursts: books every line that may leave now or later at the cycle
  /// its step would send it, as bursts (docs/performance.md §10); an op with no lines whose turn
  /// comes later gets a step event then.
  void book(Cycle now);

  // What a line's step and its response read comes first, together (the engines of 132 SMs take
  // turns, so each step finds these cold in the host's cache).
  MemoryPort* memory_ = nullptr;
  EventQueue& events_;
  std::vector<Addr> requests_;  ///< request addresses of the generating op
  std::size_t next_request_ = 0;
  std::uint32_t generating_ = kNoOp;
  std::uint32_t outstanding_ = 0;
  std::uint32_t requests_per_cycle_;
  std::uint32_t max_outstanding_;
  // Line by line: the cycle of the step that sent `budget_used_` requests. Booked ahead: the
  // cycle the last booked line leaves, with `budget_used_` lines booked in it.
  Cycle budget_cycle_ = kNever;
  std::uint32_t budget_used_ = 0;
  bool step_pending_ = false;
  bool bursts_ = false;  ///< the port takes bursts: lines are booked ahead
  bool port_steps_ = false;  ///< the port runs the steps responses make due (defer_step)
  // With a port of fixed latency (time_lines): that latency, and the recent lines as runs, from
  // the oldest whose answer may still hold the next line back: the one max_outstanding before
  // it, `skip_` lines into the front run, once `max_outstanding_` lines are live.
  // `budget_cycle_` / `budget_used_` as line by line.
  bool timed_ = false;
  Cycle latency_ = 0;
  std::deque<MemoryPort::Burst> sent_;  ///< their request and addrs unused
  std::uint64_t skip_ = 0;
  std::uint64_t live_ = 0;  ///< lines from the skip_-th of the front run on
  // The generating op's request, every field but the address: a line sent reads it rather than
  // the op's slot.
  MemRequest line_request_{};
  // Ops live in a pool (the slot index is the memory token); `waiting_` holds the slots not yet
  // generating, in issue order.
  SlotPool<Op> ops_;
  RingQueue<std::uint32_t> waiting_;
  // The response port, in 1/kPortScale SM cycles: how long one line keeps it busy (0: no port),
  // and when it is next free.
  static constexpr std::uint64_t kPortScale = std::uint64_t{1} << 16;
  std::uint64_t port_line_time_ = 0;
  std::uint64_t port_free_ = 0;
  Counter& line_count_;

  TmaSetup setup_;
  std::uint32_t request_bytes_;  ///< line_bytes, or the sector size when dedup is off
  // request_bytes_ - 1 when it is a power of two (always, in the shipped manifests), else 0:
  // unit_start() then masks instead of dividing (a 64-bit division per row was half of
  // generate()'s time).
  Addr request_mask_ = 0;
  bool dedup_;
  bool stores_complete_when_sent_;  ///< store_completion = "sent"
  bool edge_rows_requested_;        ///< edge_rows = "requested"
  std::uint32_t edge_line_count_;   ///< edge_lines
  std::uint16_t sm_;
  TmaClient* client_ = nullptr;
  std::vector<std::pair<Addr, std::uint32_t>> dedup_scratch_;  ///< (address, first position)
  std::uint32_t op_serial_ = 0;

  Counter& op_count_;
  Counter& bytes_;
  Counter& dedup_saved_;
  Counter& edge_requests_;
  BusyTime busy_;
  // The loaded-DRAM law (loaded_dram_rate; off at 0).
  double loaded_bytes_per_cycle_ = 0;
  Cycle loaded_base_ = 0;
  std::uint64_t load_bytes_in_flight_ = 0;  ///< bytes of this SM's loads issued, not completed
  double dram_share_ = 1.0;                 ///< of this SM's recent lines, those from DRAM
  Counter& loaded_ops_;
  Counter& loaded_cycles_;
};

}  // namespace simfa::engines
