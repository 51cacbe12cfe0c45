// loop_costs.cu -- what the instructions around a Triton GEMM loop's WGMMAs cost the SM (simfa
// issue 17): the one-WarpGroup 64x128 loop takes 329 cycles a k-tile on L2-resident tiles where
// its four m64n128k16 take 256 (validation/h200/wgmma_rate.csv), and its SASS
// (validation/h200/ttgir/gemm_bm64_bn128_bk64_s4_w4_g1.sass) runs between one k-tile's WGMMA wait
// and the next k-tile's WGMMAs four BAR.SYNCs, an expect-tx arrive, two UTMALDGs and a try-wait,
// which simfa charges nothing. Each test times one of them, one CTA, %clock64 of thread 0:
//
//   bar        `bar.sync 0` by every thread of 1 or 2 WarpGroups, N in a row
//   wait_done  `mbarrier.try_wait.parity` (Triton's loop) on a phase that has completed
//   arrive     `mbarrier.arrive.expect_tx` of 0 bytes (each completes a phase of a count-1 barrier)
//   issue      N 2D TMA copies of a warm 128x64 fp16 box back to back, the issuing thread's time
//              (`issue`) and the time until all have landed (`issue_land`)
//   loop       the 64x128 kernel's loop without its WGMMAs: 4 stages of an A box (64 rows) and a
//              B box (128 rows) of L2-resident tiles; per k-tile bar, try-wait, bar, expect, bar,
//              copy A, bar, copy B, as the SASS has them (`loop_nobar`: the same, no bar.sync)
//   land_try   one warm 128x64 box at a time, issue to the return of Triton's try-wait loop on it
//   land_test  the same, waited for by polling `mbarrier.test_wait` (which never suspends): what
//              land_try takes beyond it is the waiting thread's wake-up once the copy lands
//
// Output: test,warpgroups,n,cycles_med,cycles_min,cycles_max,sm_mhz -- cycles per operation (per
// k-tile for the loops), median / min / max over 7 launches after one warm-up; sm_mhz is
// %clock64 over %globaltimer across the timed part (0 for the issue rows, too short to tell).
//
//   loop_costs OUT.csv
//
// Build: nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o loop_costs loop_costs.cu
// -lcuda
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "device_common.cuh"

enum Test { kBar, kWaitDone, kArrive, kIssue, kLoop, kLoopNoBar, kLandTry, kLandTest };
const char* const kNames[] = {"bar",  "wait_done",  "arrive",   "issue",
                             "loop", "loop_nobar", "land_try", "land_test"};

constexpr uint32_t kCols = 4096;   // the tensor: kRows x kCols fp16, 8 KiB rows
constexpr uint32_t kRows = 512;    // 4 MiB, L2-resident after touch()
constexpr int kStages = 4;         // the 64x128 kernel's num_stages
constexpr uint32_t kBoxA = 64 * 128, kBoxB = 128 * 128;  // bytes: 64 and 128 rows of 128 B
constexpr int kMaxIssue = 12;      // 12 x 16 KiB boxes in flight at most

