// One HBM3 channel and its memory-controller queue, in memory-clock cycles.
//
// The channel has a row-command bus (ACT, which takes two cycles, PRE, PREA, REF) and a
// column-command bus (RD, WR), one command each per cycle, shared by its pseudo-channels; each
// pseudo-channel has its own data bus and banks. Rows stay open after an access (open page).
//
// Scheduling is FR-FCFS over the queued bursts (32 B column accesses). Each bank offers one
// command: a column command for its oldest burst to the open row (a row hit) when it has one,
// else a PRE (another row is open) or an ACT (none is) for its oldest burst. Once an open row
// has served `max_row_hits` column commands, its hits lose that priority whenever the bank's
// oldest burst wants another row, which then gets the bank (the starvation cap). Among the
// banks, the command that can issue earliest goes first; at equal times a column command
// (row hit) beats a row command, then the older burst wins.
//
// Refresh: every nREFI cycles (at k x nREFI) the channel stops starting commands, precharges
// its open banks with one PREA, issues REF, and activates nothing for nRFC cycles. It is one
// all-bank refresh of the whole channel, both pseudo-channels at once. Per-bank refresh (REFpb,
// JESD238): every nREFIpb cycles the channel's next bank in turn (bank order, both
// pseudo-channels) closes its row, no sooner than it may precharge, and activates nothing for
// nRFCpb cycles after; the other banks go on. HBM3's per-pseudo-channel refresh is not modeled.
//
// The channel runs only when asked: advance(h) issues every command due at or before cycle h
// and returns when the next one could issue. An idle channel does nothing, and its missed
// refreshes are replayed, at their own cycles, when it next advances; they are exactly what it
// would have done, since nothing else happened on it meanwhile.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "hbm3_address_map.h"
#include "hbm3_config.h"
#include "line_table.h"
#include "simfa/int_math.h"
#include "simfa/slot_pool.h"
#include "simfa/stats.h"

namespace simfa::memory_models {

/// A memory-clock cycle. Signed: "long ago" is a large negative value.
using MemCycle = std::int64_t;
inline constexpr MemCycle kNoMemCycle = INT64_MAX;

enum class DramCommand : std::uint8_t {
  kActivate,
  kPrecharge,
  kPrechargeAll,
  kRead,
  kWrite,
  kRefresh,
};

/// One command as the channel issued it. PREA and REF cover the whole channel (bank fields 0); a
/// per-bank REF names its bank.
struct DramCommandRecord {
  MemCycle at;
  DramCommand command;
  std::uint32_t channel;
  std::uint32_t pseudo_channel;
  std::uint32_t bank_group;
  std::uint32_t bank;
  std::uint64_t row;
};

/// Sees every command issued, in issue order per channel (for tests and command traces).
class DramCommandObserver {
 public:
  virtual void on_command(const DramCommandRecord& command) = 0;

 protected:
  ~DramCommandObserver() = default;
};

/// Told when a burst's data has crossed the bus.
class DramBurstListener {
 public:
  /// The burst of request `request` has crossed the data bus by the start of cycle `data_end`
  /// (its RD's cycle + nCL + nBL; its WR's + nCWL + nBL).
  virtual void on_burst_done(std::uint32_t request, MemCycle data_end) = 0;

 protected:
  ~DramBurstListener() = default;
};

/// The statistics of one channel ("channel[i]."). Row outcomes count column commands: a hit
/// found its row open, a miss had to open it in a precharged bank, a conflict had to close
/// another row first. Bytes are whole bursts moved on the data bus.
struct DramChannelCounters {
  Counter& row_hits;
  Counter& row_misses;
  Counter& row_conflicts;
  Counter& read_bytes;
  Counter& write_bytes;
  Histogram& queue_occupancy;  ///< bursts queued, sampled at each arrival
};

/// The totals over every channel.
struct DramTotalCounters {
  Counter& row_hits;
  Counter& row_misses;
  Counter& row_conflicts;
  Counter& activates;
  Counter& precharges;  ///< PRE and PREA commands
  Counter& refreshes;
};

class Hbm3Channel {
 public:
  Hbm3Channel(std::uint32_t index, const Hbm3Organization& organization, const Hbm3Timing& timing,
              std::uint32_t max_row_hits, DramBurstListener& listener, DramChannelCounters own,
              DramTotalCounters totals);

