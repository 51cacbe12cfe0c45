// sm.warpgroup against the SM harness: every expected cycle is derived by hand next to its test
// from the rules of docs/core-model.md, and every scenario runs in event and reference stepping
// with identical results (run_both).
//
// Unless a test says otherwise: FixedLatencyTma completes an op 100 cycles after its issue,
// PipelineTensorCore runs one WGMMA for N/2 cycles on one pipeline with a 4-deep buffer, the
// scheduler is GtoFake, and TensorMap "A" has a 64 x 64 FP16 box (8192 bytes).
#include <gtest/gtest.h>

#include <cctype>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "sm_harness.h"
#include "wgmma_half_n.h"

namespace simfa::sm_test {
namespace {

Workload workload_of(std::vector<CtaProgram> ctas) {
  return {{tensor_map_2d("A", 0x100000, 4096, 4096, 64, 64)}, std::move(ctas)};
}

std::uint64_t stat(const RunResult& r, const std::string& name, int sm = 0) {
  const auto it = r.counters.find("sm[" + std::to_string(sm) + "]." + name);
  return it == r.counters.end() ? ~std::uint64_t{0} : it->second;
}

std::vector<Cycle> begins(const std::vector<Span>& spans) {
  std::vector<Cycle> out;
  for (const Span& s : spans) out.push_back(s.begin);
  return out;
}

TEST(SmWarpGroup, OneTileLoadMmaExit) {
  CtaBuilder cta(7);
  cta.stages(1);
  cta.warpgroup().tma_load(0, {0, 0}, 0).mb_wait(0).wgmma(64, 128, 16, 0).wgmma_wait(0).exit();
  const RunResult r = run_both(HarnessConfig{}, workload_of({cta.program()}));

  // 0    TMA_LOAD issues; the op lands at 0 + 100 = 100.
  // 1    MB_WAIT: no full phase yet -> blocked from 1.
  // 100  the completion (before the issue phase) closes phase 1 and wakes it: MB_WAIT issues.
  // 101  WGMMA (N = 128) runs 101..165 and completes at 165.
  // 102  WGMMA_WAIT 0 closes group 0, which is unfinished -> blocked from 102.
  // 165  completion wakes it: WGMMA_WAIT issues.   166  EXIT.
  EXPECT_EQ(r.outcome, Outcome::kCompleted);
  EXPECT_EQ(r.cta_exit(7), 166u);
  EXPECT_EQ(r.end, 167u);  // the last CTA retirement + 1
  // Work in flight is reported when it completes, before the wake-up it causes: the stage's
  // bytes from the TMA_LOAD's issue to their landing, the WGMMA from its issue to its completion.
  const std::vector<Span> expected = {
      {0, 7, 0, "tma_issue", 0, 1},        {0, 7, 0, "tma_flight", 0, 100},
      {0, 7, 0, "wait:mb", 1, 100},        {0, 7, 0, "wgmma", 101, 102},
      {0, 7, 0, "wgmma_flight", 101, 165}, {0, 7, 0, "wait:wgmma", 102, 165},
      {0, 7, 0, "exit", 166, 167}};
  EXPECT_EQ(r.spans, expected);
  EXPECT_EQ(stat(r, "issued_instructions"), 5u);
  EXPECT_EQ(stat(r, "issued.mb_wait"), 1u);
  EXPECT_EQ(stat(r, "stall.mb_wait"), 99u);       // 1..99
  EXPECT_EQ(stat(r, "stall.wgmma_wait"), 63u);    // 102..164
  EXPECT_EQ(stat(r, "active_cycles"), 167u);      // 0..166
  EXPECT_EQ(stat(r, "issue_idle_cycles"), 162u);  // 167 - 5 issues
  EXPECT_EQ(stat(r, "ctas_completed"), 1u);
}

TEST(SmWarpGroup, TmaOpsCarryOperandsAndThePhaseClosesOnTheLastByte) {
  CtaBuilder cta(0);
  cta.stages(1);
  cta.warpgroup()
      .tma_load(0, {64, 128}, 0)
      .tma_bulk(0x2000, 4096, 0)
      .mb_wait(0)
      .tma_store(0, {64, 128})
      .exit();
  const Workload w = workload_of({cta.program()});
  run_both(HarnessConfig{}, w);
  SmHarness h(HarnessConfig{}, w, Stepping::kEvent);
  const RunResult r = h.run();

  // 0 TMA_LOAD (8192 bytes, lands 100); 1 TMA_BULK (4096 bytes, lands 101): stage 0 expects
  // 12288 bytes. 2 MB_WAIT blocks. At 100 4096 bytes are still in flight: no phase. At 101 the
  // last bytes land, phase 1 completes, MB_WAIT issues. 102 TMA_STORE (completes at 202, on no
  // mbarrier). 103 EXIT. The run lasts until the store's completion event: end = 203.
  EXPECT_EQ(r.cta_exit(0), 103u);
  EXPECT_EQ(r.end, 203u);
  EXPECT_EQ(stat(r, "stall.mb_wait"), 99u);  // 2..100
  const auto& ops = h.tma<FixedLatencyTma>(0).issued;
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[0].op.op, Opcode::kTmaLoad);
  ASSERT_NE(ops[0].op.map, nullptr);
  EXPECT_EQ(ops[0].op.map->name, "A");
  EXPECT_EQ(ops[0].op.coords[0], 64);
  EXPECT_EQ(ops[0].op.coords[1], 128);
  EXPECT_EQ(ops[0].op.bytes, 8192u);
  EXPECT_EQ(ops[1].op.op, Opcode::kTmaBulk);
  EXPECT_EQ(ops[1].op.map, nullptr);
  EXPECT_EQ(ops[1].op.addr, 0x2000u);
  EXPECT_EQ(ops[1].op.bytes, 4096u);
  EXPECT_EQ(ops[2].op.op, Opcode::kTmaStore);
  EXPECT_EQ(ops[2].op.coords[1], 128);
  EXPECT_EQ(ops[2].op.bytes, 8192u);
  EXPECT_EQ(ops[2].at, 102u);
}

TEST(SmWarpGroup, TwoStageProducerConsumerOverEightTiles) {
  constexpr int kTiles = 8;
  CtaBuilder cta(0);
  cta.stages(2);
  WarpGroupBuilder producer = cta.warpgroup();
  WarpGroupBuilder consumer = cta.warpgroup();
  for (int i = 0; i < kTiles; ++i) {
    const auto s = static_cast<std::uint8_t>(i % 2);
    producer.acquire(s).tma_load(0, {0, 64 * i}, s);
    consumer.mb_wait(s).wgmma(64, 256, 16, static_cast<std::uint32_t>(i)).wgmma_wait(0).release(s);
  }
  producer.exit();
  consumer.exit();
  const RunResult r = run_both(HarnessConfig{}, workload_of({cta.program()}));

  // Producer P (age 0), consumer C (age 1); WGMMA N = 256 takes 128 cycles.
  //   0 P ACQUIRE s0 (C's MB_WAIT s0 blocks from 0)  1 P TMA tile 0 (lands 101)
  //   2 P ACQUIRE s1                                 3 P TMA tile 1 (lands 103)
  //   4 P ACQUIRE s0: fills 1 > empty phases 0 -> blocked from 4.
  //   101 C MB_WAIT s0   102 C WGMMA tile 0 (done 230)   103 C WGMMA_WAIT blocks
  //   230 C WGMMA_WAIT   231 C RELEASE s0: round complete, wakes P for the next cycle (232).
  //   232 both ready: GTO keeps C (MB_WAIT s1)   233 C WGMMA tile 1
  //   234 C WGMMA_WAIT blocks; P ACQUIRE s0   235 P TMA tile 2 (lands 335)   236 P blocks on s1.
  // From then on a tile takes 131 cycles: WGMMA (1) + wait for its 128-cycle completion (127)
  // + WGMMA_WAIT, RELEASE, MB_WAIT (3); tile i's WGMMA issues at 102 + 131 i. Each load is
  // issued 2 cycles after the WGMMA two tiles earlier and lands 100 later, well before use.
  std::vector<Cycle> wgmma_at;
  for (int i = 0; i < kTiles; ++i) wgmma_at.push_back(102 + 131 * static_cast<Cycle>(i));
  EXPECT_EQ(begins(r.spans_of(0, 1, "wgmma")), wgmma_at);
  // P loads tile 7 after the release of tile 5 (757 + 129 = 886): ACQUIRE 889, TMA 890, EXIT
  // 891. C: tile 7's WGMMA at 1019 completes at 1147; WGMMA_WAIT 1147, RELEASE 1148, EXIT 1149.
  EXPECT_EQ(r.spans_of(0, 0, "exit").at(0).begin, 891u);
  EXPECT_EQ(r.cta_exit(0), 1149u);
  EXPECT_EQ(stat(r, "issued_instructions"), 50u);  // 8 x 2 + 1 and 8 x 4 + 1
  EXPECT_EQ(stat(r, "issued.tma_load"), 8u);
  EXPECT_EQ(stat(r, "issued.release_stage"), 8u);
  EXPECT_EQ(stat(r, "stall.mb_wait"), 101u);  // C: only the first tile, 0..100
  EXPECT_EQ(stat(r, "stall.wgmma_wait"), 8u * 127u);
  // P: 4..231 for tile 2, then 127 cycles for each of tiles 3..7.
  EXPECT_EQ(stat(r, "stall.acquire_stage"), 228u + 5u * 127u);
  EXPECT_EQ(stat(r, "active_cycles"), 1150u);
  EXPECT_EQ(stat(r, "issue_idle_cycles"), 1100u);
}

TEST(SmWarpGroup, Fa3PingPongWithNamedBarriers) {
  // Two consumers take turns on the tensor core: WG0 signals barrier 1 once its GEMM is issued,
  // WG1 waits on it before its own and signals barrier 0 back (FA3's warp-scheduler barriers).
  CtaBuilder cta(0);
  cta.warpgroup()
      .bubble(20)  // prologue
      .wgmma(64, 256, 16, 0)
      .commit(0)
      .bar_arrive(1)
      .wgmma_wait(0)
      .bubble(10)
      .bar_wait(0)
      .wgmma(64, 256, 16, 1)
      .commit(1)
      .bar_arrive(1)
      .wgmma_wait(0)
      .bubble(10)
      .exit();
  cta.warpgroup()
      .bar_wait(1)
      .wgmma(64, 256, 16, 0)
      .commit(0)
      .bar_arrive(0)
      .wgmma_wait(0)
      .bubble(10)
      .bar_wait(1)
      .wgmma(64, 256, 16, 1)
      .commit(1)
      .bar_arrive(0)
      .wgmma_wait(0)
      .bubble(10)
      .exit();
  const RunResult r = run_both(HarnessConfig{}, workload_of({cta.program()}));

  //   0 WG0 BUBBLE 20 (GTO: the oldest)   1 WG1 BAR_WAIT 1: 1 of 2 arrived -> blocked from 2
  //   20 WG0 WGMMA (tensor core 20..148)   21 COMMIT   22 BAR_ARRIVE 1 completes the barrier:
  //   WG1 wakes for 23 (barrier stall 2..22 = 21)
  //   23 WG0 WGMMA_WAIT blocks; WG1 WGMMA (queued behind: 148..276)   24 COMMIT
  //   25 BAR_ARRIVE 0 (1 of 2)   26 WGMMA_WAIT blocks
  //   148 WG0 WGMMA_WAIT (stall 23..147 = 125)   149 BUBBLE 10   159 BAR_WAIT 0 completes it
  //   160 WGMMA (276..404)   161 COMMIT   162 BAR_ARRIVE 1   163 WGMMA_WAIT blocks
  //   276 WG1 WGMMA_WAIT (stall 250)   277 BUBBLE   287 BAR_WAIT 1 completes it
  //   288 WGMMA (404..532)   289 COMMIT   290 BAR_ARRIVE 0   291 WGMMA_WAIT blocks
  //   404 WG0 WGMMA_WAIT (stall 241)   405 BUBBLE   415 EXIT
  //   532 WG1 WGMMA_WAIT (stall 241)   533 BUBBLE   543 EXIT
  EXPECT_EQ(begins(r.spans_of(0, 0, "wgmma")), (std::vector<Cycle>{20, 160}));
  EXPECT_EQ(begins(r.spans_of(0, 1, "wgmma")), (std::vector<Cycle>{23, 288}));
  EXPECT_EQ(r.spans_of(0, 1, "wait:barrier").at(0), (Span{0, 0, 1, "wait:barrier", 2, 23}));
  EXPECT_EQ(r.spans_of(0, 0, "exit").at(0).begin, 415u);
  EXPECT_EQ(r.cta_exit(0), 543u);
  EXPECT_EQ(stat(r, "stall.barrier"), 21u);
  EXPECT_EQ(stat(r, "stall.wgmma_wait"), 125u + 241u + 250u + 241u);
  EXPECT_EQ(stat(r, "bubble_cycles"), 20u + 4u * 10u);
  EXPECT_EQ(stat(r, "issued_instructions"), 26u);
}

// One WarpGroup, two stages, four tiles: tile i+1 is loaded into the stage of tile i-1 once
// WGMMA_WAIT `wait` has retired enough groups.
CtaProgram single_warpgroup_pipeline(std::uint32_t wait) {
  CtaBuilder cta(0);
  cta.stages(2);
  WarpGroupBuilder w = cta.warpgroup();
  w.tma_load(0, {0, 0}, 0).tma_load(0, {0, 64}, 1);
  for (int i = 0; i < 4; ++i) {
    const auto s = static_cast<std::uint8_t>(i % 2);
    const auto gid = static_cast<std::uint32_t>(i);
    w.mb_wait(s).wgmma(64, 256, 16, gid).commit(gid).wgmma_wait(wait);
    if (i >= 1 && i + 1 < 4)
      w.tma_load(0, {0, 64 * (i + 1)}, static_cast<std::uint8_t>((i + 1) % 2));
  }
  w.wgmma_wait(0).exit();
  return cta.program();
}

TEST(SmWarpGroup, WgmmaWaitOneOverlapsTheNextLoad) {
  const RunResult r = run_both(HarnessConfig{}, workload_of({single_warpgroup_pipeline(1)}));
  //   0, 1 TMA tiles 0, 1 (land 100, 101)   2 MB_WAIT s0 blocks   100 MB_WAIT
  //   101 WGMMA g0 (101..229)   102 COMMIT   103 WGMMA_WAIT 1: one unfinished group -> issues
  //   104 MB_WAIT s1   105 WGMMA g1 (229..357)   106 COMMIT   107 WGMMA_WAIT 1 blocks (2)
  //   229 g0 done: WGMMA_WAIT   230 TMA tile 2 -> s0 (lands 330), overlapping g1
  //   231 MB_WAIT s0 blocks   330 MB_WAIT   331 WGMMA g2 (357..485)   332 COMMIT
  //   333 WGMMA_WAIT 1 blocks   357 g1 done: WGMMA_WAIT   358 TMA tile 3 -> s1 (lands 458)
  //   359 MB_WAIT s1 blocks   458 MB_WAIT   459 WGMMA g3 (485..613)   460 COMMIT
  //   461 WGMMA_WAIT 1 blocks   485 WGMMA_WAIT   486 WGMMA_WAIT 0 blocks   613 WGMMA_WAIT
  //   614 EXIT
  EXPECT_EQ(begins(r.spans_of(0, 0, "wgmma")), (std::vector<Cycle>{101, 105, 331, 459}));
  EXPECT_EQ(r.cta_exit(0), 614u);
  EXPECT_EQ(stat(r, "stall.mb_wait"), 98u + 99u + 99u);
  EXPECT_EQ(stat(r, "stall.wgmma_wait"), 122u + 24u + 24u + 127u);
  EXPECT_EQ(stat(r, "issued_instructions"), 22u);
}

TEST(SmWarpGroup, WgmmaWaitZeroSerializesLoadAndMma) {
  const RunResult r = run_both(HarnessConfig{}, workload_of({single_warpgroup_pipeline(0)}));
  //   0, 1 TMA   2 MB_WAIT blocks   100 MB_WAIT   101 WGMMA g0 (101..229)   102 COMMIT
  //   103 WGMMA_WAIT 0 blocks   229 WAIT   230 MB_WAIT s1   231 WGMMA g1 (231..359)
  //   232 COMMIT   233 blocks   359 WAIT   360 TMA tile 2 (lands 460)   361 MB_WAIT blocks
  //   460 MB_WAIT   461 WGMMA g2 (461..589)   462 COMMIT   463 blocks   589 WAIT
  //   590 TMA tile 3 (lands 690)   591 blocks   690 MB_WAIT   691 WGMMA g3 (691..819)
  //   692 COMMIT   693 blocks   819 WAIT   820 WGMMA_WAIT 0: nothing unfinished   821 EXIT
  EXPECT_EQ(begins(r.spans_of(0, 0, "wgmma")), (std::vector<Cycle>{101, 231, 461, 691}));
  EXPECT_EQ(r.cta_exit(0), 821u);
  EXPECT_EQ(stat(r, "stall.mb_wait"), 98u + 99u + 99u);
  EXPECT_EQ(stat(r, "stall.wgmma_wait"), 4u * 126u);
}

TEST(SmWarpGroup, SecondCtaWaitsForSharedMemory) {
  HarnessConfig config;
  config.gpu.smem_per_sm_bytes = 100 * 1024;
  std::vector<CtaProgram> ctas;
  for (std::uint64_t id = 0; id < 2; ++id) {
    CtaBuilder cta(id);
    cta.smem(64 * 1024);
    cta.warpgroup().bubble(50).exit();
    ctas.push_back(cta.program());
  }
  const RunResult r = run_both(config, workload_of(ctas));

  // 0: CTA 0 is placed; CTA 1 (64 + 64 KiB > 100 KiB) waits. CTA 0: BUBBLE 0..49, EXIT 50.
  // Its exit frees the shared memory and the dispatcher places CTA 1 in cycle 50, after SM 0's
  // issue phase of 50: CTA 1 issues from 51 (BUBBLE 51..100, EXIT 101).
  EXPECT_EQ(r.dispatches, (std::vector<Dispatch>{{0, 0, 0}, {1, 0, 50}}));
  EXPECT_EQ(r.exits, (std::vector<std::pair<int, Cycle>>{{0, 50}, {0, 101}}));
  EXPECT_EQ(r.spans_of(1, 0, "bubble").at(0), (Span{0, 1, 0, "bubble", 51, 101}));
  EXPECT_EQ(stat(r, "ctas_completed"), 2u);
  EXPECT_EQ(stat(r, "active_cycles"), 102u);  // 0..101: cycle 50 counted once
}

TEST(SmWarpGroup, CtaPlacedOnALaterSmIssuesInTheSameCycle) {
  // SM 0's exit at cycle 10 places CTA 2 on SM 0 and CTA 3 on SM 1 within SM 0's issue phase.
  // SM 1's phase of cycle 10 has not run yet, so CTA 3 issues at 10; CTA 2 on SM 0 at 11.
  HarnessConfig config;
  config.gpu.sm_count = 2;
  config.gpu.smem_per_sm_bytes = 100 * 1024;
  const std::int64_t smem_kib[] = {80, 80, 90, 20};
  const std::uint32_t bubble[] = {10, 100, 5, 7};
  std::vector<CtaProgram> ctas;
  for (std::uint64_t id = 0; id < 4; ++id) {
    CtaBuilder cta(id);
    cta.smem(smem_kib[id] * 1024);
    cta.warpgroup().bubble(bubble[id]).exit();
    ctas.push_back(cta.program());
  }
  const RunResult r = run_both(config, workload_of(ctas));
  // 0: CTA 0 -> SM 0, CTA 1 -> SM 1 (80 + 80 > 100), CTA 2 fits nowhere; CTA 3 waits behind it.
  // 10: CTA 0 exits; CTA 2 -> SM 0 (90 KiB), CTA 3 -> SM 1 (80 + 20 KiB).
  // CTA 3: BUBBLE 10..16, EXIT 17. CTA 2: BUBBLE 11..15, EXIT 16. CTA 1: EXIT 100.
  EXPECT_EQ(r.dispatches, (std::vector<Dispatch>{{0, 0, 0}, {1, 1, 0}, {2, 0, 10}, {3, 1, 10}}));
  EXPECT_EQ(r.cta_exit(2), 16u);
  EXPECT_EQ(r.cta_exit(3), 17u);
  EXPECT_EQ(r.cta_exit(1), 100u);
}

TEST(SmWarpGroup, TensorCoreBufferFullStallsIssue) {
  HarnessConfig config;
  config.tensor_core_depth = 2;
  CtaBuilder cta(0);
  cta.warpgroup()
      .wgmma(64, 64, 16, 0)
      .wgmma(64, 64, 16, 0)
      .wgmma(64, 64, 16, 0)
      .wgmma(64, 64, 16, 0)
      .wgmma_wait(0)
      .exit();
  const RunResult r = run_both(config, workload_of({cta.program()}));

  // N = 64: 32 cycles each. 0 a (0..32)  1 b (32..64)  2 c refused: buffer full -> blocked.
  // 32 a completes, the slot-free wakes it: c issues (64..96)   33 d refused -> blocked.
  // 64 b completes: d issues (96..128)   65 WGMMA_WAIT 0 blocks   128 WAIT   129 EXIT.
  EXPECT_EQ(begins(r.spans_of(0, 0, "wgmma")), (std::vector<Cycle>{0, 1, 32, 64}));
  const std::vector<Span> full = {{0, 0, 0, "wait:tensor_core", 2, 32},
                                  {0, 0, 0, "wait:tensor_core", 33, 64}};
  EXPECT_EQ(r.spans_of(0, 0, "wait:tensor_core"), full);
  EXPECT_EQ(stat(r, "stall.tensor_core_full"), 30u + 31u);
  EXPECT_EQ(stat(r, "stall.wgmma_wait"), 63u);
  EXPECT_EQ(r.cta_exit(0), 129u);
}

TEST(SmWarpGroup, DeadlockReportNamesTheStageAndPhase) {
  CtaBuilder cta(42);
  cta.stages(2);
  cta.warpgroup().acquire(0).tma_load(0, {0, 0}, 0).exit();
  cta.warpgroup().mb_wait(0).release(0).mb_wait(1).exit();  // nobody fills stage 1
  const RunResult r = run_both(HarnessConfig{}, workload_of({cta.program()}));

  // 0 producer ACQUIRE (consumer's MB_WAIT 0 blocks)  1 TMA (lands 101)  2 producer EXIT
  // 101 MB_WAIT 0   102 RELEASE 0   103 MB_WAIT 1 blocks for good; no event is left.
  EXPECT_EQ(r.outcome, Outcome::kDeadlock);
  ASSERT_EQ(r.blocked.size(), 1u);
  const BlockedThread& b = r.blocked[0];
  EXPECT_EQ(b.sm, 0);
  EXPECT_EQ(b.cta, 42u);
  EXPECT_EQ(b.warpgroup, 1);
  EXPECT_EQ(b.pc, 2u);
  EXPECT_EQ(b.instruction, "MB_WAIT 1");
  EXPECT_EQ(b.waiting_for, "stage 1 full phase 1 (completed 0, 0 bytes in flight)");
}

TEST(SmWarpGroup, WatchdogReportsEveryKindOfWait) {
  HarnessConfig config;
  config.tensor_core_depth = 1;
  config.max_cycles = 50;
  CtaBuilder cta(3);
  cta.stages(1);
  cta.warpgroup().acquire(0).acquire(0).exit();
  cta.warpgroup().bar_wait(3).exit();
  cta.warpgroup().wgmma(64, 256, 16, 5).wgmma_wait(0).exit();
  cta.warpgroup().wgmma(64, 176, 16, 3).exit();
  cta.warpgroup().mb_wait(0).exit();
  const RunResult r = run_both(config, workload_of({cta.program()}));

  // 0 WG0 ACQUIRE (WG4's MB_WAIT blocks)   1 WG0's second ACQUIRE blocks; WG1 BAR_WAIT 3
  // (1 of 2, blocked from 2)   2 WG2 WGMMA (buffer now full, completes at 130)
  // 3 WG2's WGMMA_WAIT and WG3's WGMMA block. The watchdog stops the run at 50.
  EXPECT_EQ(r.outcome, Outcome::kWatchdog);
  ASSERT_EQ(r.blocked.size(), 5u);
  auto line = [](const BlockedThread& b) {
    return std::to_string(b.warpgroup) + " @" + std::to_string(b.pc) + " " + b.instruction + ": " +
           b.waiting_for;
  };
  EXPECT_EQ(line(r.blocked[0]),
            "0 @1 ACQUIRE_STAGE 0: stage 0 released (fills 1, empty phases 0, 0 of 1 releases "
            "this round)");
  EXPECT_EQ(line(r.blocked[1]), "1 @0 BAR_WAIT 3: barrier 3 generation 1 (1 of 2 arrived)");
  EXPECT_EQ(line(r.blocked[2]), "2 @1 WGMMA_WAIT 0: at most 0 wgmma groups outstanding (1 now)");
  EXPECT_EQ(line(r.blocked[3]), "3 @0 WGMMA 64 176 16 gid 3: tensor core buffer slot");
  EXPECT_EQ(line(r.blocked[4]),
            "4 @0 MB_WAIT 0: stage 0 full phase 1 (completed 0, 0 bytes in flight)");
  // Stalls run to the watchdog's limit.
  EXPECT_EQ(stat(r, "stall.acquire_stage"), 49u);
  EXPECT_EQ(stat(r, "stall.barrier"), 48u);
  EXPECT_EQ(stat(r, "stall.wgmma_wait"), 47u);
  EXPECT_EQ(stat(r, "stall.tensor_core_full"), 47u);
  EXPECT_EQ(stat(r, "stall.mb_wait"), 50u);
}

// WG0: BUBBLE 3, three 1-cycle instructions, EXIT. WG1: six 1-cycle instructions, EXIT.
Workload policy_workload() {
  CtaBuilder cta(0);
  cta.warpgroup().bubble(3).commit(0).commit(0).commit(0).exit();
  cta.warpgroup().commit(0).commit(0).commit(0).commit(0).commit(0).commit(0).exit();
  return workload_of({cta.program()});
}

TEST(SmWarpGroup, GtoKeepsIssuingTheSameWarpGroup) {
  const RunResult r = run_both(HarnessConfig{}, policy_workload());
  // 0 WG0 BUBBLE (oldest). 1..7 WG1, kept by GTO even once WG0 is ready again at 3 (EXIT at 7).
  // 8..11 WG0 (EXIT at 11).
  EXPECT_EQ(r.spans_of(0, 0, "exit").at(0).begin, 11u);
  EXPECT_EQ(r.spans_of(0, 1, "exit").at(0).begin, 7u);

  SmHarness h(HarnessConfig{}, policy_workload(), Stepping::kEvent);
  h.run();
  std::vector<std::uint32_t> slots;
  for (const IssueCandidate& c : h.scheduler<GtoFake>(0).picks) slots.push_back(c.slot);
  EXPECT_EQ(slots, (std::vector<std::uint32_t>{0, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0}));
}

TEST(SmWarpGroup, OldestFirstReturnsToTheOlderWarpGroup) {
  HarnessConfig config;
  config.scheduler.make = [](const BuildContext&) -> std::unique_ptr<WarpSchedulerPolicy> {
    return std::make_unique<OldestFirstFake>();
  };
  const RunResult r = run_both(config, policy_workload());
  // 0 WG0 BUBBLE   1, 2 WG1   3..6 WG0 (EXIT at 6)   7..11 WG1's last four and EXIT.
  EXPECT_EQ(r.spans_of(0, 0, "exit").at(0).begin, 6u);
  EXPECT_EQ(r.spans_of(0, 1, "exit").at(0).begin, 11u);
}

TEST(SmWarpGroup, AdmissionChecksEveryLimit) {
  HarnessConfig config;
  config.gpu.max_ctas_per_sm = 2;
  config.gpu.max_warpgroups_per_sm = 3;
  config.gpu.smem_per_sm_bytes = 100;
  config.gpu.regs_per_sm = 1000;
  SmHarness h(config, workload_of({}), Stepping::kEvent);
  SmCore& sm = h.sm(0);
  auto cta = [](std::uint64_t id, int warpgroups, std::int64_t smem, std::uint32_t regs) {
    CtaBuilder b(id);
    b.smem(smem);
    for (int i = 0; i < warpgroups; ++i) b.warpgroup(regs).exit();
    return b.program();
  };

  EXPECT_TRUE(sm.can_accept(cta(0, 3, 100, 300)));
  sm.accept(0, std::make_unique<CtaProgram>(cta(0, 1, 40, 400)));
  EXPECT_EQ(sm.resident_ctas(), 1u);
  EXPECT_FALSE(sm.can_accept(cta(1, 3, 10, 100)));  // WarpGroup slots: 1 + 3 > 3
  EXPECT_FALSE(sm.can_accept(cta(1, 1, 61, 100)));  // shared memory: 40 + 61 > 100
  EXPECT_FALSE(sm.can_accept(cta(1, 2, 10, 301)));  // registers: 400 + 602 > 1000
  EXPECT_TRUE(sm.can_accept(cta(1, 2, 60, 300)));
  sm.accept(0, std::make_unique<CtaProgram>(cta(1, 1, 10, 10)));
  EXPECT_FALSE(sm.can_accept(cta(2, 1, 0, 0)));  // CTA slots: 2 of 2

  std::string why;
  EXPECT_TRUE(sm.fits_empty(cta(3, 3, 100, 333), why));
  EXPECT_EQ(why, "");
  EXPECT_FALSE(sm.fits_empty(cta(3, 4, 101, 300), why));
  EXPECT_EQ(why,
            "4 WarpGroups exceed gpu.max_warpgroups_per_sm = 3; 101 bytes of shared memory exceed "
            "gpu.smem_per_sm = 100; 1200 registers exceed gpu.regs_per_sm = 1000");
}

// Compute BUBBLEs share the SM's pipes (defaults: FP32 128, ALU 64, SFU 16, dispatch 128
// elements a cycle). WG0 and WG1 each ask for 1024 SFU elements (64 cycles) and 2048 FP32
// (16 cycles, overlapping its own SFU work; dispatch 3072 / 128 = 24).
//   WG0 issues at 0: SFU [0, 64), FP32 [0, 16), dispatch [0, 24) -> ready at 64.
//   WG1 issues at 1: SFU [64, 128), FP32 [16, 32), dispatch [24, 48) -> ready at 128.
// Then WG0 a latency-bound phase: 100 cycles for 64 ALU elements (1 cycle): ready at 164.
TEST(SmWarpGroup, ComputeBubblesShareTheSmPipes) {
  CtaBuilder cta(0);
  cta.warpgroup().compute(0, {2048, 0, 1024}).compute(100, {0, 64, 0}).exit();
  cta.warpgroup().compute(0, {2048, 0, 1024}).exit();
  const RunResult r = run_both(HarnessConfig{}, workload_of({cta.program()}));
  EXPECT_EQ(r.spans_of(0, 0, "bubble"),
            (std::vector<Span>{{0, 0, 0, "bubble", 0, 64}, {0, 0, 0, "bubble", 64, 164}}));
  EXPECT_EQ(r.spans_of(0, 1, "bubble"), (std::vector<Span>{{0, 0, 1, "bubble", 1, 128}}));
  EXPECT_EQ(stat(r, "sfu_pipe_busy_cycles"), 128u);
  EXPECT_EQ(stat(r, "fp32_pipe_busy_cycles"), 32u);
  EXPECT_EQ(stat(r, "alu_pipe_busy_cycles"), 1u);
  EXPECT_EQ(stat(r, "dispatch_busy_cycles"), 49u);
  EXPECT_EQ(stat(r, "bubble_cycles"), 64u + 100u + 127u);
}

// The same programs with pipe_sharing = "fair": BUBBLEs on one pipe share it equally, as warps
// interleave their instructions. At cycle 1 WG0 has 63 SFU cycles left and WG1 brings 64: both
// at half rate, WG0 is done at 1 + 2 x 63 = 127 and WG1 one cycle later (FP32: 31 and 32;
// dispatch: 47 and 48). WG0's BUBBLE, issued to end at 64, now ends at 127; its latency-bound
// phase runs [127, 227). The pipes are reserved for as many cycles as with fifo.
TEST(SmWarpGroup, FairPipesShareAmongTheBubblesUsingThem) {
  HarnessConfig config;
  config.sm =
      plugin_slot<SmCore, sm_warpgroup::WarpGroupSm>({{"pipe_sharing", std::string("fair")}});
  CtaBuilder cta(0);
  cta.warpgroup().compute(0, {2048, 0, 1024}).compute(100, {0, 64, 0}).exit();
  cta.warpgroup().compute(0, {2048, 0, 1024}).exit();
  const RunResult r = run_both(config, workload_of({cta.program()}));
  EXPECT_EQ(r.spans_of(0, 0, "bubble"),
            (std::vector<Span>{{0, 0, 0, "bubble", 0, 127}, {0, 0, 0, "bubble", 127, 227}}));
  EXPECT_EQ(r.spans_of(0, 1, "bubble"), (std::vector<Span>{{0, 0, 1, "bubble", 1, 128}}));
  EXPECT_EQ(stat(r, "sfu_pipe_busy_cycles"), 128u);
  EXPECT_EQ(stat(r, "dispatch_busy_cycles"), 49u);
  EXPECT_EQ(stat(r, "bubble_cycles"), 127u + 100u + 127u);
}

// One CTA: WarpGroup 0 issues four m64n128k16 and waits for them, WarpGroup 1 runs `beside` as a
// compute BUBBLE.
Workload wgmmas_beside(const ComputeWork& beside) {
  CtaBuilder cta(0);
  WarpGroupBuilder mma = cta.warpgroup();
  for (int i = 0; i < 4; ++i) mma.wgmma(64, 128, 16, 0);
  mma.commit(0).wgmma_wait(0).exit();
  cta.warpgroup().compute(0, beside).exit();
  return workload_of({cta.program()});
}

// The SM tells its tensor core how much of the FP32 pipe each compute BUBBLE holds (its FP32
// cycles over its length); with wgmma.half_n's fp32_share the WGMMAs beside FP32 work slow down.
// WG0 issues four m64n128k16 WGMMAs (256 pipeline cycles) and waits; WG1's BUBBLE holds the whole
// FP32 pipe for 16384 / 128 = 128 cycles, stopping the pipeline for as long. ALU work does not.
TEST(SmWarpGroup, Fp32WorkBesideTheTensorCoreSlowsItsWgmmas) {
  auto run = [](double share, ComputeWork beside) {
    HarnessConfig config;
    config.sm =
        plugin_slot<SmCore, sm_warpgroup::WarpGroupSm>({{"pipe_sharing", std::string("fair")}});
    config.tensor_core =
        plugin_slot<TensorCoreEngine, engines::WgmmaHalfN>({{"fp32_share", share}});
    return run_both(config, wgmmas_beside(beside));
  };
  const ComputeWork fp32{16384, 0, 0}, alu{0, 8192, 0};
  const RunResult alone = run(0.0, fp32), coupled = run(0.87, fp32), alu_beside = run(0.87, alu);
  EXPECT_EQ(coupled.cta_exit(0), alone.cta_exit(0) + 128);
  EXPECT_EQ(alu_beside.cta_exit(0), alone.cta_exit(0));
  EXPECT_EQ(coupled.counters.at("sm[0].tensor_core.fp32_delay_cycles"), 128u);
  // The FP32 work itself is not slowed.
  EXPECT_EQ(coupled.spans_of(0, 1, "bubble"), alone.spans_of(0, 1, "bubble"));
}

// sfu_rate_beside_wgmma (and alu_, fp32_): a pipe runs at that fraction of its rate while the
// tensor core executes the WGMMAs issued before the BUBBLE. WG0 issues four m64n128k16 (the
// pipeline busy [0, 256)) and waits; WG1's 4096 MUFU elements (256 cycles alone) start at s: at
// half rate until 256 they serve (256 - s) / 2, the rest at full rate, so the BUBBLE lasts
// (256 - s) + 256 - (256 - s) / 2. A rate of 1 leaves it as it was; ALU work keeps its own rate.
TEST(SmWarpGroup, PipesBesideARunningTensorCoreRunAtTheirRate) {
  auto run = [](double sfu_rate, ComputeWork beside) {
    HarnessConfig config;
    config.sm = plugin_slot<SmCore, sm_warpgroup::WarpGroupSm>(
        {{"pipe_sharing", std::string("fair")}, {"sfu_rate_beside_wgmma", sfu_rate}});
    config.tensor_core = plugin_slot<TensorCoreEngine, engines::WgmmaHalfN>({});
    return run_both(config, wgmmas_beside(beside));
  };
  const ComputeWork sfu{0, 0, 4096}, alu{0, 16384, 0};
  const RunResult alone = run(1.0, sfu), slowed = run(0.5, sfu);
  const std::vector<Span> spans = alone.spans_of(0, 1, "bubble");
  ASSERT_EQ(spans.size(), 1u);
  const Cycle s = spans[0].begin;
  ASSERT_LT(s, 256u);
  EXPECT_EQ(spans[0].end, s + 256);
  const std::vector<Span> stretched = slowed.spans_of(0, 1, "bubble");
  ASSERT_EQ(stretched.size(), 1u);
  EXPECT_EQ(stretched[0].begin, s);
  EXPECT_EQ(stretched[0].end, 256 + 256 - (256 - s) / 2);
  EXPECT_EQ(stat(slowed, "sfu_pipe_busy_cycles"), 256u);  // the pipe's work at its full rate
  // The WGMMAs are not slowed: WG0 is done as before.
  EXPECT_EQ(slowed.spans_of(0, 0, "wgmma"), alone.spans_of(0, 0, "wgmma"));
  EXPECT_EQ(run(0.5, alu).spans_of(0, 1, "bubble"), run(1.0, alu).spans_of(0, 1, "bubble"));
}

// With fair pipes the WGMMAs issued after a BUBBLE began slow it too. WG0's 4096 MUFU elements
// start at b; WG1 then issues four m64n128k16 from cycle f on, each before the pipeline is done
// with the last, so the pipe runs at half rate from f to f + 256: by then it has served
// (f - b) + 128, and the rest at full rate ends the BUBBLE at f + 256 + 128 - (f - b) = b + 384.
TEST(SmWarpGroup, FairPipesSlowBesideWgmmasIssuedAfterTheBubbleBegan) {
  HarnessConfig config;
  config.sm = plugin_slot<SmCore, sm_warpgroup::WarpGroupSm>(
      {{"pipe_sharing", std::string("fair")}, {"sfu_rate_beside_wgmma", 0.5}});
  config.tensor_core = plugin_slot<TensorCoreEngine, engines::WgmmaHalfN>({});
  CtaBuilder cta(0);
  cta.warpgroup().compute(0, {0, 0, 4096}).exit();
  WarpGroupBuilder mma = cta.warpgroup();
  for (int i = 0; i < 4; ++i) mma.wgmma(64, 128, 16, 0);
  mma.commit(0).wgmma_wait(0).exit();
  const RunResult r = run_both(config, workload_of({cta.program()}));
  const std::vector<Span> bubble = r.spans_of(0, 0, "bubble");
  ASSERT_EQ(bubble.size(), 1u);
  const std::vector<Span> wgmmas = r.spans_of(0, 1, "wgmma");
  ASSERT_EQ(wgmmas.size(), 4u);
  ASSERT_GT(wgmmas[0].begin, bubble[0].begin);
  ASSERT_LT(wgmmas[3].begin, wgmmas[0].begin + 64);
  EXPECT_EQ(bubble[0].end, bubble[0].begin + 384);
}

// A short BUBBLE beside a long one is done after twice its own work, not after the long one.
TEST(SmWarpGroup, FairPipesFinishAShortBubbleFirst) {
  HarnessConfig config;
  config.sm =
      plugin_slot<SmCore, sm_warpgroup::WarpGroupSm>({{"pipe_sharing", std::string("fair")}});
  CtaBuilder cta(0);
  cta.warpgroup().compute(0, {0, 0, 1600}).exit();  // 100 SFU cycles
  cta.warpgroup().compute(0, {0, 0, 160}).exit();   // 10, issued at 1
  const RunResult r = run_both(config, workload_of({cta.program()}));
  // WG1 at half rate from 1: 1 + 2 x 10 = 21. WG0 served 1 + 10 by then: 89 left, alone: 110.
  EXPECT_EQ(r.spans_of(0, 1, "bubble"), (std::vector<Span>{{0, 0, 1, "bubble", 1, 21}}));
  EXPECT_EQ(r.spans_of(0, 0, "bubble"), (std::vector<Span>{{0, 0, 0, "bubble", 0, 110}}));
}

// exit_waits_for_stores: a CTA retires when its TMA stores have completed, not at its EXIT.
// One CTA slot, two CTAs of TMA_STORE; EXIT. CTA 0 stores at 0 (completes at 100) and exits at
// 1, but its slot frees at 100, when the host places CTA 1: its store at 100 completes at 200.
// Without the option the slots free at the EXITs (1 and 3) and the stores finish on their own.
TEST(SmWarpGroup, ExitWaitsForTheCtasStores) {
  auto programs = [] {
    std::vector<CtaProgram> ctas;
    for (std::uint64_t id = 0; id < 2; ++id) {
      CtaBuilder cta(id);
      cta.warpgroup().tma_store(0, {0, 0}).exit();
      ctas.push_back(cta.program());
    }
    return workload_of(ctas);
  };
  HarnessConfig config;
  config.gpu.max_ctas_per_sm = 1;
  const RunResult plain = run_both(config, programs());
  EXPECT_EQ(plain.exits, (std::vector<std::pair<int, Cycle>>{{0, 1}, {0, 3}}));

  config.sm = plugin_slot<SmCore, sm_warpgroup::WarpGroupSm>({{"exit_waits_for_stores", true}});
  const RunResult r = run_both(config, programs());
  EXPECT_EQ(r.cta_exit(0), 1u);
  EXPECT_EQ(r.exits, (std::vector<std::pair<int, Cycle>>{{0, 100}, {0, 200}}));
  EXPECT_EQ(r.cta_exit(1), 101u);
  EXPECT_EQ(stat(r, "store_drain_cycles"), 99u + 99u);
  EXPECT_EQ(stat(r, "ctas_completed"), 2u);
}

// cta_launch_cycles 20: one CTA slot, two CTAs of BUBBLE 10; EXIT. CTA 0 starts at once (the
// grid's first) and exits at 10; CTA 1, placed in its slot at 10, issues from 10 + 20 and exits at
// 40. Without the option it issues from the next cycle: exits at 10 and 21.
TEST(SmWarpGroup, ACtaInARetiredOnesPlaceStartsAfterItsLaunch) {
  auto programs = [] {
    std::vector<CtaProgram> ctas;
    for (std::uint64_t id = 0; id < 2; ++id) {
      CtaBuilder cta(id);
      cta.warpgroup().bubble(10).exit();
      ctas.push_back(cta.program());
    }
    return workload_of(ctas);
  };
  HarnessConfig config;
  config.gpu.max_ctas_per_sm = 1;
  const RunResult plain = run_both(config, programs());
  EXPECT_EQ(plain.cta_exit(0), 10u);
  EXPECT_EQ(plain.cta_exit(1), 21u);

  config.sm =
      plugin_slot<SmCore, sm_warpgroup::WarpGroupSm>({{"cta_launch_cycles", std::int64_t{20}}});
  const RunResult r = run_both(config, programs());
  EXPECT_EQ(begins(r.spans_of(0, 0, "bubble")), (std::vector<Cycle>{0}));
  EXPECT_EQ(begins(r.spans_of(1, 0, "bubble")), (std::vector<Cycle>{30}));
  EXPECT_EQ(r.cta_exit(1), 40u);
}

// tma_issue_hold 50, tma_issue_interval 10, mb_wait_cycles 5:
// 0    TMA_LOAD stage 0 (lands at 100); the next is a TMA_LOAD: ready at 0 + 10.
// 10   TMA_LOAD stage 1 (lands at 110); the next is not: ready at 10 + 50.
// 60   MB_WAIT 0 blocks; woken at 100 it issues without the try-wait's cost: ready at 101.
// 101  BUBBLE 100.   201  MB_WAIT 1 finds its phase complete: ready at 201 + 5.   206  EXIT.
// Without the options: loads at 0 and 1, MB_WAIT 0 at 100, BUBBLE at 101, MB_WAIT 1 at 201, EXIT
// at 202.
TEST(SmWarpGroup, TmaLoadsHoldTheirWarpGroupAndACompletedWaitCostsItsRoundTrip) {
  auto program = [] {
    CtaBuilder cta(0);
    cta.stages(2);
    cta.warpgroup()
        .tma_load(0, {0, 0}, 0)
        .tma_load(0, {64, 0}, 1)
        .mb_wait(0)
        .bubble(100)
        .mb_wait(1)
        .exit();
    return workload_of({cta.program()});
  };
  EXPECT_EQ(run_both(HarnessConfig{}, program()).cta_exit(0), 202u);
  HarnessConfig config;
  config.sm = plugin_slot<SmCore, sm_warpgroup::WarpGroupSm>(
      {{"tma_issue_hold", std::int64_t{50}},
       {"tma_issue_interval", std::int64_t{10}},
       {"mb_wait_cycles", std::int64_t{5}}});
  const RunResult r = run_both(config, program());
  EXPECT_EQ(begins(r.spans_of(0, 0, "tma_issue")), (std::vector<Cycle>{0, 10}));
  EXPECT_EQ(stat(r, "stall.mb_wait"), 40u);  // 60..99
  EXPECT_EQ(r.cta_exit(0), 206u);
}

TEST(SmWarpGroup, InstructionsOfAnotherEngineAreRejected) {
  // A plugin's instruction for an engine sm.warpgroup is not wired to (issue 14: engines as
  // sub-slots of [sm] are what runs it).
  static constexpr InstructionSpec kUmma{.name = "UMMA", .engine = "umma"};
  InstructionSet set;
  Instruction umma;
  umma.op = set.add(kUmma);
  CtaProgram p = CtaBuilder(5).program();
  p.warpgroups.push_back({{umma, Instruction::exit()}, 0});
  EXPECT_EQ(sm_warpgroup::check_program(p, set, nullptr),
            "CTA 5 WarpGroup 0 instruction 0 (UMMA): UMMA runs on an engine of kind 'umma', which "
            "sm.warpgroup does not have (the manifest names none in [sm.umma])");
  // Wired into the SM ([sm.umma]), it runs.
  const std::vector<std::string> wired{"umma"};
  EXPECT_EQ(sm_warpgroup::check_program(p, set, nullptr, wired), "");
  EXPECT_EQ(sm_warpgroup::check_program(p, InstructionSet::hopper(), nullptr),
            "CTA 5 WarpGroup 0 instruction 0 (?): unknown opcode");
}

// An engine of a plugin's kind "fake": one FMMA at a time, each busy for 10 cycles, in flight
// while it is; the SM hands it every FMMA (issue 14: engines as sub-slots of [sm]).
class FakeMmaEngine final : public InstructionEngine, private EventTarget {
 public:
  explicit FakeMmaEngine(const BuildContext& c) : events_(c.events) {}
  void connect(EngineClient& client) override { client_ = &client; }
  bool ready(Cycle now, const EngineOp&) override { return busy_until_ <= now; }
  Cycle issue(Cycle now, const EngineOp& op) override {
    EXPECT_EQ(op.program->cta_id, 7u);
    busy_until_ = now + 10;
    events_.schedule(busy_until_, *this);
    client_->on_engine_flight(op, now, busy_until_);
    return now + 1;
  }

