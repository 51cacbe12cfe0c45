// One HBM3 channel: banks, timing state and the FR-FCFS queue.
#include "hbm3_channel.h"

#include <algorithm>

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
      burst_bytes_(static_cast<std::uint32_t>(o.burst_bytes())),
      max_row_hits_(max_row_hits),
      listener_(listener),
      own_(own),
      totals_(totals),
      banks_(static_cast<std::size_t>(o.pseudo_channels) * banks_per_pc_),
      bank_groups_(static_cast<std::size_t>(o.pseudo_channels * o.bank_groups)),
      pseudo_channels_(static_cast<std::size_t>(o.pseudo_channels)),
      next_refresh_(timing.nREFI > 0 ? timing.nREFI : kNoMemCycle) {
  for (PseudoChannel& pc : pseudo_channels_) pc.last_acts.fill(kLongAgo);
}

void Hbm3Channel::enqueue(const DramLocation& at, bool write, std::uint32_t request,
                          MemCycle arrival) {
  const std::uint32_t i = bursts_.add(Burst{.row = at.row, .seq = next_seq_++, .arrival = arrival,
                                             .request = request, .write = write});

  const std::uint32_t b =
      (at.pseudo_channel * (banks_per_pc_ / banks_per_group_) + at.bank_group) * banks_per_group_ +
      at.bank;
  Bank& bank = banks_[b];
  if (bank.open && bank.row == at.row && bank.hit == kNone) {
    bank.hit = i;
    bank.hit_prev = bank.tail;
  }
  if (bank.tail == kNone) bank.head = i;
  else bursts_[bank.tail].next = i;
  bank.tail = i;
  ++queued_;
  next_valid_ = false;
  next_.at = std::min(next_.at, arrival);
  own_.queue_occupancy.sample(queued_);
}

MemCycle Hbm3Channel::advance(MemCycle horizon) {
  for (;;) {
    const Candidate c = next();
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

Hbm3Channel::Candidate Hbm3Channel::pick() const {
  Candidate best;
  if (queued_ > 0) {
    // Banks in index order, with their bank group and pseudo-channel alongside.
    std::uint32_t b = 0, g = 0;
    for (const PseudoChannel& pc : pseudo_channels_) {
      for (std::uint32_t end_g = g + banks_per_pc_ / banks_per_group_; g < end_g; ++g) {
        for (std::uint32_t end_b = b + banks_per_group_; b < end_b; ++b) {
          if (banks_[b].head == kNone) continue;
          const Candidate c = bank_candidate(b, banks_[b], bank_groups_[g], pc);
          // From the moment a refresh is due, nothing new starts until it is done.
          if (c.at < next_refresh_ && before(c, best)) best = c;
        }
      }
    }
  }
  // A bank command found comes before the refresh, which cannot start before it is due.
  return best.at != kNoMemCycle ? best : refresh_candidate();
}

inline Hbm3Channel::Candidate Hbm3Channel::bank_candidate(std::uint32_t index, const Bank& bank,
                                                          const BankGroup& bg,
                                                          const PseudoChannel& pc) const {
  const Burst& head = bursts_[bank.head];
  Candidate c;
  c.bank = index;
  if (bank.hit != kNone && (bank.served < max_row_hits_ || head.row == bank.row)) {
    const Burst& hit = bursts_[bank.hit];
    c.command = hit.write ? DramCommand::kWrite : DramCommand::kRead;
    c.burst = bank.hit;
    c.seq = hit.seq;
    c.at = std::max({hit.arrival, bank.col_ready, col_bus_free_,
                     hit.write ? std::max(bg.wr_ready, pc.wr_ready)
                               : std::max(bg.rd_ready, pc.rd_ready)});
  } else if (bank.open) {
    c.command = DramCommand::kPrecharge;
    c.burst = bank.head;
    c.seq = head.seq;
    c.at = std::max({head.arrival, bank.pre_ready, row_bus_free_});
  } else {
    c.command = DramCommand::kActivate;
    c.burst = bank.head;
    c.seq = head.seq;
    c.at = std::max({head.arrival, bank.act_ready, bg.act_ready, pc.act_ready,
                     pc.last_acts[pc.faw_next] + t_.nFAW, row_bus_free_});
  }
  c.at = std::max(c.at, last_issue_);
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
  bank.hit = c.burst;  // the head: the ACT is for its row
  bank.hit_prev = kNone;
  if (head.outcome == Outcome::kHit) head.outcome = Outcome::kMiss;

  bank.col_ready = c.at + t_.nRCD;
  bank.pre_ready = std::max(bank.pre_ready, c.at + t_.nRAS);
  bank.act_ready = std::max(bank.act_ready, c.at + t_.nRC);
  bank_groups_[bank_group_of(c.bank)].act_ready = c.at + t_.nRRDL;
  PseudoChannel& pc = pseudo_channels_[pseudo_channel_of(c.bank)];
  pc.act_ready = c.at + t_.nRRDS;
  pc.last_acts[pc.faw_next] = c.at;
  pc.faw_next = (pc.faw_next + 1) % static_cast<std::uint32_t>(pc.last_acts.size());
  row_bus_free_ = c.at + kActivateCycles;
  totals_.activates.add();
  record(c.at, DramCommand::kActivate, c.bank, bank.row);
}

void Hbm3Channel::precharge(const Candidate& c) {
  Bank& bank = banks_[c.bank];
  bank.open = false;
  bank.hit = bank.hit_prev = kNone;
  bank.act_ready = std::max(bank.act_ready, c.at + t_.nRP);
  bursts_[c.burst].outcome = Outcome::kConflict;
  row_bus_free_ = c.at + 1;
  totals_.precharges.add();
  record(c.at, DramCommand::kPrecharge, c.bank, bank.row);
}

void Hbm3Channel::column(const Candidate& c) {
  Bank& bank = banks_[c.bank];
  BankGroup& bg = bank_groups_[bank_group_of(c.bank)];
  PseudoChannel& pc = pseudo_channels_[pseudo_channel_of(c.bank)];
  const Burst burst = bursts_[c.burst];

  // Unlink and free the burst (the bank's oldest hit), and find the next hit after it.
  std::uint32_t prev = bank.hit_prev;
  if (prev == kNone) bank.head = burst.next;
  else bursts_[prev].next = burst.next;
  if (bank.tail == c.burst) bank.tail = prev;
  bursts_.release(c.burst);
  std::uint32_t next = burst.next;
  while (next != kNone && bursts_[next].row != bank.row) {
    prev = next;
    next = bursts_[next].next;
  }
  bank.hit = next;
  bank.hit_prev = next == kNone ? kNone : prev;
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
    bank.hit = bank.hit_prev = kNone;
    bank.act_ready = std::max(bank.act_ready, at + t_.nRP);
  }
  row_bus_free_ = at + 1;
  totals_.precharges.add();
  record(at, DramCommand::kPrechargeAll, kNone, 0);
}

void Hbm3Channel::refresh(MemCycle at) {
  for (Bank& bank : banks_) bank.act_ready = std::max(bank.act_ready, at + t_.nRFC);
  next_refresh_ += t_.nREFI;
  row_bus_free_ = at + 1;
  totals_.refreshes.add();
  record(at, DramCommand::kRefresh, kNone, 0);
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
      .bank_group = whole_channel ? 0 : bank_group_of(bank) % (banks_per_pc_ / banks_per_group_),
      .bank = whole_channel ? 0 : bank % banks_per_group_,
      .row = row});
}

}  // namespace simfa::memory_models