  /// Queues `count` consecutive bursts of `request` to one row, arriving at cycle `arrival`, as
  /// `count` calls for one burst each would. Call advance(arrival - 1) first: decisions before
  /// the arrival must not see them.
  void enqueue(const DramLocation& at, bool write, std::uint32_t request, MemCycle arrival,
               std::uint32_t count = 1);

  /// Issues every command that can issue at or before `horizon`, in cycle order. Returns the
  /// cycle of the next command it could issue (a refresh when nothing is queued), or
  /// kNoMemCycle when there is none.
  MemCycle advance(MemCycle horizon);

  /// No command can issue before this cycle: advance(h) for an h below it does nothing.
  MemCycle next_possible() const { return next_.at; }

  /// Bursts queued: the owner wakes the channel only while there are some.
  bool empty() const { return queued_ == 0; }

  void set_observer(DramCommandObserver* observer) { observer_ = observer; }

 private:
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};
  // ACT holds the row-command bus two cycles (Ramulator 2's HBM3 model: "2-cycle ACT command").
  static constexpr MemCycle kActivateCycles = 2;

  enum class Outcome : std::uint8_t { kHit, kMiss, kConflict };

  // Queued bursts are kept in runs: the consecutive bursts of one request to one row (a 128 B
  // line is four), which are also consecutive in arrival order and in their row's service order.
  // A run stands for its first unserved burst; serving it moves on to the next, so a column
  // command that leaves bursts in the run touches nothing else.
  struct Burst {
    std::uint64_t row = 0;
    std::uint64_t seq = 0;  ///< arrival order in this channel (of the first unserved burst)
    MemCycle arrival = 0;
    std::uint32_t request = 0;
    std::uint32_t next = kNone;      ///< next run of the same bank, in arrival order
    std::uint32_t prev = kNone;      ///< previous run of the same bank
    std::uint32_t next_row = kNone;  ///< next run of the same bank and row
    std::uint32_t left = 1;          ///< unserved bursts in the run
    std::uint32_t bank = 0;
    std::uint32_t row_link = kNone;  ///< in rows_, while it is its row's newest run
    bool write = false;
    Outcome outcome = Outcome::kHit;  ///< its first unserved burst's row had to be opened (miss)
                                      ///< or closed first
  };

  struct Bank {
    std::uint32_t head = kNone, tail = kNone;  ///< queued bursts, oldest first
    // The oldest queued burst to the open row (kNone: none). Bursts of one row are served in
    // arrival order, so after a column command the next one is the served burst's next_row.
    std::uint32_t hit = kNone;
    std::uint32_t served = 0;  ///< column commands since the row was opened
    bool open = false;
    bool hit_write = false;   ///< the hit's direction
    std::uint32_t group = 0;  ///< index into bank_groups_
    std::uint32_t pc = 0;     ///< index into pseudo_channels_
    std::uint64_t row = 0;
    MemCycle act_ready = 0;  ///< earliest ACT: nRC after ACT, nRP after PRE, nRFC after REF
    MemCycle pre_ready = 0;  ///< earliest PRE: nRAS after ACT, nRTP after RD, write recovery
    MemCycle col_ready = 0;  ///< earliest RD/WR: nRCD after ACT
    // Copies of what pick() needs from the head and the hit, so that choosing the next command
    // reads the banks alone and none of the (many, scattered) queued bursts.
    std::uint64_t head_row = 0, head_seq = 0, hit_seq = 0;
    MemCycle head_arrival = 0, hit_arrival = 0;
  };

  struct BankGroup {
    MemCycle act_ready = 0;  ///< nRRDL
    MemCycle rd_ready = 0;   ///< nCCDL after RD, write-to-read (nWTRL) after WR
    MemCycle wr_ready = 0;   ///< nCCDL after WR
  };

  struct PseudoChannel {
    MemCycle act_ready = 0;  ///< nRRDS
    MemCycle rd_ready = 0;   ///< nCCDS / data bus after RD, nWTRS after WR
    MemCycle wr_ready = 0;   ///< nCCDS / data bus after WR, read-to-write turnaround after RD
    std::array<MemCycle, 4> last_acts{};  ///< the four latest ACTs, oldest at faw_next
    std::uint32_t faw_next = 0;
  };

