// tma_loaded.cu -- a TMA box's time under load (simfa issue 17): what a GEMM's copies see when
// every SM has a few in flight. tma_inflight.cu times one SM's ring; dram_stride.cu's `bw panel`
// times 132 SMs with 6 boxes each at full bandwidth. A GEMM's CTAs sit between the two, one or
// two an SM with 2 to 6 boxes in flight, and the H200 stretches their k-tiles well past the
// one-CTA time (cta_stamps.csv: 200x7000x3000, 110 CTAs, 757 ns a k-tile against 410 ns alone).
//
// The kernel is examples/microbench/tma_panel_stream.trace's: an fp16 tensor of rows P = 8 KiB
// apart (K = 4096) read as 128-row x 64-column boxes (16 KiB); CTA c walks the columns of its own
// 128-row band, then the band CTAS further down, CAP = 128 boxes through a ring of STAGES slots
// (one thread issues; box k waits for box k - STAGES's slot). From DRAM: a 256 MiB write evicts
// the L2 before each launch; the CTAs read 2 MiB each, disjoint.
//
// Three modes: `own` as above, cold; `own_warm`: CTA c re-reads the first 4 boxes of its band
// (64 KiB, 16.5 MiB for 264 CTAs), L2-resident after a warm-up launch; `same`: every CTA reads
// the same 128 boxes (2 MiB, bands 0 and 1), L2-resident after a warm-up launch, so the L2 request
// coalescer merges the reads of one GPC's SMs and what bounds the stream is the SM's side.
//
// Output per (mode, ctas, stages): box_cycles_med (a CTA's span / CAP, median over CTAs and
// launches: the ring's turn per box), op_cycles_med / op_cycles_p90 (issue to the wait's return of
// each box; its latency where STAGES = 1), GBps (all bytes over the span from the first CTA's start
// to the last one's end, %globaltimer), sm_mhz (%clock64 over %globaltimer of CTA 0). 5 launches.
//
//   tma_loaded OUT.csv [PITCH [CTAS STAGES]]
//
// PITCH (default 8192) moves the rows apart for `own` alone (run_pitch.sh: 128, 1024, 8192 B);
// CTAS STAGES run that `own` row alone (run_pitch.sh's ncu pass). A PITCH that is a multiple of
// 16 but not of 128 starts the rows at every 16-byte offset of its class inside a line, as the
// GEMM suite's K = 1000, 1544 or 3000 do (run_misaligned.sh; docs/calibration.md §44). With
// ALL_MODES=1 in the environment the warm modes run at any PITCH too.
//
// Build: nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o tma_loaded tma_loaded.cu
// -lcuda
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "device_common.cuh"

constexpr uint32_t kDefaultPitch = 8192;  // bytes a row (K = 4096), the GEMM suite's operands
constexpr uint32_t kBoxBytes = 128 * 128;
constexpr int kCap = 128;  // boxes a CTA
constexpr int kMaxStages = 8;
constexpr int kMaxCtas = 264;
constexpr int kSlotsPerCta = 2 * kCap + 4;  // issue, land per box; start/end cycles, start/end ns

enum Mode { kOwn, kOwnWarm, kSame };
const char* const kModes[] = {"own", "own_warm", "same"};

