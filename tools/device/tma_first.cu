// tma_first.cu -- what a CTA's first TMA load costs against its later ones (simfa issues 10, 17:
// short kernels come out too fast, and the Proton trace of attention shows a 3300-cycle first Q
// load).
//
//   tma_first OUT.csv
//
// Build: nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o tma_first tma_first.cu -lcuda
//
// A 4 GiB fp16 tensor (8192 columns = 16 KiB rows), boxes of 128 rows x 64 columns (16 KiB, 128 B
// per row, SWIZZLE_128B: the GEMM and attention operand box). Each CTA (one thread) loads, one at a
// time (issue, mbarrier wait, clock64 around it), LOADS boxes: box 0 at row band b (its own), then
// the box beside it (the same rows, 128 B further: the same 2 MiB pages), then boxes in bands
// 132 further each (new pages no other CTA reads). Per launch: `cold` after a 512 MiB write flush (a fresh L2),
// the first launch of the process (`first`: the code and the descriptor never seen before), and
// `warm`: the same boxes again with no flush (all in the L2). Grids of 1, 16 and 132 CTAs.
// Also: `prefetch`: the first box after `prefetch.tensormap` and a 4000-cycle spin. Two modes
// separate the address translation from the data (docs/calibration.md §46): `cold_touch`, the
// flush and then a kernel whose every CTA reads one word of each of the grid's box-0 bands (a
// line no timed box holds: the bands' 2 MiB pages translated, their boxes still in DRAM), and
// `warm_shift`, no flush but the launch before loads each CTA's box 0 and 1 from the band half a
// grid away (every box in the L2, each band's page last used by another SM).
// Columns: mode, grid, box (0..LOADS-1), cycles median/min/max over the CTAs (of the median
// launch of REPS), SM MHz from clock64 / %globaltimer. Then `warm_rows_R`: one CTA loading one
// box of R rows x 64 columns (R x 128 B) from the L2 (a first untimed load puts it there), the
// median, min and max of REPS x LOADS timed loads: the fixed cost of a 2D load and its per-line
// rate; `warm_bulk_B`: the same with a bulk copy of B = R x 128 contiguous bytes.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "device_common.cuh"

static const int LOADS = 6;
static const int REPS = 5;
static const u64 COLS = 8192, ROWS = 262144;  // 4 GiB: 2048 bands of 2 MiB

__global__ void fill_k(uint16_t* a, u64 n) {
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x)
    a[i] = (uint16_t)(i * 2654435761u >> 16);
}

// Every CTA reads one word of each box-0 band: the last row's column 8000, which no box loads.
__global__ void touch_bands(const uint16_t* a, int bands, u64* sink) {
  u64 acc = 0;
  for (int band = threadIdx.x; band < bands; band += blockDim.x)
    acc += a[((u64)band * 128 + 127) * COLS + 8000];
  if (acc == 0x5eed) sink[blockIdx.x] = acc;
}

