// tma_issue.cu -- how long a 2D TMA copy holds the thread that issues it (simfa issue 17).
// loop_costs.csv has a warm 128-row box holding its thread 257 cycles when issued alone and 77
// each when 8 go back to back, and tma_loaded.csv one thread's ring turning at ~320 cycles a box
// whatever its stages; this separates what the issue waits for: the TMA unit still generating the
// line requests of the copy before it (then the wait grows with that copy's rows), or a cost of
// its own. One CTA, thread 0, %clock64 around the issue instruction alone; warm (L2-resident) boxes
// of 64 fp16 columns (128 B a row, rows 8 KiB apart):
//
//   alone       one copy of ROWS rows, the TMA idle (the copy before it landed)
//   behind      a 256-row copy, then the timed copy of ROWS rows right behind it
//   train       8 copies of ROWS rows back to back; cycles per copy
//   after_wait  a 2-stage ring of ROWS-row copies: the issue that follows each try-wait's return
//
// Output: test,rows,cycles_med,cycles_min,cycles_max -- medians over 64 timed issues x 7
// launches after one warm-up (train: per copy).
//
//   tma_issue OUT.csv
//
// Build: nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o tma_issue tma_issue.cu -lcuda
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "device_common.cuh"

enum Test { kAlone, kBehind, kTrain, kAfterWait };
const char* const kNames[] = {"alone", "behind", "train", "after_wait"};
constexpr uint32_t kCols = 4096, kRows = 512;  // 4 MiB of fp16, L2-resident after touch()
constexpr int kTimed = 64;                     // timed issues a launch
constexpr int kTrainCopies = 8;

// out[i]: the cycles of timed issue i.
__global__ void issue(const __grid_constant__ CUtensorMap map,
                      const __grid_constant__ CUtensorMap big, int test, uint32_t box_bytes,
                      u64* out) {
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  __shared__ __align__(8) u64 bars[2];
  if (threadIdx.x != 0) return;
  uint8_t* smem = align_1k(smem_raw);
  ring_init(bars, 2);
  const uint32_t b0 = smem_u32(&bars[0]), b1 = smem_u32(&bars[1]);
  uint32_t parity = 0;
  for (int i = 0; i < kTimed; i++) {
    u64 t0 = 0, t1 = 0;
    if (test == kAlone) {
      mbar_expect_tx(b0, box_bytes);
      t0 = clk();
      tma2d_g2s(smem_u32(smem), &map, 0, 0, b0);
      t1 = clk();
      mbar_wait(b0, parity);
      parity ^= 1;
    } else if (test == kBehind) {
      mbar_expect_tx(b0, 256 * 128 + box_bytes);
      tma2d_g2s(smem_u32(smem + 65536), &big, 0, 0, b0);
      t0 = clk();
      tma2d_g2s(smem_u32(smem), &map, 64, 0, b0);
      t1 = clk();
      mbar_wait(b0, parity);
      parity ^= 1;
    } else if (test == kTrain) {
      mbar_expect_tx(b0, kTrainCopies * box_bytes);
      t0 = clk();
      for (int j = 0; j < kTrainCopies; j++)
        tma2d_g2s(smem_u32(smem + j * box_bytes), &map, 0, 0, b0);
      t1 = clk();
      mbar_wait(b0, parity);
      parity ^= 1;
    } else {  // kAfterWait: stage s = i % 2, refilled once its previous copy has landed
      const int s = i % 2;
      const uint32_t b = s ? b1 : b0;
      if (i >= 2) {
        mbar_wait(b, (parity >> s) & 1u);
        parity ^= 1u << s;
      }
      mbar_expect_tx(b, box_bytes);
      t0 = clk();
      tma2d_g2s(smem_u32(smem + s * box_bytes), &map, (i % 8) * 64, 0, b);
      t1 = clk();
    }
    out[i] = t1 - t0;
  }
  if (test == kAfterWait)
    for (int s = 0; s < 2; s++) mbar_wait(s ? b1 : b0, (parity >> s) & 1u);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: tma_issue OUT.csv\n");
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
  CK(cudaMalloc(&out, kTimed * sizeof(u64)));
  const int smem_bytes = 200 * 1024;
  CK(cudaFuncSetAttribute(issue, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes));
  const CUtensorMap big = fp16_box_map(a, kCols, kRows, 256);
  FILE* f = fopen(argv[1], "w");
  if (!f) {
    perror(argv[1]);
    return 1;
  }
  fprintf(f, "test,rows,cycles_med,cycles_min,cycles_max\n");
  for (int test : {(int)kAlone, (int)kBehind, (int)kTrain, (int)kAfterWait})
    for (uint32_t rows : {8u, 32u, 64u, 128u, 256u}) {
      if (test == kTrain && rows > 128) continue;  // 8 x 32 KiB would not fit
      const CUtensorMap map = fp16_box_map(a, kCols, kRows, rows);
      std::vector<double> cycles;
      for (int rep = 0; rep < 8; rep++) {
        touch<<<132, 256>>>((const int4*)a, bytes / 16, sink);
        issue<<<1, 32, smem_bytes>>>(map, big, test, rows * 128, out);
        CK(cudaDeviceSynchronize());
        std::vector<u64> h(kTimed);
        CK(cudaMemcpy(h.data(), out, kTimed * sizeof(u64), cudaMemcpyDeviceToHost));
        if (rep == 0) continue;  // warm-up
        for (u64 c : h) cycles.push_back((double)c / (test == kTrain ? kTrainCopies : 1));
      }
      std::sort(cycles.begin(), cycles.end());
      fprintf(f, "%s,%u,%.1f,%.1f,%.1f\n", kNames[test], rows, median(cycles), cycles.front(),
              cycles.back());
      fflush(f);
    }
  fclose(f);
  return 0;
}