  // What a bank offers next without the terms its bank group, pseudo-channel and the channel's
  // buses add: kept up to date as the bank changes, so that choosing the next command reads one
  // small record per bank (pick()).
  // Column kinds even, row kinds odd: a kind's low bit is its command bus.
  enum OfferKind : std::uint8_t { kOfferRead, kOfferActivate, kOfferWrite, kOfferPrecharge };
  static constexpr std::uint64_t kRowCommandKey = std::uint64_t{1} << 63;
  struct Offer {
    MemCycle at = 0;  ///< the burst's arrival and the bank's own ready time
    // Orders equal times: offer_key(the burst's seq, the bank), | kRowCommandKey for ACT/PRE.
    std::uint64_t key = 0;
    std::uint32_t term = 0;  ///< index into pick()'s terms: bank group x 4 + OfferKind
  };
  // An offer's key holds its bank in the low bank_bits_ bits, below the seq: a scan keeps the
  // smallest rank alone and reads the bank from it. No two queued bursts share a seq, so the
  // bank bits never decide an order.
  std::uint64_t offer_key(std::uint64_t seq, std::uint32_t b) const {
    return seq << bank_bits_ | b;
  }
  std::uint32_t bank_of(Uint128 rank) const {
    return static_cast<std::uint32_t>(static_cast<std::uint64_t>(rank) & bank_mask_);
  }
  /// Which of pick()'s buses a term's command waits for: 0 the column bus, 1 the row bus.
  static std::uint32_t bus_of(std::uint32_t term) { return term & 1; }
  // A command's place in pick()'s order, (cycle, key), as one number with the cycle in the high
  // half, so that comparing two is one comparison. The cycle is never negative: it is at least a
  // bus's free time.
  static Uint128 rank(MemCycle at, std::uint64_t key) {
    return Uint128{static_cast<std::uint64_t>(at)} << 64 | key;
  }
  static MemCycle rank_cycle(Uint128 rank) { return static_cast<MemCycle>(rank >> 64); }
  static constexpr Uint128 kNoRank = ~Uint128{0};
  /// The earliest cycle of a command on each of pick()'s buses: {column, row}, no earlier than
  /// the last issue.
  std::array<MemCycle, 2> bus_times() const {
    return {std::max(col_bus_free_, last_issue_), std::max(row_bus_free_, last_issue_)};
  }
  /// The rank of bank `b`'s command: it issues at max(its offer, its terms, its bus), the terms
  /// being its bank group's and pseudo-channel's ready times for the command's kind.
  Uint128 offer_rank(std::uint32_t b, const std::array<MemCycle, 2>& buses) const {
    const Offer& o = offers_[b];
    return rank(std::max({o.at, terms_[o.term], buses[bus_of(o.term)]}), o.key);
  }

  struct Candidate {
    MemCycle at = kNoMemCycle;
    DramCommand command = DramCommand::kRefresh;
    std::uint32_t bank = kNone;
    std::uint32_t burst = kNone;  ///< the burst served (column) or on whose behalf (ACT, PRE)
    std::uint64_t seq = 0;
  };

  /// The command to issue next; computed again only after the state changed.
  const Candidate& next();
  Candidate pick() const;
  /// The command of the bank that `rank` (its offer_rank) names, at the rank's cycle.
  Candidate offered(Uint128 rank) const;
  Candidate refresh_candidate() const;
  void issue(const Candidate& c);
  void activate(const Candidate& c);
  void precharge(const Candidate& c);
  void column(const Candidate& c);
  void precharge_all(MemCycle at);
  void refresh(MemCycle at);
  /// The REFpb due at next_bank_refresh_, and the next one scheduled.
  void refresh_bank();
  /// Counts, without replaying, the REFpbs due by `before` but the last one of each bank.
  void skip_bank_refreshes(MemCycle before);
  void record(MemCycle at, DramCommand command, std::uint32_t bank, std::uint64_t row) const;
  /// Recomputes bank `b`'s offer after its state changed.
  void update_offer(std::uint32_t b);
  /// Recomputes the RD and WR terms of pseudo-channel `pc`'s bank groups after a column
  /// command (the only one that changes their ready times).
  void update_column_terms(std::uint32_t pc);
  /// Recomputes the ACT terms of pseudo-channel `pc`'s bank groups after an ACT.
  void update_activate_terms(std::uint32_t pc);
  /// Points bank's hit at burst `i` (kNone: none) and copies what pick() reads from it.
  void set_hit(Bank& bank, std::uint32_t i);
  /// Copies what pick() reads from the bank's head.
  void head_changed(Bank& bank);
  /// The key of (bank, row) in rows_: unique, since a row index times the banks of a channel
  /// stays below 2^64 (the address map divides by at least that many before the row).
  std::uint64_t row_key(std::uint32_t bank, std::uint64_t row) const {
    return row * banks_.size() + bank;
  }
  auto run_key() const {
    return [this](std::uint32_t i) { return row_key(bursts_[i].bank, bursts_[i].row); };
  }
  auto run_link() {
    return [this](std::uint32_t i) -> std::uint32_t& { return bursts_[i].row_link; };
  }

