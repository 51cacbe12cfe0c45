// One HBM3 channel: banks, timing state and the FR-FCFS queue.
#include "hbm3_channel.h"

#include <algorithm>
#include <bit>
#include <string>

#include "simfa/error.h"

namespace simfa::memory_models {

namespace {
// Before any command: far enough back that no timing window reaches cycle 0.
constexpr MemCycle kLongAgo = INT64_MIN / 4;

bool is_column(DramCommand c) { return c == DramCommand::kRead || c == DramCommand::kWrite; }

// FR-FCFS order: earlier first; at the same cycle a row hit's column command, then the oldest.
bool before(const auto& a, const auto& b) {
  if (a.at != b.at) return a.at < b.at;
  if (is_column(a.command) != is_column(b.command)) return is_column(a.command);
  return a.seq < b.seq;
}
}  // namespace

Hbm3Channel::Hbm3Channel(std::uint32_t index, const Hbm3Organization& o, const Hbm3Timing& timing,
                         std::uint32_t max_row_hits, DramBurstListener& listener,
                         DramChannelCounters own, DramTotalCounters totals)
    : index_(index),
      t_(timing),
      banks_per_group_(static_cast<std::uint32_t>(o.banks_per_group)),
      banks_per_pc_(static_cast<std::uint32_t>(o.bank_groups * o.banks_per_group)),
      groups_per_pc_(static_cast<std::uint32_t>(o.bank_groups)),
      words_per_pc_((banks_per_pc_ + 63) / 64),
      // libstdc++ 12's bit_width returns its argument's type, not C++20's int.
      bank_bits_(static_cast<int>(
          std::bit_width(static_cast<std::uint64_t>(o.pseudo_channels) * banks_per_pc_ - 1))),
      bank_mask_((std::uint64_t{1} << bank_bits_) - 1),
      seq_limit_(kRowCommandKey >> bank_bits_),
      burst_bytes_(static_cast<std::uint32_t>(o.burst_bytes())),
      max_row_hits_(max_row_hits),
      listener_(listener),
      own_(own),
      totals_(totals),
      banks_(static_cast<std::size_t>(o.pseudo_channels) * banks_per_pc_),
      bank_groups_(static_cast<std::size_t>(o.pseudo_channels * o.bank_groups)),
      pseudo_channels_(static_cast<std::size_t>(o.pseudo_channels)),
      next_refresh_(timing.nREFI > 0 ? timing.nREFI : kNoMemCycle),
      next_bank_refresh_(timing.nREFIpb > 0 ? timing.nREFIpb : kNoMemCycle) {
  for (PseudoChannel& pc : pseudo_channels_) pc.last_acts.fill(kLongAgo);
  for (std::uint32_t b = 0; b < banks_.size(); ++b) {
    banks_[b].group = bank_group_of(b);
    banks_[b].pc = pseudo_channel_of(b);
  }
  active_.assign(pseudo_channels_.size() * words_per_pc_, 0);
  offers_.resize(banks_.size());
  pc_best_.resize(pseudo_channels_.size());
  // A PRE waits for nothing of its bank group's or pseudo-channel's: its term stays long ago.
  terms_.assign(bank_groups_.size() * 4, kLongAgo);
  for (std::uint32_t pc = 0; pc < pseudo_channels_.size(); ++pc) {
    update_column_terms(pc);
    update_activate_terms(pc);
  }
}

void Hbm3Channel::enqueue(const DramLocation& at, bool write, std::uint32_t request,
                          MemCycle arrival, std::uint32_t count) {
  const std::uint32_t b =
      (at.pseudo_channel * groups_per_pc_ + at.bank_group) * banks_per_group_ + at.bank;
  Bank& bank = banks_[b];
  // Seqs shifted past the bank bits (offer_key) must stay below 2^63: with 4096 banks a channel,
  // 2^51 bursts, weeks of simulated time at a channel's bandwidth.
  if (next_seq_ + count > seq_limit_)
    throw Error("dram: channel " + std::to_string(index_) +
                " has queued more bursts than its commands can order");
  const std::uint32_t i =
      bursts_.add(Burst{.row = at.row, .seq = next_seq_, .arrival = arrival, .request = request,
                        .prev = bank.tail, .left = count, .bank = b, .write = write});
  next_seq_ += count;
  // Chain it behind the newest queued run of its row, which it replaces in rows_; with none, it
  // is the oldest of its row, and the hit when that row is open.
  const std::uint64_t key = row_key(b, at.row);
  const std::uint32_t same_row = rows_.find(key, run_key(), run_link());
  if (same_row != kNone) {
    rows_.erase(key, same_row, run_link());
    bursts_[same_row].next_row = i;
  } else if (bank.open && bank.row == at.row) {
    set_hit(bank, i);
  }
  rows_.insert(key, i, run_key(), run_link());
  const bool offer_changed = bank.hit == i || bank.tail == kNone;
  if (bank.tail == kNone) {
    bank.head = i;
    head_changed(bank);
    active_word(b) |= active_bit(b);
  } else {
    bursts_[bank.tail].next = i;
  }
  bank.tail = i;
  for (std::uint32_t k = 0; k < count; ++k) own_.queue_occupancy.sample(++queued_);
  if (!offer_changed) return;  // behind the bank's head and hit: nothing to pick changed
  update_offer(b);
  // Only this bank's command changed: the choice made before stands unless this one beats it
  // (or it was this bank's, which may have got later).
  if (next_valid_ && next_.bank != b) {
    const Candidate c = offered(offer_rank(b, bus_times()));
    if (c.at < next_refresh_ && (next_.bank == kNone || before(c, next_))) next_ = c;
    return;
  }
  next_valid_ = false;
  next_.at = std::min(next_.at, arrival);
}

void Hbm3Channel::update_offer(std::uint32_t b) {
  const Bank& bank = banks_[b];
  Offer& o = offers_[b];
  pc_best_[bank.pc].valid = false;
  if (bank.hit != kNone && (bank.served < max_row_hits_ || bank.head_row == bank.row)) {
    o.at = std::max(bank.hit_arrival, bank.col_ready);
    o.key = offer_key(bank.hit_seq, b);
    o.term = bank.group * 4 + (bank.hit_write ? kOfferWrite : kOfferRead);
  } else if (bank.open) {
    o.at = std::max(bank.head_arrival, bank.pre_ready);
    o.key = kRowCommandKey | offer_key(bank.head_seq, b);
    o.term = bank.group * 4 + kOfferPrecharge;
  } else {
    o.at = std::max(bank.head_arrival, bank.act_ready);
    o.key = kRowCommandKey | offer_key(bank.head_seq, b);
    o.term = bank.group * 4 + kOfferActivate;
  }
}

void Hbm3Channel::set_hit(Bank& bank, std::uint32_t i) {
  bank.hit = i;
  if (i == kNone) return;
  const Burst& hit = bursts_[i];
  bank.hit_seq = hit.seq;
  bank.hit_arrival = hit.arrival;
  bank.hit_write = hit.write;
}

void Hbm3Channel::head_changed(Bank& bank) {
  if (bank.head == kNone) return;
  const Burst& head = bursts_[bank.head];
  bank.head_row = head.row;
  bank.head_seq = head.seq;
  bank.head_arrival = head.arrival;
}

MemCycle Hbm3Channel::advance(MemCycle horizon) {
  for (;;) {
    const Candidate c = next();
    // A REFpb due first changes its bank before anything later is chosen. It wakes nothing:
    // an idle channel's are applied when it next advances, at their own cycles.
    if (const MemCycle before = std::min(c.at, horizon); next_bank_refresh_ <= before) {
      skip_bank_refreshes(before);
      refresh_bank();
      continue;
    }
    if (c.at > horizon) return c.at;
    issue(c);
  }
}

const Hbm3Channel::Candidate& Hbm3Channel::next() {
  if (!next_valid_) {
    next_ = pick();
    next_valid_ = true;
  }
  return next_;
}

void Hbm3Channel::update_column_terms(std::uint32_t p) {
  pc_best_[p].valid = false;
  const PseudoChannel& pc = pseudo_channels_[p];
  for (std::uint32_t g = p * groups_per_pc_; g < (p + 1) * groups_per_pc_; ++g) {
    const BankGroup& bg = bank_groups_[g];
    MemCycle* t = &terms_[g * 4];
    t[kOfferRead] = std::max(bg.rd_ready, pc.rd_ready);
    t[kOfferWrite] = std::max(bg.wr_ready, pc.wr_ready);
  }
}

void Hbm3Channel::update_activate_terms(std::uint32_t p) {
  pc_best_[p].valid = false;
  const PseudoChannel& pc = pseudo_channels_[p];
  const MemCycle pc_ready = std::max(pc.act_ready, pc.last_acts[pc.faw_next] + t_.nFAW);
  for (std::uint32_t g = p * groups_per_pc_; g < (p + 1) * groups_per_pc_; ++g)
    terms_[g * 4 + kOfferActivate] = std::max(bank_groups_[g].act_ready, pc_ready);
}

Hbm3Channel::Candidate Hbm3Channel::pick() const {
  const std::array<MemCycle, 2> buses = bus_times();
  // The banks with queued bursts, earliest first, then row hits, then the oldest burst: the
  // smallest rank, which names its bank. The order they are visited in does not matter: no two
  // bursts share a seq.
  Uint128 best_rank = kNoRank;
  for (std::uint32_t p = 0; p < pc_best_.size(); ++p) {
    PcBest& pc = pc_best_[p];
    if (!pc.valid || (pc.rank != kNoRank && buses[pc.bus] > rank_cycle(pc.rank))) {
      // The smallest rank, in a local and without branches on the comparison: which bank wins
      // is data the host's branch predictor cannot learn (a fifth of a GEMM's mispredictions
      // were here, docs/performance.md §9).
      Uint128 pc_rank = kNoRank;
      for (std::uint32_t w = 0; w < words_per_pc_; ++w) {
        const std::uint32_t first = p * banks_per_pc_ + w * 64;
        for (std::uint64_t bits = active_[p * words_per_pc_ + w]; bits != 0; bits &= bits - 1) {
          const Uint128 r =
              offer_rank(first + static_cast<std::uint32_t>(std::countr_zero(bits)), buses);
          pc_rank = r < pc_rank ? r : pc_rank;
        }
      }
      // From the moment a refresh is due, nothing new starts until it is done. Tested once on
      // the earliest command: if it is too late, so are the others.
      if (pc_rank != kNoRank && rank_cycle(pc_rank) >= next_refresh_) pc_rank = kNoRank;
      pc = PcBest{.valid = true,
                  .bus = pc_rank != kNoRank ? bus_of(offers_[bank_of(pc_rank)].term) : 0,
                  .rank = pc_rank};
    }
    best_rank = pc.rank < best_rank ? pc.rank : best_rank;
  }
  // A bank command found comes before the refresh, which cannot start before it is due.
  return best_rank != kNoRank ? offered(best_rank) : refresh_candidate();
}

Hbm3Channel::Candidate Hbm3Channel::offered(Uint128 rank) const {
  const std::uint32_t b = bank_of(rank);
  const Bank& bank = banks_[b];
  const Offer& o = offers_[b];
  Candidate c{.at = rank_cycle(rank), .bank = b, .seq = (o.key & ~kRowCommandKey) >> bank_bits_};
  switch (static_cast<OfferKind>(o.term % 4)) {
    case kOfferRead: c.command = DramCommand::kRead; c.burst = bank.hit; break;
    case kOfferWrite: c.command = DramCommand::kWrite; c.burst = bank.hit; break;
    case kOfferActivate: c.command = DramCommand::kActivate; c.burst = bank.head; break;
    case kOfferPrecharge: c.command = DramCommand::kPrecharge; c.burst = bank.head; break;
  }
  return c;
}

Hbm3Channel::Candidate Hbm3Channel::refresh_candidate() const {
  Candidate c;
  if (next_refresh_ == kNoMemCycle) return c;
  bool any_open = false;
  MemCycle pre_ready = 0, act_ready = 0;
  for (const Bank& bank : banks_) {
    if (bank.open) {
      any_open = true;
      pre_ready = std::max(pre_ready, bank.pre_ready);
    }
    act_ready = std::max(act_ready, bank.act_ready);
  }
  // REF needs every bank precharged (nRP after the PRE, nRC after the last ACT).
  c.command = any_open ? DramCommand::kPrechargeAll : DramCommand::kRefresh;
  c.at = std::max({next_refresh_, row_bus_free_, last_issue_, any_open ? pre_ready : act_ready});
  return c;
}

void Hbm3Channel::issue(const Candidate& c) {
  next_valid_ = false;
  last_issue_ = c.at;
  switch (c.command) {
    case DramCommand::kActivate: activate(c); break;
    case DramCommand::kPrecharge: precharge(c); break;
    case DramCommand::kRead:
    case DramCommand::kWrite: column(c); break;
    case DramCommand::kPrechargeAll: precharge_all(c.at); break;
    case DramCommand::kRefresh: refresh(c.at); break;
  }
}

void Hbm3Channel::activate(const Candidate& c) {
  Bank& bank = banks_[c.bank];
  Burst& head = bursts_[c.burst];
  bank.open = true;
  bank.row = head.row;
  bank.served = 0;
  set_hit(bank, c.burst);  // the head: the ACT is for its row
  if (head.outcome == Outcome::kHit) head.outcome = Outcome::kMiss;

  bank.col_ready = c.at + t_.nRCD;
  bank.pre_ready = std::max(bank.pre_ready, c.at + t_.nRAS);
  bank.act_ready = std::max(bank.act_ready, c.at + t_.nRC);
  bank_groups_[bank.group].act_ready = c.at + t_.nRRDL;
  PseudoChannel& pc = pseudo_channels_[bank.pc];
  pc.act_ready = c.at + t_.nRRDS;
  pc.last_acts[pc.faw_next] = c.at;
  pc.faw_next = (pc.faw_next + 1) % static_cast<std::uint32_t>(pc.last_acts.size());
  row_bus_free_ = c.at + kActivateCycles;
  update_offer(c.bank);
  update_activate_terms(bank.pc);
  totals_.activates.add();
  record(c.at, DramCommand::kActivate, c.bank, bank.row);
}

void Hbm3Channel::precharge(const Candidate& c) {
  Bank& bank = banks_[c.bank];
  bank.open = false;
  bank.hit = kNone;
  bank.act_ready = std::max(bank.act_ready, c.at + t_.nRP);
  bursts_[c.burst].outcome = Outcome::kConflict;
  row_bus_free_ = c.at + 1;
  update_offer(c.bank);
  totals_.precharges.add();
  record(c.at, DramCommand::kPrecharge, c.bank, bank.row);
}

void Hbm3Channel::column(const Candidate& c) {
  Bank& bank = banks_[c.bank];
  BankGroup& bg = bank_groups_[bank.group];
  PseudoChannel& pc = pseudo_channels_[bank.pc];
  Burst& run = bursts_[c.burst];
  const Burst burst = run;

  if (run.left > 1) {
    // The run's next burst comes next in its row: only its seq and outcome differ.
    --run.left;
    ++run.seq;
    run.outcome = Outcome::kHit;
    bank.hit_seq = run.seq;
    if (burst.prev == kNone) bank.head_seq = run.seq;
  } else {
    // Unlink and free the run (the bank's oldest hit); the next hit is the next of its row.
    if (burst.prev == kNone) bank.head = burst.next;
    else bursts_[burst.prev].next = burst.next;
    if (burst.next == kNone) bank.tail = burst.prev;
    else bursts_[burst.next].prev = burst.prev;
    bursts_.release(c.burst);
    if (burst.next_row == kNone) rows_.erase(row_key(c.bank, burst.row), c.burst, run_link());
    set_hit(bank, burst.next_row);
    if (burst.prev == kNone) {
      if (bank.head == kNone) {
        active_word(c.bank) &= ~active_bit(c.bank);
        pc_best_[bank.pc].valid = false;
      }
      else head_changed(bank);
    }
  }
  ++bank.served;
  --queued_;

  const MemCycle at = c.at;
  const MemCycle data_bus = std::max(t_.nCCDS, t_.nBL);  // bursts of a pseudo-channel
  MemCycle data_end;
  if (burst.write) {
    data_end = at + t_.nCWL + t_.nBL;
    pc.wr_ready = std::max(pc.wr_ready, at + data_bus);
    pc.rd_ready = std::max(pc.rd_ready, data_end + t_.nWTRS);
    bg.wr_ready = std::max(bg.wr_ready, at + t_.nCCDL);
    bg.rd_ready = std::max(bg.rd_ready, data_end + t_.nWTRL);
    bank.pre_ready = std::max(bank.pre_ready, data_end + t_.nWR);
    own_.write_bytes.add(burst_bytes_);
  } else {
    data_end = at + t_.nCL + t_.nBL;
    pc.rd_ready = std::max(pc.rd_ready, at + data_bus);
    // The write's data (nCWL after its command) starts nRTW after the read's data ends.
    pc.wr_ready = std::max(pc.wr_ready, data_end + t_.nRTW - t_.nCWL);
    bg.rd_ready = std::max(bg.rd_ready, at + t_.nCCDL);
    bank.pre_ready = std::max(bank.pre_ready, at + t_.nRTP);
    own_.read_bytes.add(burst_bytes_);
  }
  col_bus_free_ = at + 1;
  if (bank.head != kNone) update_offer(c.bank);
  update_column_terms(bank.pc);
  switch (burst.outcome) {
    case Outcome::kHit: own_.row_hits.add(); totals_.row_hits.add(); break;
    case Outcome::kMiss: own_.row_misses.add(); totals_.row_misses.add(); break;
    case Outcome::kConflict: own_.row_conflicts.add(); totals_.row_conflicts.add(); break;
  }
  record(at, c.command, c.bank, burst.row);
  listener_.on_burst_done(burst.request, data_end);
}

void Hbm3Channel::precharge_all(MemCycle at) {
  for (Bank& bank : banks_) {
    if (!bank.open) continue;
    bank.open = false;
    bank.hit = kNone;
    bank.act_ready = std::max(bank.act_ready, at + t_.nRP);
    if (bank.head != kNone) update_offer(static_cast<std::uint32_t>(&bank - banks_.data()));
  }
  row_bus_free_ = at + 1;
  totals_.precharges.add();
  record(at, DramCommand::kPrechargeAll, kNone, 0);
}

void Hbm3Channel::refresh(MemCycle at) {
  for (Bank& bank : banks_) {
    bank.act_ready = std::max(bank.act_ready, at + t_.nRFC);
    if (bank.head != kNone) update_offer(static_cast<std::uint32_t>(&bank - banks_.data()));
  }
  next_refresh_ += t_.nREFI;
  row_bus_free_ = at + 1;
  totals_.refreshes.add();
  record(at, DramCommand::kRefresh, kNone, 0);
}

void Hbm3Channel::skip_bank_refreshes(MemCycle before) {
  // Of the REFpbs due by `before`, with no command between them, only the last of each bank
  // sets its bank's earliest ACT, and an earlier one only closes its bank's row: the rest are
  // counted and their rows closed, not replayed, so an idle stretch costs one rotation at most.
  const auto due = static_cast<std::uint64_t>((before - next_bank_refresh_) / t_.nREFIpb) + 1;
  if (due <= banks_.size()) return;
  const std::uint64_t skipped = due - banks_.size();
  // The banks a skipped REFpb would have closed.
  for (std::uint64_t i = 0; i < std::min<std::uint64_t>(skipped, banks_.size()); ++i) {
    const auto b = static_cast<std::uint32_t>((refresh_bank_ + i) % banks_.size());
    Bank& bank = banks_[b];
    if (!bank.open) continue;
    bank.open = false;
    bank.hit = kNone;
    if (bank.head != kNone) update_offer(b);
  }
  next_valid_ = false;
  next_bank_refresh_ += static_cast<MemCycle>(skipped) * t_.nREFIpb;
  refresh_bank_ = static_cast<std::uint32_t>((refresh_bank_ + skipped) % banks_.size());
  totals_.refreshes.add(skipped);
}

void Hbm3Channel::refresh_bank() {
  const std::uint32_t b = refresh_bank_;
  Bank& bank = banks_[b];
  // REFpb takes the row-command bus like any row command; an open row is closed by it (as a PRE
  // would be, no sooner than the row may close, and nRP before the refresh starts).
  MemCycle at = std::max({next_bank_refresh_, row_bus_free_, last_issue_});
  MemCycle refresh_start = at;
  if (bank.open) {
    at = std::max(at, bank.pre_ready);
    refresh_start = at + t_.nRP;
    bank.open = false;
    bank.hit = kNone;
  }
  bank.act_ready = std::max(bank.act_ready, refresh_start + t_.nRFCpb);
  if (bank.head != kNone) update_offer(b);
  next_valid_ = false;
  last_issue_ = at;
  row_bus_free_ = at + 1;
  refresh_bank_ = b + 1 == banks_.size() ? 0 : b + 1;
  next_bank_refresh_ += t_.nREFIpb;
  totals_.refreshes.add();
  record(at, DramCommand::kRefresh, b, 0);
}

void Hbm3Channel::record(MemCycle at, DramCommand command, std::uint32_t bank,
                         std::uint64_t row) const {
  if (!observer_) return;
  const bool whole_channel = bank == kNone;
  observer_->on_command(DramCommandRecord{
      .at = at,
      .command = command,
      .channel = index_,
      .pseudo_channel = whole_channel ? 0 : pseudo_channel_of(bank),
      .bank_group = whole_channel ? 0 : bank_group_of(bank) % groups_per_pc_,
      .bank = whole_channel ? 0 : bank % banks_per_group_,
      .row = row});
}

}  // namespace simfa::memory_models
