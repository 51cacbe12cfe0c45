// tma_land.cu -- in which order a burst of cold TMA boxes lands (simfa issue 17).
//
// tma_loaded.csv says a box's latency under load grows with every box in flight anywhere on the
// GPU, at about the DRAM's peak rate, even where the DRAM runs far below it (33 CTAs, 4 stages:
// +237 cycles a stage at 1.75 TB/s). Two ways of serving a burst give that mean differently: in
// arrival order the first box of every CTA lands first and the last one last; with the lines of
// all boxes in flight interleaved, every box lands near the end of the burst. This probe tells
// them apart: each CTA's one thread issues BOXES cold 128-row x 64-column fp16 boxes (16 KiB) at
// once, then polls all their mbarriers and stamps the cycle each completes.
//
// Three placements of a CTA's boxes (rows 8 KiB apart, K = 4096, as tma_loaded.cu):
//   cols   box k at column k of the CTA's own 128-row band (a K loop's next tiles: neighbouring
//          128 B of the same rows, which a DRAM row may share)
//   spread box k at column 9k mod 64 (1152 B apart in the same rows)
//   bands  box k at column 0 of band CTA + CTAS * k (other rows entirely)
// A 256 MiB write evicts the L2 before each launch. 5 launches a row.
//
// Output per (placement, ctas, boxes, box): land_med, land_p10, land_p90 (cycles from the CTA's
// first issue to box k's completion, over CTAs and launches), sm_mhz (CTA 0, %clock64 over
// %globaltimer).
//
//   tma_land OUT.csv
//
// Build: nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o tma_land tma_land.cu -lcuda
#include <cstdint>
#include <cstdio>
#include <vector>

#include "device_common.cuh"

constexpr uint32_t kPitch = 8192;  // bytes a row
constexpr uint32_t kCols = kPitch / 2;
constexpr uint32_t kBoxBytes = 128 * 128;
constexpr int kMaxBoxes = 8;
constexpr int kMaxCtas = 132;
constexpr int kSlotsPerCta = kMaxBoxes + 4;  // land per box; start/end cycles, start/end ns

enum Placement { kPlaceCols, kPlaceSpread, kPlaceBands };
const char* const kPlacements[] = {"cols", "spread", "bands"};

static __device__ __forceinline__ bool mbar_test(uint32_t bar, uint32_t parity) {
  uint32_t done;
  asm volatile(
      "{\n\t.reg .pred P1;\n\t"
      "mbarrier.test_wait.parity.shared::cta.b64 P1, [%1], %2;\n\t"
      "selp.u32 %0, 1, 0, P1;\n\t}"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
  return done != 0;
}

__global__ void burst(const __grid_constant__ CUtensorMap map, int placement, int boxes, u64* out) {
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  __shared__ __align__(8) u64 bars[kMaxBoxes];
  if (threadIdx.x != 0) return;
  uint8_t* smem = align_1k(smem_raw);
  ring_init(bars, boxes);
  u64* o = out + (u64)blockIdx.x * kSlotsPerCta;
  const int ctas = (int)gridDim.x;
  const u64 g0 = gtimer();
  const u64 c0 = clk();
  for (int k = 0; k < boxes; k++) {
    const uint32_t bar = smem_u32(&bars[k]);
    mbar_expect_tx(bar, kBoxBytes);
    const int col = placement == kPlaceCols ? k : placement == kPlaceSpread ? (9 * k) % 64 : 0;
    const int band = placement == kPlaceBands ? (int)blockIdx.x + ctas * k : (int)blockIdx.x;
    tma2d_g2s(smem_u32(smem + (size_t)k * kBoxBytes), &map, col * 64, band * 128, bar);
  }
  uint32_t pending = (1u << boxes) - 1;
  while (pending) {
    for (int k = 0; k < boxes; k++) {
      if ((pending >> k & 1u) && mbar_test(smem_u32(&bars[k]), 0)) {
        o[k] = clk() - c0;
        pending &= ~(1u << k);
      }
    }
  }
  const u64 c1 = clk();
  const u64 g1 = gtimer();
  o[kMaxBoxes] = c0;
  o[kMaxBoxes + 1] = c1;
  o[kMaxBoxes + 2] = g0;
  o[kMaxBoxes + 3] = g1;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: tma_land OUT.csv\n");
    return 2;
  }
  CK(cudaSetDevice(0));
  const u64 rows = (u64)kMaxCtas * (kMaxBoxes + 1) * 128;
  uint16_t* a;
  CK(cudaMalloc(&a, rows * kPitch));
  CK(cudaMemset(a, 1, rows * kPitch));
  int4* flush;
  const u64 flush_bytes = 256ull << 20;
  CK(cudaMalloc(&flush, flush_bytes));
  u64* out;
  CK(cudaMalloc(&out, (u64)kMaxCtas * kSlotsPerCta * sizeof(u64)));
  const int smem_max = kMaxBoxes * kBoxBytes + 1024;
  CK(cudaFuncSetAttribute(burst, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_max));
  const CUtensorMap map = fp16_box_map(a, kCols, rows, 128);
  FILE* f = fopen(argv[1], "w");
  if (!f) {
    perror(argv[1]);
    return 1;
  }
  fprintf(f, "placement,ctas,boxes,box,land_med,land_p10,land_p90,sm_mhz\n");
  for (int placement : {kPlaceCols, kPlaceSpread, kPlaceBands})
    for (int ctas : {1, 8, 33, 66, 132})
      for (int boxes : {1, 2, 4, 8}) {
        std::vector<std::vector<double>> land(boxes);
        std::vector<double> mhz;
        const int smem = boxes * kBoxBytes + 1024;
        for (int rep = 0; rep < 5; rep++) {
          CK(cudaMemset(flush, rep, flush_bytes));
          burst<<<ctas, 32, smem>>>(map, placement, boxes, out);
          CK(cudaDeviceSynchronize());
          std::vector<u64> h((u64)ctas * kSlotsPerCta);
          CK(cudaMemcpy(h.data(), out, h.size() * sizeof(u64), cudaMemcpyDeviceToHost));
          for (int c = 0; c < ctas; c++)
            for (int k = 0; k < boxes; k++) land[k].push_back((double)h[(u64)c * kSlotsPerCta + k]);
          mhz.push_back((double)(h[kMaxBoxes + 1] - h[kMaxBoxes]) /
                        (double)(h[kMaxBoxes + 3] - h[kMaxBoxes + 2]) * 1000.0);
        }
        for (int k = 0; k < boxes; k++)
          fprintf(f, "%s,%d,%d,%d,%.0f,%.0f,%.0f,%.0f\n", kPlacements[placement], ctas, boxes, k,
                  median(land[k]), pct(land[k], 0.1), pct(land[k], 0.9), median(mhz));
        fflush(f);
      }
  fclose(f);
  return 0;
}
