// The DRAM backends alone: dram.fixed's latency and FIFO bandwidth queue, and dram.hbm3's
// presets, clock domains, timing gates, FR-FCFS, refresh and bandwidth, against the harness's
// manual event queue, a recording client and a command log.
//
// Most dram.hbm3 cases run the HBM3_5.2Gbps preset on a "unit clock": tCK = 1 ns and a 1000 MHz
// SM clock, so a memory cycle is an SM cycle. A request sent in cycle c then reaches its channel
// at c + 1 (the next memory-clock edge) and is answered in the cycle its data ends. The preset's
// cycles (hbm3_config.h): nBL 2, nCL 19, nCWL 6, nRCD 19, nRP 19, nRAS 45, nRC 63, nWR 21,
// nRTP 8, nCCDS 2, nCCDL 4, nRRDS 2, nRRDL 4, nFAW 39, nWTRS 8, nWTRL 11, nRTW 3; an ACT holds
// the row-command bus 2 cycles.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "dram_harness.h"
#include "fixed_dram.h"
#include "hbm3_dram.h"
#include "simfa/error.h"

namespace simfa::memory_models {
namespace {

using test::CommandLog;
using test::DramBench;
using test::hbm3_address;
using test::ParamOverrides;
using test::read_request;
using test::RecordingClient;
using test::write_request;

// ---- dram.fixed ------------------------------------------------------------------------------

ParamOverrides fixed(double latency_ns, double bytes_per_second) {
  return {{"latency_ns", latency_ns}, {"bandwidth", bytes_per_second}};
}

TEST(FixedDram, LatencyAfterTransfer) {
  DramBench bench;  // 1000 MHz: 1 ns per cycle
  // 128 GB/s moves a 128 B line in 1 ns.
  auto dram = bench.make<FixedDram>(fixed(100, 128e9));
  RecordingClient client;
  dram->send(10, read_request(0x1000, 1, client));
  bench.events.run();
  // Arrives at 10 ns, transfers until 11 ns, answered 100 ns later: cycle 111.
  ASSERT_EQ(client.responses.size(), 1u);
  EXPECT_EQ(client.responses[0].at, 111u);
  EXPECT_EQ(client.responses[0].request.addr, 0x1000u);
}

TEST(FixedDram, BandwidthQueueIsFifo) {
  DramBench bench;
  // 12.8 GB/s: 10 ns per 128 B line.
  auto dram = bench.make<FixedDram>(fixed(100, 12.8e9));
  RecordingClient client;
  for (std::uint64_t i = 0; i < 4; ++i) dram->send(0, read_request(i * 128, i, client));
  // A 64 B write at 15 ns waits for the four lines ahead (queue free at 40 ns), takes 5 ns.
  bench.events.call(15, Priority::kEngine,
                    [&](Cycle now) { dram->send(now, write_request(0x9000, 4, client, 0, 64)); });
  // At 500 ns the queue is empty again: no wait.
  bench.events.call(500, Priority::kEngine,
                    [&](Cycle now) { dram->send(now, read_request(0xa000, 5, client)); });
  bench.events.run();
  // Transfers end at 10, 20, 30, 40; +100 ns latency.
  EXPECT_EQ(test::order(client), (std::vector<std::uint64_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(client.at(0), 110u);
  EXPECT_EQ(client.at(1), 120u);
  EXPECT_EQ(client.at(2), 130u);
  EXPECT_EQ(client.at(3), 140u);
  EXPECT_EQ(client.at(4), 145u);  // starts at 40, 5 ns transfer, +100
  EXPECT_EQ(client.at(5), 610u);  // 500 + 10 + 100
  // Waits: 0, 10, 20, 30 ns, the write 40 - 15 = 25 ns, the last 0: 10 ns buckets.
  const Histogram& delay = bench.stats.hist("dram.queue_delay");
  EXPECT_EQ(delay.count(), 6u);
  EXPECT_EQ(delay.buckets()[0], 2u);
  EXPECT_EQ(delay.buckets()[1], 1u);
  EXPECT_EQ(delay.buckets()[2], 2u);
  EXPECT_EQ(delay.buckets()[3], 1u);
  EXPECT_EQ(delay.sum(), 0u + 10 + 20 + 30 + 25 + 0);
}

TEST(FixedDram, LatencyIsInNanosecondsAtAnySmClock) {
  // Defaults: 40 ns, 3.35 TB/s. At 1830 MHz cycle 100 starts at floor(100e15 / 1.83e9) =
  // 54644808 fs; the transfer is ceil(128e15 / 3.35e12) = 38209 fs; done at 54644808 + 38209 +
  // 40000000 = 94683017 fs = 173.27 cycles: answered in cycle 174.
  {
    DramBench bench(1830);
    auto dram = bench.make<FixedDram>();
    RecordingClient client;
    dram->send(100, read_request(0, 1, client));
    bench.events.run();
    EXPECT_EQ(client.at(1), 174u);
  }
  // At 1250 MHz cycle 100 starts at 80000000 fs; done at 120038209 fs = 150.05 cycles: 151.
  {
    DramBench bench(1250);
    auto dram = bench.make<FixedDram>();
    RecordingClient client;
    dram->send(100, read_request(0, 1, client));
    bench.events.run();
    EXPECT_EQ(client.at(1), 151u);
  }
}

TEST(FixedDram, ControllerLatencyAddsToTheLatency) {
  DramBench bench;
  auto dram = bench.make<FixedDram>({{"latency_ns", 100.0},
                                     {"bandwidth", 128e9},
                                     {"controller_latency_ns", 57.0}});
  RecordingClient client;
  dram->send(10, read_request(0x1000, 1, client));
  bench.events.run();
  // As LatencyAfterTransfer (answered at 111) plus 57 ns.
  EXPECT_EQ(client.at(1), 168u);
}

TEST(FixedDram, NeverAnswersInTheSendCycle) {
  DramBench bench;
  auto dram = bench.make<FixedDram>(fixed(0, 1e16));  // 0.0128 ns: within cycle 7
  RecordingClient client;
  dram->send(7, read_request(0, 1, client));
  bench.events.run();
  EXPECT_EQ(client.at(1), 8u);
}

TEST(FixedDram, CountsAndAchievedBandwidth) {
  DramBench bench;
  auto dram = bench.make<FixedDram>(fixed(100, 12.8e9));
  RecordingClient client;
  dram->send(0, read_request(0, 1, client));
  dram->send(0, read_request(128, 2, client, 0, 64));
  dram->send(0, write_request(256, 3, client));
  bench.events.run();
  dram->finish(200);
  EXPECT_EQ(bench.stats.value("dram.reads"), 2u);
  EXPECT_EQ(bench.stats.value("dram.writes"), 1u);
  EXPECT_EQ(bench.stats.value("dram.dram_read_bytes"), 192u);
  EXPECT_EQ(bench.stats.value("dram.dram_write_bytes"), 128u);
  EXPECT_EQ(bench.stats.value("dram.elapsed_cycles"), 200u);
  // 320 B in 200 cycles of 1 ns: 1.6 GB/s.
  EXPECT_DOUBLE_EQ(bench.stats.evaluate("dram.achieved_bandwidth"), 1.6);
}

TEST(FixedDram, Schema) {
  EXPECT_EQ(test::schema_problems<FixedDram>(), "");
  DramBench bench;
  auto dram = bench.make<FixedDram>();
  EXPECT_EQ(bench.stats.names(), test::declared_stats<FixedDram>("dram"));
}

// ---- dram.hbm3: presets ------------------------------------------------------------------------

// Each preset's values re-derived from its sources (hbm3_config.h): intervals given in ns become
// ceil(ns / tCK) cycles, the rest are whole cycles, and tCK follows from the peak bandwidth.
struct PresetSource {
  const char* name;
  int stacks;
  double tck_ns;
  double refresh_ns;  ///< tRFC for the density per channel
  double peak;        ///< bytes per second, as published
  double peak_tolerance;
};

int cycles(double ns, double tck) {
  // The 1e-9 keeps 48 / 0.64 = 75 from rounding up through floating-point noise.
  return static_cast<int>(std::ceil(ns / tck - 1e-9));
}

TEST(Hbm3Presets, EveryFieldFollowsFromItsSource) {
  const PresetSource sources[] = {
      // Ramulator 2: 5.2 Gb/s per pin -> tCK 4 / 5.2 ns; 665.6 GB/s = 1024 pins x 5.2 Gb/s / 8.
      {"HBM3_5.2Gbps", 1, 4 / 5.2, 350, 665.6e9, 1e-6},
      // Ramulator 2: 6.4 Gb/s -> 0.625 ns; JEDEC's 819 GB/s per stack (819.2).
      {"HBM3_6.4Gbps", 1, 0.625, 350, 819.2e9, 1e-6},
      // H800/H100 SXM5: 3.35 TB/s over 5 stacks; tCK 0.764 ns gives 3.3508 TB/s.
      {"H800_HBM3", 5, 0.764, 350, 3.35e12, 1e-3},
      // H200: 4.8 TB/s over 6 stacks; tCK 0.640 ns gives it exactly.
      {"H200_HBM3e", 6, 0.640, 410, 4.8e12, 1e-9},
  };
  ASSERT_EQ(std::size(sources), std::size(kHbm3Presets));
  for (const PresetSource& s : sources) {
    SCOPED_TRACE(s.name);
    const Hbm3Preset* p = find_hbm3_preset(s.name);
    ASSERT_NE(p, nullptr);
    const Hbm3Organization& o = p->organization;
    const Hbm3Timing& t = p->timing;
    // JESD238: 16 channels x 2 pseudo-channels of 32 pins, BL8; 4 x 4 banks; 1 KiB rows.
    EXPECT_EQ(o.stacks, s.stacks);
    EXPECT_EQ(o.channels_per_stack, 16);
    EXPECT_EQ(o.pseudo_channels, 2);
    EXPECT_EQ(o.bank_groups, 4);
    EXPECT_EQ(o.banks_per_group, 4);
    EXPECT_EQ(o.pc_width_bits, 32);
    EXPECT_EQ(o.burst_length, 8);
    EXPECT_EQ(o.columns * o.burst_bytes(), 1024);
    EXPECT_NEAR(t.tCK_ns, s.tck_ns, 1e-6);
    const double tck = s.tck_ns;
    // DRAMsim3 HBM2_8Gb_x128.ini intervals in ns.
    EXPECT_EQ(t.nCL, cycles(14, tck));
    EXPECT_EQ(t.nRCD, cycles(14, tck));
    EXPECT_EQ(t.nRP, cycles(14, tck));
    EXPECT_EQ(t.nCWL, cycles(4, tck));
    EXPECT_EQ(t.nRAS, cycles(34, tck));
    EXPECT_EQ(t.nRC, cycles(48, tck));
    EXPECT_EQ(t.nWR, cycles(16, tck));
    EXPECT_EQ(t.nRTP, cycles(6, tck));
    EXPECT_EQ(t.nFAW, cycles(30, tck));
    EXPECT_EQ(t.nWTRS, cycles(6, tck));
    EXPECT_EQ(t.nWTRL, cycles(8, tck));
    EXPECT_EQ(t.nRFC, cycles(s.refresh_ns, tck));
    EXPECT_EQ(t.nREFI, static_cast<int>(std::floor(3900 / tck + 1e-9)));  // an interval: round down
    // Whole cycles in Ramulator 2's presets.
    EXPECT_EQ(t.nBL, 2);
    EXPECT_EQ(t.nCCDS, 2);
    EXPECT_EQ(t.nCCDL, 4);
    EXPECT_EQ(t.nRRDS, 2);
    EXPECT_EQ(t.nRRDL, 4);
    EXPECT_EQ(t.nRTW, 3);
    // Peak = pins x data rate: channels x pseudo-channels x 32 pins x burst_length / (nBL tCK).
    const double pins = o.channels() * o.pseudo_channels * o.pc_width_bits;
    const double rate = o.burst_length / (t.nBL * t.tCK_ns * 1e-9);
    EXPECT_NEAR(hbm3_peak_bandwidth(o, t), pins * rate / 8, 1);
    EXPECT_NEAR(hbm3_peak_bandwidth(o, t), s.peak, s.peak * s.peak_tolerance);

    // The component builds it and reports the same.
    DramBench bench(1830);
    auto dram = bench.make<Hbm3Dram>({{"preset", std::string(s.name)}});
    EXPECT_EQ(dram->organization().channels(), 16 * s.stacks);
    EXPECT_EQ(dram->peak_bandwidth(), hbm3_peak_bandwidth(o, t));
  }
}

TEST(Hbm3Presets, ManifestKeysOverrideSingleFields) {
  DramBench bench;
  auto dram = bench.make<Hbm3Dram>({{"preset", std::string("H200_HBM3e")},
                                    {"nCL", std::int64_t{30}},
                                    {"stacks", std::int64_t{4}},
                                    {"tCK_ns", 0.5}});
  EXPECT_EQ(dram->timing().nCL, 30);
  EXPECT_EQ(dram->timing().nRCD, 22);  // untouched: the preset's
  EXPECT_EQ(dram->timing().tCK_ns, 0.5);
  EXPECT_EQ(dram->organization().stacks, 4);
  EXPECT_EQ(dram->organization().channels(), 64);
}

TEST(Hbm3Presets, BadValuesAreInputErrors) {
  DramBench bench;
  EXPECT_THROW(bench.make<Hbm3Dram>({{"nCL", std::int64_t{0}}}), InputError);
  EXPECT_THROW(bench.make<Hbm3Dram>({{"tCK_ns", 0.0}}), InputError);
  EXPECT_THROW(bench.make<Hbm3Dram>({{"interleave_bytes", std::int64_t{48}}}), InputError);
  EXPECT_THROW(bench.make<Hbm3Dram>({{"interleave_bytes", std::int64_t{2048}}}), InputError);
  EXPECT_THROW(bench.make<Hbm3Dram>({{"pc_width_bits", std::int64_t{3}}}), InputError);
  // Per-bank refresh beside the preset's all-bank refresh: the REF would starve every access.
  try {
    bench.make<Hbm3Dram>({{"nREFIpb", std::int64_t{80}}, {"nRFCpb", std::int64_t{293}}});
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("set nREFI = 0"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(
      bench.make<Hbm3Dram>({{"nREFI", std::int64_t{0}}, {"nREFIpb", std::int64_t{80}}}));
  for (const char* mapping :
       {"CoRoBaBgStChPc", "RoCoBaBgStChCh", "RoCoBaBgStCh", "RoCoBaBgStChPcXx"}) {
    SCOPED_TRACE(mapping);
    try {
      bench.make<Hbm3Dram>({{"address_mapping", std::string(mapping)}});
      ADD_FAILURE() << "accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("address_mapping '"), std::string::npos) << e.what();
    }
  }
}

// ---- dram.hbm3: timing on the unit clock -------------------------------------------------------

ParamOverrides unit_clock(ParamOverrides extra = {}) {
  ParamOverrides o{{"preset", std::string("HBM3_5.2Gbps")}, {"tCK_ns", 1.0}, {"nREFI", std::int64_t{0}}};
  o.insert(o.end(), extra.begin(), extra.end());
  return o;
}

// Channel 0, pseudo-channel `pc` of the one-stack preset.
Addr bank_address(std::uint32_t pc, std::uint32_t bg, std::uint32_t bank, std::uint64_t row) {
  return hbm3_address(kHbm3Stack, 0, 0, pc, bg, bank, row);
}

struct UnitDram {
  DramBench bench;
  std::unique_ptr<Hbm3Dram> dram;
  CommandLog log;
  RecordingClient client;

  explicit UnitDram(const ParamOverrides& extra = {}) : dram(bench.make<Hbm3Dram>(unit_clock(extra))) {
    dram->set_command_observer(&log);
  }
  void send_at(Cycle at, const MemRequest& r) {
    bench.events.call(at, Priority::kEngine, [this, r](Cycle now) { dram->send(now, r); });
  }
  MemCycle first(DramCommand c, std::uint64_t row, std::uint32_t bg = 0, std::uint32_t bank = 0) const {
    for (const auto& r : log.commands)
      if (r.command == c && r.row == row && r.bank_group == bg && r.bank == bank) return r.at;
    return -1;
  }
};

TEST(Hbm3Timing, ClosedBankMissRowHitAndConflict) {
  UnitDram u;
  const Addr row0 = bank_address(0, 0, 0, 0);
  const Addr row1 = bank_address(0, 0, 0, 1);
  u.send_at(0, read_request(row0, 1, u.client, 0, 32));        // closed bank
  u.send_at(100, read_request(row0 + 32, 2, u.client, 0, 32));  // row 0 open: a hit
  u.send_at(200, read_request(row1, 3, u.client, 0, 32));       // row 0 open, row 1 wanted: a conflict
  u.bench.events.run();

  // Closed: arrives 1, ACT 1, RD 1 + nRCD = 20, data ends 20 + nCL + nBL = 41.
  EXPECT_EQ(u.log.commands[0].command, DramCommand::kActivate);
  EXPECT_EQ(u.log.commands[0].at, 1);
  EXPECT_EQ(u.log.commands[1].command, DramCommand::kRead);
  EXPECT_EQ(u.log.commands[1].at, 20);
  EXPECT_EQ(u.client.at(1), 41u);
  // Hit: arrives 101, RD at once; answered exactly nCL + nBL = 21 after its column command.
  EXPECT_EQ(u.log.commands[2].command, DramCommand::kRead);
  EXPECT_EQ(u.log.commands[2].at, 101);
  EXPECT_EQ(u.client.at(2), 101u + 19 + 2);
  // Conflict: PRE 201 (nRAS, nRTP long past), ACT 201 + nRP = 220, RD 220 + nRCD = 239,
  // answered 239 + 21 = 260.
  EXPECT_EQ(u.log.commands[3].command, DramCommand::kPrecharge);
  EXPECT_EQ(u.log.commands[3].at, 201);
  EXPECT_EQ(u.first(DramCommand::kActivate, 1), 220);
  EXPECT_EQ(u.first(DramCommand::kRead, 1), 239);
  EXPECT_EQ(u.client.at(3), 260u);

  // Send-to-response: hit 22, closed 41 = hit + nRCD, conflict 60 = hit + nRP + nRCD.
  const Cycle hit = u.client.at(2) - 100, closed = u.client.at(1) - 0, conflict = u.client.at(3) - 200;
  EXPECT_EQ(closed - hit, 19u);
  EXPECT_EQ(conflict - hit, 19u + 19u);

  EXPECT_EQ(u.bench.stats.value("dram.row_misses"), 1u);
  EXPECT_EQ(u.bench.stats.value("dram.row_hits"), 1u);
  EXPECT_EQ(u.bench.stats.value("dram.row_conflicts"), 1u);
  EXPECT_EQ(u.bench.stats.value("dram.channel[0].row_misses"), 1u);
  EXPECT_EQ(u.bench.stats.value("dram.channel[0].row_hits"), 1u);
  EXPECT_EQ(u.bench.stats.value("dram.channel[0].row_conflicts"), 1u);
  EXPECT_EQ(u.bench.stats.value("dram.channel[0].read_bytes"), 96u);
  EXPECT_EQ(u.bench.stats.value("dram.channel[1].read_bytes"), 0u);
  EXPECT_EQ(u.bench.stats.value("dram.activates"), 2u);
  EXPECT_EQ(u.bench.stats.value("dram.precharges"), 1u);
  EXPECT_DOUBLE_EQ(u.bench.stats.evaluate("dram.row_hit_rate"), 1.0 / 3);
}

TEST(Hbm3Timing, WriteAnsweredWhenItsDataIsWritten) {
  UnitDram u;
  u.send_at(0, write_request(bank_address(0, 0, 0, 0), 1, u.client, 0, 32));
  u.bench.events.run();
  // ACT 1, WR 20, data ends 20 + nCWL + nBL = 28.
  EXPECT_EQ(u.first(DramCommand::kWrite, 0), 20);
  EXPECT_EQ(u.client.at(1), 28u);
  EXPECT_EQ(u.bench.stats.value("dram.channel[0].write_bytes"), 32u);
}

TEST(Hbm3Timing, LineIsFourBurstsOfOneRowAtCcdL) {
  UnitDram u;
  u.send_at(0, read_request(bank_address(0, 0, 0, 0), 1, u.client));
  u.bench.events.run();
  // One ACT; RDs nCCDL = 4 apart in the bank's bank group: 20, 24, 28, 32; data ends 32 + 21.
  EXPECT_EQ(u.log.all(DramCommand::kActivate).size(), 1u);
  std::vector<MemCycle> reads;
  for (const auto& r : u.log.all(DramCommand::kRead)) reads.push_back(r.at);
  EXPECT_EQ(reads, (std::vector<MemCycle>{20, 24, 28, 32}));
  EXPECT_EQ(u.client.at(1), 53u);
  EXPECT_EQ(u.bench.stats.value("dram.row_misses"), 1u);  // the first burst opened the row
  EXPECT_EQ(u.bench.stats.value("dram.row_hits"), 3u);
}

TEST(Hbm3Timing, ActivateToActivate) {
  // Distinct values make each gate visible: nRRDS 5, nRRDL 7.
  for (const bool same_group : {false, true}) {
    SCOPED_TRACE(same_group);
    UnitDram u({{"nRRDS", std::int64_t{5}}, {"nRRDL", std::int64_t{7}}});
    u.send_at(0, read_request(bank_address(0, 0, 0, 0), 1, u.client, 0, 32));
    u.send_at(0, read_request(bank_address(0, same_group ? 0 : 1, same_group ? 1 : 0, 0), 2, u.client, 0, 32));
    u.bench.events.run();
    const auto acts = u.log.times(DramCommand::kActivate, 0, 0);
    ASSERT_EQ(acts.size(), 2u);
    // The older request's ACT at 1; the other nRRDS (other bank group) or nRRDL later.
    EXPECT_EQ(acts[0], 1);
    EXPECT_EQ(acts[1], same_group ? 1 + 7 : 1 + 5);
  }
}

TEST(Hbm3Timing, FourActivateWindow) {
  UnitDram u;
  // Five closed banks of pseudo-channel 0: bank 0 of each bank group, then bank 1 of group 0.
  const std::uint32_t groups[] = {0, 1, 2, 3, 0};
  const std::uint32_t banks[] = {0, 0, 0, 0, 1};
  for (std::uint64_t i = 0; i < 5; ++i)
    u.send_at(0, read_request(bank_address(0, groups[i], banks[i], 0), i, u.client, 0, 32));
  u.bench.events.run();
  // ACTs every 2 cycles (nRRDS = the ACT's 2 bus cycles): 1, 3, 5, 7; the fifth waits for the
  // window of the first: 1 + nFAW = 40.
  EXPECT_EQ(u.log.times(DramCommand::kActivate, 0, 0), (std::vector<MemCycle>{1, 3, 5, 7, 40}));
}

// Opens row 0 in (pc 0) bank group 0 bank 0 (X), bank group 1 bank 0 (Y) and bank group 0
// bank 1 (Z) with 32 B reads at cycle 0; all done by cycle 100.
void open_three_rows(UnitDram& u) {
  u.send_at(0, read_request(bank_address(0, 0, 0, 0), 100, u.client, 0, 32));
  u.send_at(0, read_request(bank_address(0, 1, 0, 0), 101, u.client, 0, 32));
  u.send_at(0, read_request(bank_address(0, 0, 1, 0), 102, u.client, 0, 32));
}

TEST(Hbm3Timing, ColumnToColumn) {
  // nCCDS 3 (above nBL = 2) and nCCDL 6 make both gates visible.
  UnitDram u({{"nCCDS", std::int64_t{3}}, {"nCCDL", std::int64_t{6}}});
  open_three_rows(u);
  const Addr x = bank_address(0, 0, 0, 0) + 32, y = bank_address(0, 1, 0, 0) + 32,
             z = bank_address(0, 0, 1, 0) + 32;
  u.send_at(100, read_request(x, 1, u.client, 0, 32));  // hits, arriving at 101
  u.send_at(100, read_request(y, 2, u.client, 0, 32));  // other bank group
  u.send_at(200, read_request(x + 32, 3, u.client, 0, 32));
  u.send_at(200, read_request(z, 4, u.client, 0, 32));  // same bank group, other bank
  u.bench.events.run();
  // RD 101, then the other group's RD nCCDS later: 104. RD 201, the same group's 201 + 6 = 207.
  EXPECT_EQ(u.client.at(1), 101u + 21);
  EXPECT_EQ(u.client.at(2), 104u + 21);
  EXPECT_EQ(u.client.at(3), 201u + 21);
  EXPECT_EQ(u.client.at(4), 207u + 21);
}

TEST(Hbm3Timing, ReadWriteTurnarounds) {
  UnitDram u;
  open_three_rows(u);
  const Addr x = bank_address(0, 0, 0, 0) + 32, y = bank_address(0, 1, 0, 0) + 32,
             z = bank_address(0, 0, 1, 0) + 32;
  // Read then write (other bank group), both row hits arriving at 101: RD 101, read data ends
  // 122; the write's data may start nRTW = 3 later, so WR at 125 - nCWL = 119 (nCL + nBL +
  // nRTW - nCWL = 18 after the RD); its data ends 119 + 8 = 127.
  u.send_at(100, read_request(x, 1, u.client, 0, 32));
  u.send_at(100, write_request(y, 2, u.client, 0, 32));
  // Write then read, other bank group: WR 301, data ends 309, RD nWTRS = 8 later: 317.
  u.send_at(300, write_request(x, 3, u.client, 0, 32));
  u.send_at(300, read_request(y, 4, u.client, 0, 32));
  // Write then read, same bank group: WR 501, data ends 509, RD nWTRL = 11 later: 520.
  u.send_at(500, write_request(x, 5, u.client, 0, 32));
  u.send_at(500, read_request(z, 6, u.client, 0, 32));
  u.bench.events.run();
  EXPECT_EQ(u.client.at(1), 122u);
  EXPECT_EQ(u.client.at(2), 127u);
  EXPECT_EQ(u.client.at(3), 309u);
  EXPECT_EQ(u.client.at(4), 317u + 21);
  EXPECT_EQ(u.client.at(5), 509u);
  EXPECT_EQ(u.client.at(6), 520u + 21);
}

TEST(Hbm3Scheduling, LaterRowHitBeforeEarlierConflict) {
  UnitDram u;
  const Addr row0 = bank_address(0, 0, 0, 0), row1 = bank_address(0, 0, 0, 1);
  u.send_at(0, read_request(row0, 1, u.client, 0, 32));  // opens row 0: ACT 1, RD 20
  u.send_at(100, read_request(row1, 2, u.client, 0, 32));      // older, a conflict
  u.send_at(100, read_request(row0 + 32, 3, u.client, 0, 32));  // younger, a hit
  u.bench.events.run();
  // The hit's RD goes first at 101 (answered 122); the PRE waits for it: 101 + nRTP = 109,
  // ACT 128, RD 147, answered 168.
  EXPECT_EQ(test::order(u.client), (std::vector<std::uint64_t>{1, 3, 2}));
  EXPECT_EQ(u.client.at(3), 122u);
  EXPECT_EQ(u.first(DramCommand::kPrecharge, 0), 109);
  EXPECT_EQ(u.client.at(2), 168u);
}

TEST(Hbm3Scheduling, EqualTimesGoToTheOldestWhateverTheBank) {
  // Four closed banks of pseudo-channel 0, one per bank group, asked in the order bank groups 3,
  // 0, 2, 1 at one cycle: each ACT waits nRRDS for the one before, so at every step the three
  // or fewer left are ready at one cycle and the oldest goes first. The scheduler's key carries
  // the bank below the burst's age: were the bank above it, bank group 0 would go first.
  UnitDram u;
  const std::vector<std::uint32_t> groups = {3, 0, 2, 1};
  for (std::uint64_t i = 0; i < groups.size(); ++i)
    u.send_at(10, read_request(bank_address(0, groups[i], 0, 0), i + 1, u.client, 0, 32));
  u.bench.events.run();
  std::vector<std::uint32_t> activated;
  for (const auto& c : u.log.commands)
    if (c.command == DramCommand::kActivate) activated.push_back(c.bank_group);
  EXPECT_EQ(activated, groups);
  EXPECT_EQ(test::order(u.client), (std::vector<std::uint64_t>{1, 2, 3, 4}));
}

TEST(Hbm3Scheduling, HitCapStopsStarvation) {
  // max_row_hits 2: the row opened for request 1 serves it and one more hit, then the older
  // conflict (2) gets the bank; the rest of row 0's hits then conflict with row 1.
  UnitDram u({{"max_row_hits", std::int64_t{2}}});
  const Addr row0 = bank_address(0, 0, 0, 0), row1 = bank_address(0, 0, 0, 1);
  u.send_at(0, read_request(row0, 1, u.client, 0, 32));
  u.send_at(100, read_request(row1, 2, u.client, 0, 32));
  for (std::uint64_t i = 1; i <= 3; ++i) u.send_at(100, read_request(row0 + 32 * i, 2 + i, u.client, 0, 32));
  u.bench.events.run();
  // 3: RD 101 -> 122. 2: PRE 109, ACT 128, RD 147 -> 168. 4: PRE at ACT + nRAS = 173, ACT 192,
  // RD 211 -> 232. 5: RD 211 + nCCDL = 215 -> 236.
  EXPECT_EQ(test::order(u.client), (std::vector<std::uint64_t>{1, 3, 2, 4, 5}));
  EXPECT_EQ(u.client.at(3), 122u);
  EXPECT_EQ(u.client.at(2), 168u);
  EXPECT_EQ(u.client.at(4), 232u);
  EXPECT_EQ(u.client.at(5), 236u);
  EXPECT_EQ(u.bench.stats.value("dram.row_hits"), 2u);       // 3, 5
  EXPECT_EQ(u.bench.stats.value("dram.row_misses"), 1u);     // 1
  EXPECT_EQ(u.bench.stats.value("dram.row_conflicts"), 2u);  // 2, 4

  // Without the cap all of row 0's hits go before the conflict.
  UnitDram v;
  v.send_at(0, read_request(row0, 1, v.client, 0, 32));
  v.send_at(100, read_request(row1, 2, v.client, 0, 32));
  for (std::uint64_t i = 1; i <= 3; ++i) v.send_at(100, read_request(row0 + 32 * i, 2 + i, v.client, 0, 32));
  v.bench.events.run();
  EXPECT_EQ(test::order(v.client), (std::vector<std::uint64_t>{1, 3, 4, 5, 2}));
}

// ---- dram.hbm3: refresh ------------------------------------------------------------------------

TEST(Hbm3Refresh, BlocksTheChannelForRfcEveryRefi) {
  UnitDram u({{"nREFI", std::int64_t{1000}}, {"nRFC", std::int64_t{100}}});
  // Arrives at 1000, when the first refresh is due: REF 1000 (banks are closed), no ACT before
  // 1000 + nRFC = 1100; RD 1119, answered 1140 (1040 without the refresh).
  u.send_at(999, read_request(bank_address(0, 0, 0, 0), 1, u.client, 0, 32));
  u.bench.events.run();
  EXPECT_EQ(u.client.at(1), 1140u);
  // Every channel refreshes at k x 1000 while idle; finish at 10500 replays them: 10 each.
  // Channel 0 left row 0 open, so its second refresh first precharges: PREA 2000, REF 2019.
  u.dram->finish(10500);
  EXPECT_EQ(u.bench.stats.value("dram.refreshes"), 16u * 10);
  std::vector<MemCycle> expected;
  for (MemCycle k = 1; k <= 10; ++k) expected.push_back(1000 * k);
  EXPECT_EQ(u.log.times(DramCommand::kRefresh, 15, 0), expected);
  expected[1] = 2019;
  EXPECT_EQ(u.log.times(DramCommand::kRefresh, 0, 0), expected);
  EXPECT_EQ(u.log.times(DramCommand::kPrechargeAll, 0, 0), (std::vector<MemCycle>{2000}));
}

TEST(Hbm3Refresh, ClosesOpenRowsFirst) {
  UnitDram u({{"nREFI", std::int64_t{1000}}, {"nRFC", std::int64_t{100}}});
  const Addr row0 = bank_address(0, 0, 0, 0);
  u.send_at(0, read_request(row0, 1, u.client, 0, 32));          // row 0 open from cycle 1
  u.send_at(999, read_request(row0 + 32, 2, u.client, 0, 32));   // would hit, but the refresh is due
  u.bench.events.run();
  // PREA 1000, REF 1000 + nRP = 1019, ACT 1019 + nRFC = 1119, RD 1138, answered 1159.
  EXPECT_EQ(u.log.times(DramCommand::kPrechargeAll, 0, 0), (std::vector<MemCycle>{1000}));
  EXPECT_EQ(u.log.times(DramCommand::kRefresh, 0, 0), (std::vector<MemCycle>{1019}));
  EXPECT_EQ(u.first(DramCommand::kActivate, 0), 1);
  EXPECT_EQ(u.log.times(DramCommand::kActivate, 0, 0), (std::vector<MemCycle>{1, 1119}));
  EXPECT_EQ(u.client.at(2), 1159u);
  EXPECT_EQ(u.bench.stats.value("dram.row_misses"), 2u);  // the refresh closed row 0
}

TEST(Hbm3Refresh, PerBankRefreshBlocksOneBankAtATime) {
  UnitDram u({{"nREFIpb", std::int64_t{100}}, {"nRFCpb", std::int64_t{200}}});
  // REFpb k (at 100 k) refreshes bank k - 1 of the channel's 32 (pseudo-channel, bank group, bank):
  // bank 0 at 100, bank 4 (bank group 1) at 500.
  u.send_at(149, read_request(bank_address(0, 0, 0, 0), 1, u.client, 0, 32));
  u.send_at(149, read_request(bank_address(0, 1, 0, 0), 2, u.client, 0, 32));
  u.bench.events.run();
  // Bank 0 activates nothing before 100 + nRFCpb = 300, when bank 2's REFpb holds the row-command
  // bus: ACT 301, RD 320, answered 341.
  EXPECT_EQ(u.first(DramCommand::kActivate, 0), 301);
  EXPECT_EQ(u.client.at(1), 341u);
  // Bank group 1's bank is not refreshing: ACT on arrival (150), RD 169, answered 190.
  EXPECT_EQ(u.first(DramCommand::kActivate, 0, 1), 150);
  EXPECT_EQ(u.client.at(2), 190u);
  // An idle channel's REFpbs are replayed when it next advances: 10 each by 1050.
  u.dram->finish(1050);
  EXPECT_EQ(u.bench.stats.value("dram.refreshes"), 16u * 10);
  std::vector<MemCycle> pc0;
  for (MemCycle k = 1; k <= 10; ++k) pc0.push_back(100 * k);
  EXPECT_EQ(u.log.times(DramCommand::kRefresh, 15, 0), pc0);  // banks 0-9 are all in pseudo-channel 0
}

TEST(Hbm3Refresh, PerBankRefreshesOfALongIdleStretchAreCountedNotReplayed) {
  UnitDram u({{"nREFIpb", std::int64_t{100}}, {"nRFCpb", std::int64_t{200}}});
  // 3200 REFpbs fall in the first 320000 idle cycles; the last, at 320000, is bank 31's
  // (pseudo-channel 1, bank group 3, bank 3): a read to it arriving at 320050 activates no sooner
  // than 320000 + nRFCpb = 320200, when bank 1's REFpb holds the row bus, so at 320201; it reads
  // at 320220 and is answered at 320241, as if every REFpb had been replayed.
  u.send_at(320049, read_request(bank_address(1, 3, 3, 0), 1, u.client, 0, 32));
  u.bench.events.run();
  EXPECT_EQ(u.client.at(1), 320241u);
  u.dram->finish(320050);
  // Every channel's 3200, and channel 0's two more while it served the read (320100, 320200).
  EXPECT_EQ(u.bench.stats.value("dram.refreshes"), 16u * 3200 + 2);
  // Channel 0 issued only the last rotation of the idle stretch (32 REFpbs, 316900 to 320000)
  // and the two after it.
  const auto issued = u.log.all(DramCommand::kRefresh);
  std::size_t channel0 = 0;
  for (const auto& r : issued) channel0 += r.channel == 0;
  EXPECT_EQ(channel0, 34u);
}

TEST(Hbm3Refresh, PerBankRefreshClosesItsBanksRow) {
  UnitDram u({{"nREFIpb", std::int64_t{100}}, {"nRFCpb", std::int64_t{200}}});
  const Addr row0 = bank_address(0, 0, 0, 0);
  u.send_at(0, read_request(row0, 1, u.client, 0, 32));         // row 0 open from cycle 1
  u.send_at(149, read_request(row0 + 32, 2, u.client, 0, 32));  // would have hit
  u.bench.events.run();
  // REFpb of bank 0 at 100 closes row 0, refreshes from 100 + nRP = 119: ACT 319, RD 338, 359.
  EXPECT_EQ(u.log.times(DramCommand::kActivate, 0, 0), (std::vector<MemCycle>{1, 319}));
  EXPECT_EQ(u.client.at(2), 359u);
  EXPECT_EQ(u.bench.stats.value("dram.row_misses"), 2u);
  EXPECT_EQ(u.bench.stats.value("dram.row_hits"), 0u);
}

TEST(Hbm3Events, IdleMemoryCostsNoEvents) {
  UnitDram u({{"nREFI", std::int64_t{5070}}});
  u.dram->send(0, read_request(bank_address(0, 0, 0, 0), 1, u.client, 0, 32));
  u.bench.events.run();
  // Three events: the wake for the ACT (1), the wake for the RD (20), the response (41).
  EXPECT_EQ(u.bench.events.fired(), 3u);
  EXPECT_TRUE(u.bench.events.empty());
  // A million idle cycles later: the refreshes channel 0 owes (floor(1e6 / 5070) = 197) are
  // replayed inside the send, and the request costs the same three events.
  u.dram->send(1'000'000, read_request(bank_address(0, 0, 0, 0), 2, u.client, 0, 32));
  EXPECT_EQ(u.bench.stats.value("dram.refreshes"), 197u);
  u.bench.events.run();
  EXPECT_EQ(u.bench.events.fired(), 6u);
  // The first refresh closed row 0 (PREA 5070, REF 5089): the request is a miss. Its ACT at
  // 1000001, RD 1000020, answered 1000041.
  EXPECT_EQ(u.client.at(2), 1'000'041u);
  EXPECT_EQ(u.log.times(DramCommand::kRefresh, 0, 0)[0], 5089);
  EXPECT_EQ(u.log.times(DramCommand::kRefresh, 0, 0)[1], 10140);
}

// ---- dram.hbm3: clocks -----------------------------------------------------------------------

TEST(Hbm3Clock, NanosecondTimingAtEverySmClock) {
  // H800_HBM3 (tCK 0.764 ns), a 128 B read sent in SM cycle 0: arrives at memory cycle 1, ACT 1,
  // RDs 20, 24, 28, 32, data ends at memory cycle 53 = 40.492 ns. A 32 B read: RD 20, data ends
  // 41 = 31.324 ns. Answered in the first SM cycle starting at or after that:
  //   1830 MHz: 74.10 -> 75 and 57.32 -> 58;  1250 MHz: 50.62 -> 51 and 39.16 -> 40;
  //   1980 MHz: 80.17 -> 81 and 62.02 -> 63.
  const std::tuple<double, Cycle, Cycle> cases[] = {{1830, 75, 58}, {1250, 51, 40}, {1980, 81, 63}};
  for (const auto& [mhz, line, sector] : cases) {
    SCOPED_TRACE(mhz);
    for (const std::uint32_t bytes : {128u, 32u}) {
      DramBench bench(mhz);
      auto dram = bench.make<Hbm3Dram>();
      RecordingClient client;
      dram->send(0, read_request(0, 1, client, 0, bytes));
      bench.events.run();
      EXPECT_EQ(client.at(1), bytes == 128 ? line : sector);
    }
  }
}

TEST(Hbm3Clock, ControllerLatencyIsAddedAfterTheData) {
  // The line of NanosecondTimingAtEverySmClock, its data done at 40.492 ns, plus 100 ns of
  // controller latency: 140.492 ns = 257.10 cycles at 1830 MHz -> 258, 175.61 at 1250 -> 176,
  // 278.17 at 1980 -> 279. The command timing is untouched.
  const std::tuple<double, Cycle> cases[] = {{1830, 258}, {1250, 176}, {1980, 279}};
  for (const auto& [mhz, line] : cases) {
    SCOPED_TRACE(mhz);
    DramBench bench(mhz);
    auto dram = bench.make<Hbm3Dram>({{"controller_latency_ns", 100.0}});
    RecordingClient client;
    dram->send(0, read_request(0, 1, client));
    bench.events.run();
    EXPECT_EQ(client.at(1), line);
  }
}

// ---- dram.hbm3: protocol over random traffic ---------------------------------------------------

// Checks every timing rule on a command log: the gates the scheduler must respect, from the
// commands alone.
class ProtocolChecker {
 public:
  explicit ProtocolChecker(const Hbm3Timing& t) : t_(t) {}

  std::string check(const std::vector<DramCommandRecord>& log) {
    std::map<std::uint32_t, ChannelState> channels;
    for (const DramCommandRecord& c : log) {
      ChannelState& ch = channels[c.channel];
      const MemCycle at = c.at;
      if (at < ch.last) fail(c, "out of order");
      ch.last = at;
      if (c.command == DramCommand::kRead || c.command == DramCommand::kWrite) {
        if (at <= ch.last_column) fail(c, "column bus busy");
        ch.last_column = at;
        column(c, ch);
      } else {
        if (at < ch.row_bus_free) fail(c, "row bus busy");
        ch.row_bus_free = at + (c.command == DramCommand::kActivate ? 2 : 1);
        row(c, ch);
      }
    }
    return problems_;
  }

  MemCycle min_faw_window = INT64_MAX;  ///< tightest span of five consecutive ACTs seen
  std::size_t activates = 0;

 private:
  static constexpr MemCycle kLongAgo = INT64_MIN / 4;
  struct BankState {
    bool open = false;
    std::uint64_t row = 0;
    MemCycle act = kLongAgo, pre = kLongAgo, rd = kLongAgo, wr = kLongAgo;
  };
  struct Scope {  // a pseudo-channel or a bank group
    MemCycle act = kLongAgo, rd = kLongAgo, wr = kLongAgo;
  };
  struct ChannelState {
    MemCycle last = 0, last_column = -1, row_bus_free = 0, ref = kLongAgo;
    int refreshes = 0;
    std::map<std::uint32_t, BankState> banks;
    std::map<std::uint32_t, Scope> pcs, groups;
    std::map<std::uint32_t, std::vector<MemCycle>> acts;  // per pseudo-channel
  };

  void fail(const DramCommandRecord& c, const std::string& what) {
    if (problems_.size() < 2000)
      problems_ += "ch" + std::to_string(c.channel) + " pc" + std::to_string(c.pseudo_channel) +
                   " bg" + std::to_string(c.bank_group) + " b" + std::to_string(c.bank) + " @" +
                   std::to_string(c.at) + " cmd" + std::to_string(static_cast<int>(c.command)) +
                   ": " + what + "; ";
  }
  void need(const DramCommandRecord& c, MemCycle earliest, const char* what) {
    if (c.at < earliest) fail(c, std::string(what) + " (" + std::to_string(earliest) + ")");
  }
  std::uint32_t bank_id(const DramCommandRecord& c) const {
    return (c.pseudo_channel * 64 + c.bank_group) * 64 + c.bank;
  }
  std::uint32_t group_id(const DramCommandRecord& c) const { return c.pseudo_channel * 64 + c.bank_group; }

  void column(const DramCommandRecord& c, ChannelState& ch) {
    BankState& b = ch.banks[bank_id(c)];
    Scope& pc = ch.pcs[c.pseudo_channel];
    Scope& g = ch.groups[group_id(c)];
    if (!b.open || b.row != c.row) fail(c, "column command without its row open");
    need(c, b.act + t_.nRCD, "nRCD");
    const MemCycle bus = std::max(t_.nCCDS, t_.nBL);
    if (c.command == DramCommand::kRead) {
      need(c, pc.rd + bus, "nCCDS/nBL");
      need(c, g.rd + t_.nCCDL, "nCCDL");
      need(c, pc.wr + t_.nCWL + t_.nBL + t_.nWTRS, "nWTRS");
      need(c, g.wr + t_.nCWL + t_.nBL + t_.nWTRL, "nWTRL");
      pc.rd = g.rd = b.rd = c.at;
    } else {
      need(c, pc.wr + bus, "nCCDS/nBL");
      need(c, g.wr + t_.nCCDL, "nCCDL");
      need(c, pc.rd + t_.nCL + t_.nBL + t_.nRTW - t_.nCWL, "nRTW");
      pc.wr = g.wr = b.wr = c.at;
    }
  }

  void close(const DramCommandRecord& c, BankState& b) {
    need(c, b.act + t_.nRAS, "nRAS");
    need(c, b.rd + t_.nRTP, "nRTP");
    need(c, b.wr + t_.nCWL + t_.nBL + t_.nWR, "nWR");
    b.open = false;
    b.pre = c.at;
  }

  void row(const DramCommandRecord& c, ChannelState& ch) {
    switch (c.command) {
      case DramCommand::kActivate: {
        BankState& b = ch.banks[bank_id(c)];
        Scope& pc = ch.pcs[c.pseudo_channel];
        Scope& g = ch.groups[group_id(c)];
        if (b.open) fail(c, "ACT to an open bank");
        need(c, b.act + t_.nRC, "nRC");
        need(c, b.pre + t_.nRP, "nRP");
        need(c, pc.act + t_.nRRDS, "nRRDS");
        need(c, g.act + t_.nRRDL, "nRRDL");
        need(c, ch.ref + t_.nRFC, "nRFC");
        auto& acts = ch.acts[c.pseudo_channel];
        acts.push_back(c.at);
        if (acts.size() >= 5) {
          const MemCycle span = c.at - acts[acts.size() - 5];
          min_faw_window = std::min(min_faw_window, span);
          if (span < t_.nFAW) fail(c, "five ACTs within nFAW");
        }
        ++activates;
        b.open = true;
        b.row = c.row;
        b.act = pc.act = g.act = c.at;
        break;
      }
      case DramCommand::kPrecharge: {
        BankState& b = ch.banks[bank_id(c)];
        if (!b.open) fail(c, "PRE to a closed bank");
        close(c, b);
        break;
      }
      case DramCommand::kPrechargeAll:
        for (auto& [id, b] : ch.banks)
          if (b.open) close(c, b);
        break;
      case DramCommand::kRefresh:
        for (auto& [id, b] : ch.banks) {
          if (b.open) fail(c, "REF with a bank open");
          need(c, b.pre + t_.nRP, "nRP before REF");
          need(c, b.act + t_.nRC, "nRC before REF");
        }
        ++ch.refreshes;
        if (t_.nREFI > 0) need(c, MemCycle{ch.refreshes} * t_.nREFI, "REF before it is due");
        ch.ref = c.at;
        break;
      default: break;
    }
  }

  Hbm3Timing t_;
  std::string problems_;
};

// A deterministic mix of 32 B, 64 B and 128 B reads and writes to random rows of channels 0-1
// and every bank: many ACTs, conflicts and turnarounds. Returns each request's send cycle, by
// token.
std::vector<Cycle> random_traffic(Hbm3Dram& dram, test::TestEventQueue& events, RecordingClient& client,
                                  std::uint64_t count, Cycle span) {
  std::uint64_t x = 88172645463325252ull;  // xorshift64
  auto next = [&] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  const Hbm3Organization& o = dram.organization();
  std::vector<Cycle> sent;
  for (std::uint64_t i = 0; i < count; ++i) {
    const auto pick = [&](int n) { return static_cast<std::uint32_t>(next() % static_cast<std::uint64_t>(n)); };
    const Addr a = hbm3_address(o, 0, pick(2), pick(o.pseudo_channels), pick(o.bank_groups),
                                pick(o.banks_per_group), next() % 64, pick(8)) +
                   32 * pick(4);
    const std::uint32_t bytes = 32u << pick(3);
    const MemRequest r{a - a % bytes, bytes, 0, next() % 4 == 0, false, i, &client};
    const Cycle at = next() % span;
    events.call(at, Priority::kEngine, [&dram, r](Cycle now) { dram.send(now, r); });
    sent.push_back(at);
  }
  return sent;
}

TEST(Hbm3Protocol, RandomTrafficNeverViolatesATimingRule) {
  // Refresh every 2000 cycles (nRFC 455) so refreshes land inside the traffic.
  UnitDram u({{"nREFI", std::int64_t{2000}}});
  random_traffic(*u.dram, u.bench.events, u.client, 4000, 20000);
  u.bench.events.run();
  ASSERT_EQ(u.client.responses.size(), 4000u);
  ProtocolChecker checker(u.dram->timing());
  EXPECT_EQ(checker.check(u.log.commands), "");
  // The four-activate window is a binding gate here: some five ACTs span exactly nFAW.
  EXPECT_EQ(checker.min_faw_window, 39);
  EXPECT_GT(u.bench.stats.value("dram.refreshes"), 0u);
}

TEST(Hbm3Protocol, PresetTimingOnRandomTraffic) {
  for (const Hbm3Preset& p : kHbm3Presets) {
    SCOPED_TRACE(std::string(p.name));
    DramBench bench(1830);
    auto dram = bench.make<Hbm3Dram>({{"preset", std::string(p.name)}});
    CommandLog log;
    dram->set_command_observer(&log);
    RecordingClient client;
    random_traffic(*dram, bench.events, client, 3000, 30000);
    bench.events.run();
    EXPECT_EQ(client.responses.size(), 3000u);
    ProtocolChecker checker(p.timing);
    EXPECT_EQ(checker.check(log.commands), "");
    EXPECT_EQ(checker.min_faw_window, p.timing.nFAW);
  }
}

TEST(Hbm3Protocol, CountInEqualsCountOutUnderHeavyLoad) {
  DramBench bench(1830);
  auto dram = bench.make<Hbm3Dram>({{"preset", std::string("H800_HBM3")}, {"stacks", std::int64_t{1}}});
  RecordingClient client;
  // 20000 requests within 2000 SM cycles: far beyond what two channels serve in that time.
  const std::vector<Cycle> sent = random_traffic(*dram, bench.events, client, 20000, 2000);
  bench.events.run();
  ASSERT_EQ(client.responses.size(), sent.size());
  std::vector<int> answered(sent.size(), 0);
  std::uint64_t read_bytes = 0, write_bytes = 0, reads = 0;
  for (const auto& r : client.responses) {
    ++answered[r.request.token];
    EXPECT_GT(r.at, sent[r.request.token]);
    if (r.request.write) {
      write_bytes += r.request.bytes;
    } else {
      read_bytes += r.request.bytes;
      ++reads;
    }
  }
  EXPECT_EQ(std::count(answered.begin(), answered.end(), 1), static_cast<std::ptrdiff_t>(sent.size()));
  const std::uint64_t n = sent.size();
  EXPECT_EQ(bench.stats.value("dram.reads"), reads);
  EXPECT_EQ(bench.stats.value("dram.writes"), n - reads);
  EXPECT_EQ(bench.stats.value("dram.dram_read_bytes"), read_bytes);
  EXPECT_EQ(bench.stats.value("dram.dram_write_bytes"), write_bytes);
  // Every burst is one column command with one row outcome; the requests are aligned to their
  // size, so their bytes are whole bursts.
  std::uint64_t bus = 0, outcomes = 0;
  for (std::uint32_t c = 0; c < 16; ++c) {
    const std::string p = "dram.channel[" + std::to_string(c) + "].";
    bus += bench.stats.value(p + "read_bytes") + bench.stats.value(p + "write_bytes");
    outcomes += bench.stats.value(p + "row_hits") + bench.stats.value(p + "row_misses") +
                bench.stats.value(p + "row_conflicts");
  }
  EXPECT_EQ(bus, read_bytes + write_bytes);
  EXPECT_EQ(outcomes, (read_bytes + write_bytes) / 32);
  EXPECT_TRUE(bench.events.empty());
}

// ---- dram.hbm3: bandwidth ----------------------------------------------------------------------

TEST(Hbm3Bandwidth, BankParallelStreamsReachEveryPresetsPeak) {
  for (const Hbm3Preset& p : kHbm3Presets)
    for (const char* hash : {"none", "xor"}) {
      SCOPED_TRACE(std::string(p.name) + ", address_hash " + hash);
      DramBench bench(1830);
      // Refresh off: it takes nRFC / nREFI (9-11%) of the time (the next test).
      auto dram = bench.make<Hbm3Dram>({{"preset", std::string(p.name)},
                                        {"nREFI", std::int64_t{0}},
                                        {"address_hash", std::string(hash)}});
      const auto channels = static_cast<std::uint64_t>(dram->organization().channels());
      // Consecutive 128 B lines, 64 in flight per channel, 2048 per channel in all: each channel
      // streams both pseudo-channels' data buses for about 4096 memory cycles (hashed too: any
      // 2^W aligned lines still cover each unit of the map once).
      const std::uint64_t lines = 2048 * channels;
      test::StreamClient stream(*dram, static_cast<std::uint32_t>(64 * channels), lines, 128);
      stream.start(0);
      bench.events.run();
      ASSERT_EQ(stream.received, lines);
      const double seconds = static_cast<double>(stream.last_response - stream.first_send) / 1.83e9;
      const double achieved = static_cast<double>(lines * 128) / seconds;
      EXPECT_GE(achieved, 0.95 * dram->peak_bandwidth());
      EXPECT_LE(achieved, dram->peak_bandwidth());
      dram->finish(stream.last_response);
      EXPECT_NEAR(bench.stats.evaluate("dram.achieved_bandwidth") * 1e9, achieved,
                  achieved * 1e-3 + 1);
      EXPECT_NEAR(bench.stats.evaluate("dram.channel[0].achieved_bandwidth") * 1e9,
                  achieved / static_cast<double>(channels),
                  achieved / static_cast<double>(channels) * 0.02);
    }
}

TEST(Hbm3Bandwidth, HashSpreadsAStridedStream) {
  // 128 B lines 64 KiB, 128 KiB and 1 MiB apart (rows of K = 32768 .. 524288 fp16 operands) on
  // the H200 preset, refresh off, 64 per channel in flight. Plain slicing puts them on 3 of the
  // 192 pseudo-channels: at most 3/192 = 1.6% of the peak. Hashed, each line opens a row of its
  // own (3 of its 4 bursts are row hits), so a pseudo-channel moves at most four lines (32 cycles
  // of data) per nFAW = 47 cycles, 68% of its peak; every pseudo-channel works, and the stream
  // comes within 45% of the peak.
  for (const std::uint64_t stride :
       {std::uint64_t{64} << 10, std::uint64_t{128} << 10, std::uint64_t{1} << 20})
    for (const char* hash : {"none", "xor"}) {
      SCOPED_TRACE(std::to_string(stride) + ", address_hash " + hash);
      DramBench bench(1830);
      auto dram = bench.make<Hbm3Dram>({{"preset", std::string("H200_HBM3e")},
                                        {"nREFI", std::int64_t{0}},
                                        {"address_hash", std::string(hash)}});
      const std::uint64_t lines = 96 * 256;
      test::StreamClient stream(*dram, 64 * 96, lines, 128, stride);
      stream.start(0);
      bench.events.run();
      ASSERT_EQ(stream.received, lines);
      const double seconds = static_cast<double>(stream.last_response - stream.first_send) / 1.83e9;
      const double share = static_cast<double>(lines * 128) / seconds / dram->peak_bandwidth();
      if (std::string(hash) == "none") {
        EXPECT_LE(share, 3.0 / 192);
      } else {
        EXPECT_GE(share, 0.45);
        EXPECT_LE(share, 32.0 / 47);
        EXPECT_EQ(bench.stats.value("dram.row_hits"), 3 * lines);
      }
    }
}

TEST(Hbm3Bandwidth, InterleaveKeepsAPanelsNextColumnInItsRow) {
  // The K loops of 132 CTAs each walk their own operand panel: boxes of 128 rows 64 KiB apart at
  // one 128 B column, then the next column, six boxes in flight a CTA (dram_stride.csv's `bw
  // panel` rows; test::StreamClient's box order), H200 preset, hashed, refresh off. With 128 B
  // granules a line's next column is another bank's; its row finds few other lines (3.1 of its
  // 4 bursts hit) and the four-activate window holds the stream to 75% of the peak. With 256 B
  // granules two columns share a row, its second line hits whole (3.5 hits a line), and the
  // stream reaches 90%, as the H200 streams such panels at any pitch (configs/h200.toml,
  // docs/calibration.md §22).
  for (const std::int64_t interleave : {128, 256}) {
    SCOPED_TRACE("interleave_bytes " + std::to_string(interleave));
    DramBench bench(1830);
    auto dram = bench.make<Hbm3Dram>({{"preset", std::string("H200_HBM3e")},
                                      {"nREFI", std::int64_t{0}},
                                      {"address_hash", std::string("xor")},
                                      {"interleave_bytes", interleave}});
    const std::uint64_t rows = 128, bands = 132, lines = rows * bands * 24;
    test::StreamClient stream(*dram, 6 * rows * bands, lines, 128, std::uint64_t{64} << 10, rows,
                              bands);
    stream.start(0);
    bench.events.run();
    ASSERT_EQ(stream.received, lines);
    const double seconds = static_cast<double>(stream.last_response - stream.first_send) / 1.83e9;
    const double share = static_cast<double>(lines * 128) / seconds / dram->peak_bandwidth();
    const double hits_per_line = static_cast<double>(bench.stats.value("dram.row_hits")) / lines;
    if (interleave == 128) {
      EXPECT_LT(hits_per_line, 3.25);
      EXPECT_LT(share, 0.8);
    } else {
      EXPECT_GT(hits_per_line, 3.4);
      EXPECT_GT(share, 0.85);
    }
  }
}

TEST(Hbm3Bandwidth, RefreshTakesItsShare) {
  // One H800 stack streaming 16384 lines per channel (32768 memory cycles of data, six or seven
  // refresh intervals). Around each REF the data buses idle at least nRFC (the PREA waits for
  // nRTP after the last RD, whose data is then done; the next data comes nRFC + nRCD + nCL after
  // the REF), so with R refreshes per channel in a window of T:
  //   bytes <= peak x (T - R x nRFC x tCK),
  // and the scheduler keeps within 5% of that.
  DramBench bench(1830);
  auto dram = bench.make<Hbm3Dram>({{"preset", std::string("H800_HBM3")}, {"stacks", std::int64_t{1}}});
  const std::uint64_t lines = 16384 * 16;
  test::StreamClient stream(*dram, 64 * 16, lines, 128);
  stream.start(0);
  bench.events.run();
  ASSERT_EQ(stream.received, lines);
  const double seconds = static_cast<double>(stream.last_response - stream.first_send) / 1.83e9;
  const double refreshes = static_cast<double>(bench.stats.value("dram.refreshes")) / 16;
  EXPECT_GE(refreshes, 6);
  const double blocked = refreshes * dram->timing().nRFC * dram->timing().tCK_ns * 1e-9;
  const double bound = dram->peak_bandwidth() * (seconds - blocked) / seconds;
  const double achieved = static_cast<double>(lines * 128) / seconds;
  EXPECT_LE(achieved, bound);
  EXPECT_GE(achieved, 0.95 * bound);
}

// ---- dram.hbm3: description --------------------------------------------------------------------

TEST(Hbm3Dram, Schema) {
  EXPECT_EQ(test::schema_problems<Hbm3Dram>(), "");
  DramBench bench;
  auto dram = bench.make<Hbm3Dram>({{"stacks", std::int64_t{1}}});
  std::set<std::string> declared;
  for (const std::string& name : test::declared_stats<Hbm3Dram>("dram")) {
    const auto i = name.find("[i]");
    if (i == std::string::npos) {
      declared.insert(name);
      continue;
    }
    for (int c = 0; c < 16; ++c)
      declared.insert(name.substr(0, i) + "[" + std::to_string(c) + "]" + name.substr(i + 3));
  }
  EXPECT_EQ(bench.stats.names(), declared);
}

}  // namespace
}  // namespace simfa::memory_models