static __device__ __forceinline__ void bar_sync() { asm volatile("bar.sync 0;" ::: "memory"); }
/// Polls the phase with `mbarrier.test_wait`, which returns at once, until it has completed.
static __device__ __forceinline__ void mbar_poll(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n\t.reg .pred P1;\n"
      "LAB_POLL:\n\t"
      "mbarrier.test_wait.parity.shared::cta.b64 P1, [%0], %1;\n\t"
      "@P1 bra DONE_POLL;\n\t"
      "bra LAB_POLL;\n"
      "DONE_POLL:\n\t}" ::"r"(bar),
      "r"(parity)
      : "memory");
}
// out[0]: cycles of the timed part, out[1]: its %globaltimer ns, out[2]: a second time (issue:
// until every copy landed).
__global__ void costs(const __grid_constant__ CUtensorMap map_a,
                      const __grid_constant__ CUtensorMap map_b, int test, int n, u64* out) {
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  __shared__ __align__(8) u64 bars[kStages];
  uint8_t* smem = (uint8_t*)(((uintptr_t)smem_raw + 1023) & ~(uintptr_t)1023);
  const bool t0 = threadIdx.x == 0;
  if (t0) {
    for (int s = 0; s < kStages; s++) mbar_init(smem_u32(&bars[s]), 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
  __syncthreads();
  const uint32_t bar0 = smem_u32(&bars[0]);
  u64 c0 = 0, g0 = 0, c1 = 0, c2 = 0;
  if (test == kBar) {
    c0 = clk();
    g0 = gtimer();
    for (int i = 0; i < n; i++) bar_sync();
    c1 = clk();
  } else if (test == kLoop || test == kLoopNoBar) {
    const bool bars_on = test == kLoop;
    // The prologue: stages - 1 k-tiles ahead, as Triton's pipeline issues them.
    if (t0)
      for (int k = 0; k < kStages - 1; k++) {
        const uint32_t b = smem_u32(&bars[k]);
        mbar_expect_tx(b, kBoxA + kBoxB);
        tma2d_g2s(smem_u32(smem + k * (kBoxA + kBoxB)), &map_a, (k % 2) * 64, 0, b);
        tma2d_g2s(smem_u32(smem + k * (kBoxA + kBoxB) + kBoxA), &map_b, (k % 2) * 64, 128, b);
      }
    if (bars_on) bar_sync();
    c0 = clk();
    g0 = gtimer();
    uint32_t parity = 0;
    for (int k = 0; k < n; k++) {
      if (bars_on) bar_sync();
      const int s = k % kStages;
      if (bars_on || t0) {
        mbar_wait(smem_u32(&bars[s]), (parity >> s) & 1u);
        parity ^= 1u << s;
      }
      // k-tile k + stages - 1 refills the slot k - 1 used (its WGMMAs retired by the wait).
      const int next = k + kStages - 1;
      const int ns = next % kStages;
      const uint32_t b = smem_u32(&bars[ns]);
      uint8_t* slot = smem + ns * (kBoxA + kBoxB);
      if (bars_on) bar_sync();
      if (t0 && next < n) mbar_expect_tx(b, kBoxA + kBoxB);
      if (bars_on) bar_sync();
      if (t0 && next < n) tma2d_g2s(smem_u32(slot), &map_a, (next % 2) * 64, 0, b);
      if (bars_on) bar_sync();
      if (t0 && next < n) tma2d_g2s(smem_u32(slot + kBoxA), &map_b, (next % 2) * 64, 128, b);
    }
    c1 = clk();
  } else if (t0) {
    if (test == kWaitDone || test == kArrive) {
      asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar0) : "memory");
      mbar_wait(bar0, 0);  // phase 0 completed
      c0 = clk();
      g0 = gtimer();
      if (test == kWaitDone)
        for (int i = 0; i < n; i++) mbar_wait(bar0, 0);
      else
        for (int i = 0; i < n; i++) mbar_expect_tx(bar0, 0);
      c1 = clk();
    } else if (test == kLandTry || test == kLandTest) {  // n boxes, one at a time
      c0 = clk();
      g0 = gtimer();
      for (int i = 0; i < n; i++) {
        mbar_expect_tx(bar0, kBoxB);
        tma2d_g2s(smem_u32(smem), &map_b, (i % 2) * 64, 128, bar0);
        if (test == kLandTry)
          mbar_wait(bar0, i & 1);
        else
          mbar_poll(bar0, i & 1);
      }
      c1 = clk();
    } else {  // kIssue: n boxes of 128 rows into n slots, one barrier for all
      mbar_expect_tx(bar0, n * kBoxB);
      c0 = clk();
      g0 = gtimer();
      for (int i = 0; i < n; i++) tma2d_g2s(smem_u32(smem + i * kBoxB), &map_b, 0, 128, bar0);
      c1 = clk();
      mbar_wait(bar0, 0);
      c2 = clk();
    }
  }
  if (t0) {
    const u64 g1 = gtimer();
    out[0] = c1 - c0;
    out[1] = g1 - g0;
    out[2] = c2 > c0 ? c2 - c0 : 0;
  }
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: loop_costs OUT.csv\n");
    return 2;
  }
  CK(cudaSetDevice(0));
  const u64 bytes = (u64)kRows * kCols * 2;
  uint16_t* a;
  int* sink;
  u64* out;
  CK(cudaMalloc(&a, bytes));
  CK(cudaMemset(a, 1, bytes));
  CK(cudaMalloc(&sink, 4));
  CK(cudaMalloc(&out, 3 * sizeof(u64)));
  const CUtensorMap map_a = fp16_box_map(a, kCols, kRows, 64);
  const CUtensorMap map_b = fp16_box_map(a, kCols, kRows, 128);
  const int smem_bytes = 200 * 1024;
  CK(cudaFuncSetAttribute(costs, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes));
  FILE* f = fopen(argv[1], "w");
  if (!f) {
    perror(argv[1]);
    return 1;
  }
  fprintf(f, "test,warpgroups,n,cycles_med,cycles_min,cycles_max,sm_mhz\n");
  auto run = [&](int test, int wgs, int n, int which, const char* name) {
    std::vector<double> per, mhz;
    for (int rep = 0; rep < 8; rep++) {
      touch<<<132, 256>>>((const int4*)a, bytes / 16, sink);
      costs<<<1, 128 * wgs, smem_bytes>>>(map_a, map_b, test, n, out);
      CK(cudaDeviceSynchronize());
      u64 h[3];
      CK(cudaMemcpy(h, out, sizeof(h), cudaMemcpyDeviceToHost));
      if (rep == 0) continue;  // warm-up
      per.push_back((double)h[which] / n);
      if (test != kIssue && h[1] > 0) mhz.push_back((double)h[0] / (double)h[1] * 1000.0);
    }
    std::sort(per.begin(), per.end());
    fprintf(f, "%s,%d,%d,%.1f,%.1f,%.1f,%.0f\n", name, wgs, n, median(per), per.front(),
            per.back(), median(mhz));
    fflush(f);
  };
  for (int wgs : {1, 2}) {
    run(kBar, wgs, 1024, 0, kNames[kBar]);
    run(kLoop, wgs, 1024, 0, kNames[kLoop]);
  }
  run(kLoopNoBar, 1, 1024, 0, kNames[kLoopNoBar]);
  run(kWaitDone, 1, 1024, 0, kNames[kWaitDone]);
  run(kArrive, 1, 1024, 0, kNames[kArrive]);
  run(kLandTry, 1, 256, 0, kNames[kLandTry]);
  run(kLandTest, 1, 256, 0, kNames[kLandTest]);
  for (int n : {1, 2, 4, 8, kMaxIssue}) {
    run(kIssue, 1, n, 0, "issue");
    run(kIssue, 1, n, 2, "issue_land");
  }
  fclose(f);
  return 0;
}