__global__ void panels(const __grid_constant__ CUtensorMap map, int mode, int stages, int cols,
                       u64* out) {
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  __shared__ __align__(8) u64 bars[kMaxStages];
  if (threadIdx.x != 0) return;
  uint8_t* smem = align_1k(smem_raw);
  ring_init(bars, stages);
  u64* o = out + (u64)blockIdx.x * kSlotsPerCta;
  const int ctas = (int)gridDim.x;
  uint32_t parity = 0;
  const u64 g0 = gtimer();
  const u64 c0 = clock64();
  for (int k = 0; k < kCap + stages; k++) {
    const int s = k % stages;
    const uint32_t bar = smem_u32(&bars[s]);
    if (k >= stages) {
      mbar_wait(bar, (parity >> s) & 1u);
      parity ^= 1u << s;
      o[2 * (k - stages) + 1] = clock64();
    }
    if (k < kCap) {
      o[2 * k] = clock64();
      mbar_expect_tx(bar, kBoxBytes);
      const int band = mode == kSame ? k / cols : (int)blockIdx.x + k / cols * ctas;
      const int col = (mode == kOwnWarm ? k % 4 : k % cols) * 64;
      const int row = (mode == kOwnWarm ? (int)blockIdx.x : band) * 128;
      tma2d_g2s(smem_u32(smem + (size_t)s * kBoxBytes), &map, col, row, bar);
    }
  }
  const u64 c1 = clock64();
  const u64 g1 = gtimer();
  o[2 * kCap] = c0;
  o[2 * kCap + 1] = c1;
  o[2 * kCap + 2] = g0;
  o[2 * kCap + 3] = g1;
}

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3 && argc != 5) {
    fprintf(stderr, "usage: tma_loaded OUT.csv [PITCH [CTAS STAGES]]\n");
    return 2;
  }
  // CTAS STAGES: that `own` row alone (for a profiler: its 5 launches are the only `panels`).
  const int only_ctas = argc == 5 ? atoi(argv[3]) : 0;
  const int only_stages = argc == 5 ? atoi(argv[4]) : 0;
  if (argc == 5 && (only_ctas < 1 || only_ctas > kMaxCtas || only_stages < 1 ||
                    only_stages > kMaxStages)) {
    fprintf(stderr, "tma_loaded: CTAS must be 1 to %d and STAGES 1 to %d\n", kMaxCtas, kMaxStages);
    return 2;
  }
  // PITCH (bytes a row, at least 128, a multiple of 16 as a tensor map's stride must be): 8192 as
  // the GEMM suite's K = 4096; 128 makes every box 16 KiB of contiguous bytes and the CTAs' boxes
  // neighbours, a stream with the same bytes in flight whose lines share DRAM rows (`own` only
  // unless ALL_MODES=1: the other modes keep 8192).
  const uint32_t pitch = argc >= 3 ? (uint32_t)atoi(argv[2]) : kDefaultPitch;
  if (pitch < 128 || pitch % 16 != 0) {
    fprintf(stderr, "tma_loaded: PITCH must be a multiple of 16 of at least 128 (got %s)\n", argv[2]);
    return 2;
  }
  const char* all_modes_env = getenv("ALL_MODES");
  const bool all_modes = all_modes_env != nullptr && all_modes_env[0] == '1';
  CK(cudaSetDevice(0));
  const int cols = (int)(pitch / 128);
  const u64 rows = (u64)(kCap + cols - 1) / cols * kMaxCtas * 128;
  uint16_t* a;
  CK(cudaMalloc(&a, rows * pitch));
  CK(cudaMemset(a, 1, rows * pitch));
  int4* flush;
  const u64 flush_bytes = 256ull << 20;
  CK(cudaMalloc(&flush, flush_bytes));
  u64* out;
  CK(cudaMalloc(&out, (u64)kMaxCtas * kSlotsPerCta * sizeof(u64)));
  const int smem_max = kMaxStages * kBoxBytes + 1024;
  CK(cudaFuncSetAttribute(panels, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_max));
  const CUtensorMap map = fp16_box_map(a, pitch / 2, rows, 128);
  FILE* f = fopen(argv[1], "w");
  if (!f) {
    perror(argv[1]);
    return 1;
  }
  fprintf(f, "mode,ctas,stages,boxes,box_cycles_med,op_cycles_med,op_cycles_p90,GBps,sm_mhz,pitch\n");
  for (int mode : {kOwn, kOwnWarm, kSame}) {
    if (mode != kOwn && ((pitch != kDefaultPitch && !all_modes) || only_ctas != 0)) continue;
    for (int ctas : {1, 8, 33, 66, 132, 264})
      for (int stages : {1, 2, 3, 4, 6, 8}) {
        if (only_ctas != 0 && (ctas != only_ctas || stages != only_stages)) continue;
        std::vector<double> box_cycles, op, gbps, mhz;
        const int smem = stages * kBoxBytes + 1024;
        if (mode != kOwn) {
          CK(cudaMemset(flush, 0, flush_bytes));
          panels<<<ctas, 32, smem>>>(map, mode, stages, cols, out);  // brings the region into the L2
        }
        for (int rep = 0; rep < 5; rep++) {
          if (mode == kOwn) CK(cudaMemset(flush, rep, flush_bytes));
          panels<<<ctas, 32, smem>>>(map, mode, stages, cols, out);
          CK(cudaDeviceSynchronize());
          std::vector<u64> h((u64)ctas * kSlotsPerCta);
          CK(cudaMemcpy(h.data(), out, h.size() * sizeof(u64), cudaMemcpyDeviceToHost));
          u64 first = ~0ull, last = 0;
          for (int c = 0; c < ctas; c++) {
            const u64* o = h.data() + (u64)c * kSlotsPerCta;
            for (int k = 0; k < kCap; k++) op.push_back((double)(o[2 * k + 1] - o[2 * k]));
            box_cycles.push_back((double)(o[2 * kCap + 1] - o[2 * kCap]) / kCap);
            first = std::min(first, o[2 * kCap + 2]);
            last = std::max(last, o[2 * kCap + 3]);
          }
          gbps.push_back((double)ctas * kCap * kBoxBytes / (double)(last - first));
          mhz.push_back((double)(h[2 * kCap + 1] - h[2 * kCap]) /
                        (double)(h[2 * kCap + 3] - h[2 * kCap + 2]) * 1000.0);
        }
        fprintf(f, "%s,%d,%d,%d,%.0f,%.0f,%.0f,%.1f,%.0f,%u\n", kModes[mode], ctas, stages, kCap,
                median(box_cycles), median(op), pct(op, 0.9), median(gbps), median(mhz), pitch);
        fflush(f);
      }
  }
  fclose(f);
  return 0;
}