__global__ void first_loads(const __grid_constant__ CUtensorMap map, int prefetch, int shift,
                            uint32_t* cyc, u64* clk, u64* sink) {
  extern __shared__ __align__(1024) uint8_t smem[];
  __shared__ __align__(8) u64 bar_s;
  if (threadIdx.x != 0) return;
  const u64 c00 = clock64(), g0 = gtimer();
  uint32_t bar = smem_u32(&bar_s);
  mbar_init(bar, 1);
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  if (prefetch) {
    asm volatile("prefetch.tensormap [%0];" ::"l"((u64)&map) : "memory");
    const u64 until = clock64() + 4000;
    while (clock64() < until) {
    }
  }
  const int b = blockIdx.x;
  u64 acc = 0;
  for (int i = 0; i < LOADS; i++) {
    // box 0: row band b; box 1: beside it; box i >= 2: band b + 132 (i - 1), no other CTA's
    const int col = i == 1 ? 64 : 0;
    const int band = i < 2 ? (b + shift) % (int)gridDim.x : b + 132 * (i - 1);
    const long long c0 = clock64();
    mbar_expect_tx(bar, 128 * 128);
    tma2d_g2s(smem_u32(smem), &map, col, band * 128, bar);
    mbar_wait(bar, (uint32_t)(i & 1));
    const long long c1 = clock64();
    cyc[b * LOADS + i] = (uint32_t)(c1 - c0);
    acc += smem[i * 97];
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
  sink[b] = acc;
  if (b == 0) {
    clk[0] = clock64() - c00;
    clk[1] = gtimer() - g0;
  }
}

// The latency of one warm load against its size: a box of `rows` rows x 64 columns of `map`
// (bulk = 0) or a bulk copy of the same bytes from `src` (bulk = 1), loaded once untimed (into the
// L2) and then LOADS times timed, one at a time.
__global__ void warm_load(const __grid_constant__ CUtensorMap map, const uint16_t* src, int bulk,
                          uint32_t bytes, uint32_t* cyc) {
  extern __shared__ __align__(1024) uint8_t smem[];
  __shared__ __align__(8) u64 bar_s;
  if (threadIdx.x != 0) return;
  uint32_t bar = smem_u32(&bar_s);
  mbar_init(bar, 1);
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  for (int i = 0; i <= LOADS; i++) {
    const long long c0 = clock64();
    mbar_expect_tx(bar, bytes);
    if (bulk)
      bulk_g2s(smem_u32(smem), src, bytes, bar);
    else
      tma2d_g2s(smem_u32(smem), &map, 0, 0, bar);
    mbar_wait(bar, (uint32_t)(i & 1));
    const long long c1 = clock64();
    if (i > 0) cyc[i - 1] = (uint32_t)(c1 - c0);
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: tma_first OUT.csv\n");
    return 2;
  }
  CK(cudaSetDevice(0));
  uint16_t* a;
  int4* fl;
  uint32_t* dcyc;
  u64 *dclk, *dsink;
  const u64 flush_n = (512ull << 20) / 16;
  CK(cudaMalloc(&a, COLS * ROWS * 2));
  CK(cudaMalloc(&fl, flush_n * 16));
  CK(cudaMalloc(&dcyc, 132 * LOADS * 4));
  CK(cudaMalloc(&dclk, 16));
  CK(cudaMalloc(&dsink, 132 * 8));
  fill_k<<<132 * 8, 256>>>(a, COLS * ROWS);
  CKL();
  CUtensorMap map;
  cuuint64_t gdim[2] = {COLS, ROWS};
  cuuint64_t gstride[1] = {COLS * 2};
  cuuint32_t box[2] = {64, 128};
  cuuint32_t estr[2] = {1, 1};
  CKD(cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, a, gdim, gstride, box, estr,
                             CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                             CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  const int smem = 16 * 1024 + 1024;
  CK(cudaFuncSetAttribute(first_loads, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  CK(cudaFuncSetAttribute(warm_load, cudaFuncAttributeMaxDynamicSharedMemorySize, 33 * 1024));
  FILE* f = fopen(argv[1], "w");
  fprintf(f, "mode,grid,box,cycles_med,cycles_min,cycles_max,reps,sm_mhz\n");
  std::vector<uint32_t> h(132 * LOADS);
  // before: 0 nothing, 1 touch_bands, 2 a launch loading the bands half a grid away
  auto measure = [&](const char* name, int grid, bool flush, int prefetch, int reps,
                     int before = 0) {
    std::vector<std::vector<double>> runs;  // per launch: every CTA's cycles, CTA-major
    std::vector<double> slowest, mhz;
    for (int r = 0; r < reps; r++) {
      if (flush) {
        flush_write<<<132 * 4, 256>>>(fl, flush_n, r + 1);
        CKL();
      }
      if (before == 1) {
        touch_bands<<<grid, 32>>>(a, grid, dsink);
        CKL();
      } else if (before == 2) {
        first_loads<<<grid, 32, smem>>>(map, 0, grid / 2, dcyc, dclk, dsink);
        CKL();
      }
      CK(cudaDeviceSynchronize());
      first_loads<<<grid, 32, smem>>>(map, prefetch, 0, dcyc, dclk, dsink);
      CKL();
      CK(cudaDeviceSynchronize());
      CK(cudaMemcpy(h.data(), dcyc, grid * LOADS * 4, cudaMemcpyDeviceToHost));
      u64 c[2];
      CK(cudaMemcpy(c, dclk, 16, cudaMemcpyDeviceToHost));
      mhz.push_back(c[1] ? (double)c[0] / (double)c[1] * 1000.0 : 0.0);
      std::vector<double> v(h.begin(), h.begin() + grid * LOADS);
      slowest.push_back(*std::max_element(v.begin(), v.end()));
      runs.push_back(v);
    }
    // the launch whose slowest load is the median one
    std::vector<size_t> order(reps);
    for (int r = 0; r < reps; r++) order[r] = r;
    std::sort(order.begin(), order.end(),
              [&](size_t x, size_t y) { return slowest[x] < slowest[y]; });
    const size_t pick = order[reps / 2];
    for (int i = 0; i < LOADS; i++) {
      std::vector<double> col;
      for (int b = 0; b < grid; b++) col.push_back(runs[pick][b * LOADS + i]);
      std::sort(col.begin(), col.end());
      fprintf(f, "%s,%d,%d,%.0f,%.0f,%.0f,%d,%.0f\n", name, grid, i, col[col.size() / 2],
              col.front(), col.back(), reps, mhz[pick]);
    }
    fflush(f);
  };
  measure("first", 1, true, 0, 1);  // the process's first launch: code and descriptor never seen
  for (int grid : {1, 16, 132}) {
    measure("cold", grid, true, 0, REPS);
    measure("warm", grid, false, 0, REPS);
    measure("prefetch", grid, true, 1, REPS);
    measure("cold_touch", grid, true, 0, REPS, 1);
    measure("warm_shift", grid, false, 0, REPS, 2);
  }
  // warm boxes of 1 to 256 rows (128 B each), one CTA: the fixed cost and the per-line rate
  for (uint32_t rows : {1u, 8u, 32u, 64u, 128u, 256u}) {
    CUtensorMap m;
    cuuint32_t b[2] = {64, rows};
    CKD(cuTensorMapEncodeTiled(&m, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, a, gdim, gstride, b, estr,
                               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                               CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
    for (int bulk = 0; bulk < 2; bulk++) {
      std::vector<double> all;
      for (int r = 0; r < REPS; r++) {
        warm_load<<<1, 32, 33 * 1024>>>(m, a, bulk, rows * 128, dcyc);
        CKL();
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(h.data(), dcyc, LOADS * 4, cudaMemcpyDeviceToHost));
        for (int i = 0; i < LOADS; i++) all.push_back(h[i]);
      }
      std::sort(all.begin(), all.end());
      fprintf(f, "%s_%u,1,all,%.0f,%.0f,%.0f,%d,\n", bulk ? "warm_bulk" : "warm_rows",
              bulk ? rows * 128 : rows, all[all.size() / 2], all.front(), all.back(), REPS);
    }
  }
  fclose(f);
  printf("wrote %s\n", argv[1]);
  return 0;
}