 private:
  void on_event(Cycle now, std::uint64_t) override { client_->on_engine_wake(now); }
  EventQueue& events_;
  EngineClient* client_ = nullptr;
  Cycle busy_until_ = 0;
};

TEST(SmWarpGroup, APluginsInstructionRunsOnTheEngineOfItsKind) {
  static constexpr InstructionSpec kFmma{.name = "FMMA",
                                         .engine = "fake",
                                         .span = "fmma",
                                         .wait_span = "wait:fmma",
                                         .flight = "fmma_flight"};
  InstructionSet set;
  Instruction fmma;
  fmma.op = set.add(kFmma);
  CtaProgram p = CtaBuilder(7).program();
  p.warpgroups.push_back({{fmma, fmma, Instruction::exit()}, 0});
  HarnessConfig config;
  config.instructions = &set;
  config.engines.push_back(
      {"fake",
       Slot<Component>{[](const BuildContext& c) -> std::unique_ptr<Component> {
                         return std::make_unique<FakeMmaEngine>(c);
                       },
                       {},
                       nullptr}});
  // The first FMMA issues at 0 and holds the engine until 10; the second is refused at 1 and
  // blocks until the engine's wake at 10, issues then, and EXIT follows at 11.
  const RunResult r = run_both(config, workload_of({p}));
  EXPECT_EQ(r.outcome, Outcome::kCompleted);
  EXPECT_EQ(begins(r.spans_of(7, 0, "fmma")), (std::vector<Cycle>{0, 10}));
  EXPECT_EQ(begins(r.spans_of(7, 0, "wait:fmma")), (std::vector<Cycle>{1}));
  // Each FMMA is in flight while the engine is busy with it, as the engine reports.
  const std::vector<Span> flights = r.spans_of(7, 0, "fmma_flight");
  ASSERT_EQ(flights.size(), 2u);
  EXPECT_EQ(flights[0].begin, 0u);
  EXPECT_EQ(flights[0].end, 10u);
  EXPECT_EQ(flights[1].begin, 10u);
  EXPECT_EQ(flights[1].end, 20u);
  EXPECT_EQ(stat(r, "stall.engine"), 9u);
  EXPECT_EQ(stat(r, "issued.fmma"), 2u);
  EXPECT_EQ(r.cta_exit(7), 11u);
}

TEST(SmWarpGroup, MalformedProgramsAreRejectedWithTheirLocation) {
  SmHarness h(HarnessConfig{}, workload_of({}), Stepping::kEvent);
  CtaBuilder cta(9);
  cta.stages(2);
  cta.warpgroup().exit();
  cta.warpgroup().mb_wait(0).mb_wait(2).exit();
  std::string why;
  EXPECT_FALSE(h.sm(0).fits_empty(cta.program(), why));
  EXPECT_EQ(why,
            "CTA 9 WarpGroup 1 instruction 1 (MB_WAIT 2): stage 2 is out of range (the CTA has 2 "
            "stages)");
  EXPECT_THROW(h.sm(0).accept(0, std::make_unique<CtaProgram>(cta.program())), InputError);

  CtaBuilder no_exit(10);
  no_exit.warpgroup().bubble(1);
  EXPECT_FALSE(h.sm(0).fits_empty(no_exit.program(), why));
  EXPECT_EQ(why, "CTA 10 WarpGroup 0: the program does not end with EXIT");

  CtaBuilder bad_work(12);
  CtaProgram work_program = bad_work.program();
  work_program.warpgroups.push_back({{Instruction::compute(0, 3), Instruction::exit()}, 0});
  EXPECT_FALSE(h.sm(0).fits_empty(work_program, why));
  EXPECT_EQ(why,
            "CTA 12 WarpGroup 0 instruction 0 (BUBBLE 0): compute work 3 lies outside the CTA's "
            "work pool (0 entries)");

  CtaBuilder bad_map(11);
  bad_map.stages(1);
  bad_map.warpgroup().tma_load(2, {0, 0}, 0).exit();
  EXPECT_FALSE(h.sm(0).fits_empty(bad_map.program(), why));
  EXPECT_EQ(why,
            "CTA 11 WarpGroup 0 instruction 0 (TMA_LOAD map 2 coords sid 0): TensorMap 2 is not "
            "declared (the workload has 1)");
}

TEST(SmWarpGroup, NothingTicksWhileIdle) {
  CtaBuilder cta(0);
  cta.warpgroup().bubble(100000).exit();
  const Workload w = workload_of({cta.program()});
  const RunResult r = run_both(HarnessConfig{}, w);
  EXPECT_EQ(r.cta_exit(0), 100000u);  // BUBBLE at 0 occupies 0..99999, EXIT at 100000
  // Event stepping runs the SM's issue phase twice: at 0 (BUBBLE) and at 100000 (EXIT).
  SmHarness h(HarnessConfig{}, w, Stepping::kEvent);
  h.run();
  EXPECT_EQ(h.clock().steps(), 2u);
}

// Random programs (most of them deadlock or finish early; both are results) on 1 to 3 SMs with
// random limits and latencies: the two steppings must agree on every one.
TEST(SmWarpGroup, RandomProgramsAgreeInBothSteppings) {
  std::mt19937 rng(20261130);
  auto below = [&](std::uint32_t n) { return static_cast<std::uint32_t>(rng() % n); };
  for (int round = 0; round < 300; ++round) {
    HarnessConfig config;
    config.gpu.sm_count = 1 + static_cast<int>(below(3));
    config.gpu.max_ctas_per_sm = 1 + static_cast<int>(below(3));
    config.gpu.max_warpgroups_per_sm = 2 + static_cast<int>(below(6));
    config.tma_latency = below(50);
    config.tensor_core_depth = 1 + below(3);
    config.max_cycles = 3000;
    if (round % 3 == 0)
      config.sm = plugin_slot<SmCore, sm_warpgroup::WarpGroupSm>(
          {{"pipe_sharing", std::string("fair")},
           {"exit_waits_for_stores", round % 2 == 0},
           {"alu_rate_beside_wgmma", 0.5},
           {"sfu_rate_beside_wgmma", 0.75}});
    // Every fourth round the tensor core is wgmma.half_n, slowed by the compute BUBBLEs' FP32.
    if (round % 4 == 1)
      config.tensor_core = plugin_slot<TensorCoreEngine, engines::WgmmaHalfN>(
          {{"fp32_share", 0.87},
           {"buffer_depth", std::int64_t{1 + below(3)}},
           {"completion_latency", std::int64_t{below(60)}}});
    // Every other round leaves out the waits that only another WarpGroup can satisfy, so that
    // more runs complete.
    const bool open_waits = round % 2 == 0;
    std::vector<CtaProgram> ctas;
    for (std::uint64_t id = 0, n = 1 + below(6); id < n; ++id) {
      CtaBuilder cta(id);
      const std::uint32_t stages = 1 + below(3);
      cta.stages(stages).smem(below(3) * 50 * 1024).consumers_per_stage(1 + below(2));
      for (std::uint32_t w = 0, wgs = 1 + below(2); w < wgs; ++w) {
        WarpGroupBuilder b = cta.warpgroup();
        for (std::uint32_t i = 0, len = below(25); i < len; ++i) {
          const auto s = static_cast<std::uint8_t>(below(stages));
          switch (below(13)) {
            case 0:
              b.tma_load(0, {0, static_cast<std::int32_t>(below(64))}, s);
              break;
            case 1:
              b.tma_bulk(0x1000, 1 + below(4096), s);
              break;
            case 2:
              b.tma_store(0, {0, 0});
              break;
            case 3:
              open_waits ? b.acquire(s) : b.bubble(1);
              break;
            case 4:
              b.release(s);
              break;
            case 5:
              open_waits ? b.mb_wait(s) : b.bubble(2);
              break;
            case 6:
              b.wgmma(64, static_cast<std::uint16_t>(8 * (1 + below(32))), 16, below(3));
              break;
            case 7:
              b.commit(below(3));
              break;
            case 8:
              b.wgmma_wait(below(3));
              break;
            case 9:
              b.bar_arrive(below(2));
              break;
            case 10:
              open_waits ? b.bar_wait(below(2)) : b.bubble(3);
              break;
            case 11:
              b.compute(below(20), {below(4096), below(2048), below(512)});
              break;
            default:
              b.bubble(below(20));
              break;
          }
        }
        b.exit();
      }
      ctas.push_back(cta.program());
    }
    const RunResult r = run_both(config, workload_of(ctas));
    // Without cross-WarpGroup waits nothing can deadlock: a WGMMA the coupled engine lost would.
    if (!open_waits) {
      EXPECT_NE(r.outcome, Outcome::kDeadlock);
    }
    if (::testing::Test::HasFailure()) FAIL() << "round " << round;
  }
}

TEST(SmWarpGroup, RegistersEveryDeclaredStatistic) {
  SmHarness h(HarnessConfig{}, workload_of({}), Stepping::kEvent);
  Schema schema;
  sm_warpgroup::WarpGroupSm::describe(schema);
  std::set<std::string> params;
  for (const auto& p : schema.params()) params.insert(p.name);
  EXPECT_EQ(params, (std::set<std::string>{"pipe_sharing", "exit_waits_for_stores",
                                           "tma_issue_hold", "tma_issue_interval", "mb_wait_cycles",
                                           "cta_launch_cycles", "fp32_lanes", "alu_lanes",
                                           "sfu_lanes", "dispatch_lanes", "fp32_rate_beside_wgmma",
                                           "alu_rate_beside_wgmma", "sfu_rate_beside_wgmma"}));
  // A Hopper run binds each declaration, issued.<op> once per instruction of the table, and
  // stall.engine only where a plugin's engine is wired in (none here).
  std::set<std::string> declared;
  for (const StatSpec& s : schema.stats()) {
    EXPECT_FALSE(s.unit.empty()) << s.name;
    EXPECT_FALSE(s.doc.empty()) << s.name;
    if (s.name == "issued.<op>") {
      for (const InstructionSpec& spec : InstructionSet::hopper().specs()) {
        std::string op = spec.name;
        for (char& c : op) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        declared.insert("sm[0].issued." + op);
      }
    } else if (s.name != "stall.engine") {
      declared.insert("sm[0]." + s.name);
    }
  }
  EXPECT_EQ(h.stats().names(), declared);
}

}  // namespace
}  // namespace simfa::sm_test