  std::uint32_t bank_group_of(std::uint32_t bank) const { return bank / banks_per_group_; }
  /// The word of active_ that holds bank `b`'s bit, and the bit.
  std::uint64_t& active_word(std::uint32_t b) {
    const std::uint32_t pc = banks_[b].pc;
    return active_[pc * words_per_pc_ + (b - pc * banks_per_pc_) / 64];
  }
  std::uint64_t active_bit(std::uint32_t b) const {
    return std::uint64_t{1} << ((b - banks_[b].pc * banks_per_pc_) % 64);
  }
  std::uint32_t pseudo_channel_of(std::uint32_t bank) const { return bank / banks_per_pc_; }

  std::uint32_t index_;
  Hbm3Timing t_;
  std::uint32_t banks_per_group_;
  std::uint32_t banks_per_pc_;
  std::uint32_t groups_per_pc_;
  std::uint32_t words_per_pc_;  ///< of active_
  int bank_bits_;               ///< of an offer's key (offer_key)
  std::uint64_t bank_mask_;
  std::uint64_t seq_limit_;  ///< a seq shifted by bank_bits_ stays below kRowCommandKey
  std::uint32_t burst_bytes_;
  std::uint32_t max_row_hits_;
  DramBurstListener& listener_;
  DramChannelCounters own_;
  DramTotalCounters totals_;
  DramCommandObserver* observer_ = nullptr;

  // Banks are numbered (pseudo-channel, bank group, bank) with the bank varying fastest.
  std::vector<Bank> banks_;
  std::vector<BankGroup> bank_groups_;
  std::vector<PseudoChannel> pseudo_channels_;
  MemCycle row_bus_free_ = 0;
  MemCycle col_bus_free_ = 0;
  MemCycle next_refresh_;
  MemCycle next_bank_refresh_;     ///< the next REFpb (kNoMemCycle: no per-bank refresh)
  std::uint32_t refresh_bank_ = 0;  ///< the bank it refreshes
  MemCycle last_issue_ = 0;  ///< commands issue in non-decreasing cycle order
  // The result of the last pick (at = 0: to be computed). Between picks next_.at stays a lower
  // bound: an arrival can make a bank's command no earlier than the arrival.
  Candidate next_{.at = 0};
  bool next_valid_ = false;

  SlotPool<Burst> bursts_;  ///< queued bursts, linked into per-bank lists
  LineChains rows_;         ///< row_key(bank, row) -> the newest queued run of that row
  // Pseudo-channel p's words_per_pc_ words, from word p x words_per_pc_: bit i set iff bank
  // p x banks_per_pc_ + i has queued bursts. Each pseudo-channel starts a word, so that pick()
  // scans its bits unmasked.
  std::vector<std::uint64_t> active_;
  std::vector<Offer> offers_;          ///< per bank with queued bursts
  // The best command of each pseudo-channel's banks, kept between picks: a command changes its
  // own pseudo-channel's banks and terms, and the other's only through the buses, which its
  // best survives as long as its own bus has not passed it (every other bank's time can only
  // have grown).
  struct PcBest {
    bool valid = false;
    std::uint32_t bus = 0;   ///< which of pick()'s buses its time includes
    Uint128 rank = kNoRank;  ///< its command's rank(at, key); kNoRank: none that can issue
                             ///< before the refresh
  };
  mutable std::vector<PcBest> pc_best_;
  // Per bank group and OfferKind: the bank group's and pseudo-channel's ready times (the command
  // buses and the last issue, which every command changes, are added in pick()).
  std::vector<MemCycle> terms_;
  std::uint32_t queued_ = 0;
  std::uint64_t next_seq_ = 0;
};

}  // namespace simfa::memory_models
