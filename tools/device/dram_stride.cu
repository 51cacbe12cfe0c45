// dram_stride.cu -- strided DRAM traffic through 2D TMA boxes (simfa issue 17, item 2).
//
//   dram_stride run OUT.csv     bandwidth and latency for every row pitch
//   dram_stride ncu             one warm-up + one launch of the plain stream (for ncu -k stride_bw)
//
// Build: nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o dram_stride dram_stride.cu
// -lcuda
//
// The tensor: fp16, R rows x C = P/2 columns, row pitch P bytes (so the rows are back to back and
// the whole footprint R*P ~ 2 GiB, 34x the L2, is read exactly once per bandwidth launch). The
// buffer holds pat(e) at linear element e, so every pitch checks its boxes against one fill.
// Box: box_rows x 64 fp16 (128 B per row: one L2 line), SWIZZLE_128B, L2_PROMOTION_128B, the
// GEMM operand boxes' form (A: 128x64, B: 128x64 or 256x64).
//
// bandwidth: grid 132 (one CTA per SM, >130 KB dynamic smem), one thread per CTA issuing
//   cp.async.bulk.tensor.2d through 8 mbarrier stages (membench.cu's tma_2d pipeline). Box t of
//   CTA b is t = b + k*132, and t maps to (band, col):
//     vertical   band = t % bands, col = t / bands: the boxes in flight are one 128 B column of
//                consecutive rows, i.e. every request is base + col*128 + row*P (the access of a
//                K-loop over A or B rows P = 2K bytes apart);
//     horizontal col = t % cols, band = t / cols: boxes in flight are side by side along rows.
//   1 warm-up + 6 timed launches, cudaEvent median; three elements of every 8th box are checked.
//   panel      CTA b walks the columns of its own 128-row band (a GEMM K loop over one operand
//              panel), then the band 132 further down; cap boxes per CTA (256 with 132 CTAs,
//              528 MiB; 1024 with one CTA, 16 MiB), 6 or 2 stages, a 512 MiB read flush before
//              every launch; cycles_per_box = block 0's clock64 cycles / its boxes.
// latency: one CTA, one thread, one box at a time (issue, mbarrier wait, next), vertical order
//   from box 0, after a 512 MiB read flush: clock64 per box (median, p10, p90 over 1024 boxes).
// Clock: clock64 / %globaltimer of block 0 in every launch.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "device_common.cuh"

#define MAXST 16



struct Geo {
  uint32_t bands, cols, box_r, pitch_elems;  // pitch_elems = P/2 = C
};

__device__ static inline void tile_of(uint32_t t, const Geo& g, int order, uint32_t& band,
                                      uint32_t& col) {
  if (order == 0) {  // vertical
    band = t % g.bands;
    col = t / g.bands;
  } else {
    col = t % g.cols;
    band = t / g.cols;
  }
}

__device__ static inline uint32_t check_box(const uint8_t* slot, uint32_t band, uint32_t col,
                                            const Geo& g) {
  const uint16_t* h = (const uint16_t*)slot;
  uint32_t err = 0;
  const uint32_t rr[3] = {0, g.box_r - 1, g.box_r / 2};
  const uint32_t cc[3] = {0, 63, 9};
  for (int q = 0; q < 3; q++) {
    u64 row = (u64)band * g.box_r + rr[q];
    u64 e = row * g.pitch_elems + (u64)col * 64 + cc[q];
    if (h[swz_off(rr[q], cc[q]) / 2] != pat(e)) err++;
  }
  return err;
}

__global__ void stride_bw(const __grid_constant__ CUtensorMap map, Geo g, int order, int stages,
                          u64* errors, u64* clk) {
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  __shared__ __align__(8) u64 bars[MAXST];
  if (threadIdx.x != 0) return;
  uint8_t* smem = (uint8_t*)(((uintptr_t)smem_raw + 1023) & ~(uintptr_t)1023);
  u64 c0 = clock64(), g0 = gtimer();
  const uint32_t box_bytes = g.box_r * 128;
  for (int s = 0; s < stages; s++) mbar_init(smem_u32(&bars[s]), 1);
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  const uint32_t n_tiles = g.bands * g.cols;
  const uint32_t my_n =
      n_tiles > blockIdx.x ? (n_tiles - blockIdx.x + gridDim.x - 1) / gridDim.x : 0;
  uint32_t parity = 0;
  u64 err = 0;
  int s = 0;
  for (uint32_t k = 0; k < my_n + stages; k++) {
    uint32_t bar = smem_u32(&bars[s]);
    uint8_t* slot = smem + (size_t)s * box_bytes;
    if (k >= (uint32_t)stages) {
      mbar_wait(bar, (parity >> s) & 1u);
      parity ^= 1u << s;
      uint32_t r = k - stages;
      if ((r & 7) == 0 || r + 1 == my_n) {
        uint32_t band, col;
        tile_of(blockIdx.x + r * gridDim.x, g, order, band, col);
        err += check_box(slot, band, col, g);
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      }
    }
    if (k < my_n) {
      uint32_t band, col;
      tile_of(blockIdx.x + k * gridDim.x, g, order, band, col);
      mbar_expect_tx(bar, box_bytes);
      tma2d_g2s(smem_u32(slot), &map, (int)(col * 64), (int)(band * g.box_r), bar);
    }
    if (++s == stages) s = 0;
  }
  if (err) atomicAdd(errors, err);
  if (blockIdx.x == 0) {
    clk[0] = clock64() - c0;
    clk[1] = gtimer() - g0;
  }
}

// GEMM-like panels: CTA b streams the boxes of its own row band along the columns (a K loop
// over one operand panel of box_r rows with row pitch P), then the band 132 further down:
// local box k -> band = b + (k / cols) * gridDim.x, col = k % cols, for k < cap.
// clk[2] = block 0's boxes, so clk[0] / clk[2] = cycles per box of one CTA.
__global__ void stride_panel(const __grid_constant__ CUtensorMap map, Geo g, int stages,
                             uint32_t cap, u64* errors, u64* clk) {
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  __shared__ __align__(8) u64 bars[MAXST];
  if (threadIdx.x != 0) return;
  uint8_t* smem = (uint8_t*)(((uintptr_t)smem_raw + 1023) & ~(uintptr_t)1023);
  u64 c0 = clock64(), g0 = gtimer();
  const uint32_t box_bytes = g.box_r * 128;
  for (int s = 0; s < stages; s++) mbar_init(smem_u32(&bars[s]), 1);
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  const uint32_t my_n = cap;
  uint32_t parity = 0;
  u64 err = 0;
  int s = 0;
  for (uint32_t k = 0; k < my_n + stages; k++) {
    uint32_t bar = smem_u32(&bars[s]);
    uint8_t* slot = smem + (size_t)s * box_bytes;
    if (k >= (uint32_t)stages) {
      mbar_wait(bar, (parity >> s) & 1u);
      parity ^= 1u << s;
      uint32_t r = k - stages;
      if ((r & 7) == 0 || r + 1 == my_n) {
        uint32_t band = blockIdx.x + (r / g.cols) * gridDim.x, col = r % g.cols;
        err += check_box(slot, band, col, g);
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      }
    }
    if (k < my_n) {
      uint32_t band = blockIdx.x + (k / g.cols) * gridDim.x, col = k % g.cols;
      mbar_expect_tx(bar, box_bytes);
      tma2d_g2s(smem_u32(slot), &map, (int)(col * 64), (int)(band * g.box_r), bar);
    }
    if (++s == stages) s = 0;
  }
  if (err) atomicAdd(errors, err);
  if (blockIdx.x == 0) {
    clk[0] = clock64() - c0;
    clk[1] = gtimer() - g0;
    clk[2] = my_n;
  }
}

// One box at a time: cyc[i] = clock64 from the issue of box i to its mbarrier completing.
__global__ void stride_lat(const __grid_constant__ CUtensorMap map, Geo g, int n, uint32_t* cyc,
                           u64* errors, u64* clk) {
  __shared__ __align__(1024) uint8_t slot[128 * 128];
  __shared__ __align__(8) u64 bar_s;
  if (threadIdx.x != 0) return;
  uint32_t bar = smem_u32(&bar_s);
  mbar_init(bar, 1);
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  u64 c00 = clock64(), g0 = gtimer();
  u64 err = 0;
  for (int i = 0; i < n; i++) {
    uint32_t band, col;
    tile_of((uint32_t)i, g, 0, band, col);
    long long c0 = clock64();
    mbar_expect_tx(bar, g.box_r * 128);
    tma2d_g2s(smem_u32(slot), &map, (int)(col * 64), (int)(band * g.box_r), bar);
    mbar_wait(bar, (uint32_t)(i & 1));
    long long c1 = clock64();
    cyc[i] = (uint32_t)(c1 - c0);
    err += check_box(slot, band, col, g);
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
  if (err) atomicAdd(errors, err);
  clk[0] = clock64() - c00;
  clk[1] = gtimer() - g0;
}


static const u64 TOT = 2ull << 30;   // the vertical / horizontal streams read this much
static const u64 BIG = 17ull << 30;  // allocated and filled: panels at 1 MiB pitch need 16.5 GiB

struct Dev {
  uint16_t* a = nullptr;
  int4* flush = nullptr;
  int* sink = nullptr;
  u64* derr = nullptr;
  u64* dclk = nullptr;
  uint32_t* dcyc = nullptr;
  int sms = 0;
};

static Geo make_map(Dev& d, u64 P, uint32_t box_r, CUtensorMap* map, u64* rows_out, u64 rows = 0) {
  u64 R = rows ? rows : TOT / P;
  R -= R % 128;
  Geo g;
  g.box_r = box_r;
  g.pitch_elems = (uint32_t)(P / 2);
  g.cols = (uint32_t)(P / 128);
  g.bands = (uint32_t)(R / box_r);
  cuuint64_t gdim[2] = {P / 2, R};
  cuuint64_t gstride[1] = {P};
  cuuint32_t box[2] = {64, box_r};
  cuuint32_t estr[2] = {1, 1};
  CKD(cuTensorMapEncodeTiled(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, d.a, gdim, gstride, box, estr,
                             CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                             CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  *rows_out = R;
  return g;
}

static double clk_mhz(Dev& d) {
  u64 h[2];
  CK(cudaMemcpy(h, d.dclk, 16, cudaMemcpyDeviceToHost));
  return h[1] ? (double)h[0] / (double)h[1] * 1000.0 : 0.0;
}

static void setup(Dev& d, bool with_flush) {
  CK(cudaSetDevice(0));
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  d.sms = p.multiProcessorCount;
  CK(cudaMalloc(&d.a, BIG));
  fill_pat<<<d.sms * 8, 256>>>(d.a, BIG / 2);
  CKL();
  if (with_flush) {
    CK(cudaMalloc(&d.flush, 512ull << 20));
    CK(cudaMemset(d.flush, 1, 512ull << 20));
  }
  CK(cudaMalloc(&d.sink, 4));
  CK(cudaMalloc(&d.derr, 8));
  CK(cudaMalloc(&d.dclk, 24));
  CK(cudaMalloc(&d.dcyc, 4096 * 4));
  CK(cudaFuncSetAttribute(stride_bw, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
  CK(cudaFuncSetAttribute(stride_panel, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
  CK(cudaDeviceSynchronize());
}

static const int STAGES = 8;

static void run(const char* out) {
  Dev d;
  setup(d, true);
  FILE* f = fopen(out, "w");
  if (!f) exit(1);
  fprintf(f,
          "mode,order,pitch_bytes,box_rows,box_cols,box_bytes,rows,stages,ctas,bytes_moved,reps,"
          "median_ms,GBps,best_GBps,lat_cycles_med,lat_cycles_p10,lat_cycles_p90,lat_ns_med,"
          "sm_clock_mhz,errors,cycles_per_box\n");
  std::vector<u64> pitches;
  for (u64 p = 256; p <= (1ull << 20); p *= 2) pitches.push_back(p);
  for (u64 p : {3072ull, 65536ull + 128, 98304ull, 196608ull + 128}) pitches.push_back(p);
  std::sort(pitches.begin(), pitches.end());
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (u64 P : pitches) {
    struct BwCase {
      uint32_t box_r;
      int order;
    };
    const BwCase cases[] = {{64, 0}, {128, 0}, {64, 1}};
    for (const BwCase& bc : cases) {
      CUtensorMap map;
      u64 R;
      Geo g = make_map(d, P, bc.box_r, &map, &R);
      u64 bytes = (u64)g.bands * g.cols * g.box_r * 128;
      size_t dsm = std::max<size_t>(STAGES * g.box_r * 128 + 1024, 130 * 1024);
      std::vector<double> ms, mhz;
      u64 errors = 0;
      for (int r = 0; r < 7; r++) {
        CK(cudaMemset(d.derr, 0, 8));
        CK(cudaEventRecord(e0));
        stride_bw<<<d.sms, 32, dsm>>>(map, g, bc.order, STAGES, d.derr, d.dclk);
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        CKL();
        float t;
        CK(cudaEventElapsedTime(&t, e0, e1));
        u64 e;
        CK(cudaMemcpy(&e, d.derr, 8, cudaMemcpyDeviceToHost));
        errors += e;
        if (r == 0) continue;
        ms.push_back(t);
        mhz.push_back(clk_mhz(d));
      }
      double med = median(ms), best = *std::min_element(ms.begin(), ms.end());
      fprintf(f, "bw,%s,%llu,%u,64,%u,%llu,%d,%d,%llu,%zu,%.4f,%.1f,%.1f,,,,,%.0f,%llu,\n",
              bc.order == 0 ? "vertical" : "horizontal", P, g.box_r, g.box_r * 128,
              (unsigned long long)R, STAGES, d.sms, (unsigned long long)bytes, ms.size(), med,
              bytes / (med * 1e-3) / 1e9, bytes / (best * 1e-3) / 1e9, median(mhz),
              (unsigned long long)errors);
      fflush(f);
      printf("bw  %-10s pitch %8llu box %3ux64: %8.1f GB/s (best %8.1f) @%4.0f MHz err %llu\n",
             bc.order == 0 ? "vertical" : "horizontal", P, g.box_r, bytes / (med * 1e-3) / 1e9,
             bytes / (best * 1e-3) / 1e9, median(mhz), (unsigned long long)errors);
      fflush(stdout);
    }
    // GEMM-like panels: 132 CTAs (cap 256 boxes each) and one CTA (cap 1024), 128x64 boxes,
    // 6 stages (the 128x128x64 s3 GEMM's A+B boxes in flight), flushed before every launch
    struct PanelCase {
      int grid;
      uint32_t cap;
      int stages;
    };
    const PanelCase pcs[] = {{0, 256, 6}, {1, 1024, 6}, {1, 1024, 2}};
    for (const PanelCase& pc : pcs) {
      const int grid = pc.grid ? pc.grid : d.sms;
      const uint32_t cols = (uint32_t)(P / 128);
      const u64 bands_needed = (u64)((pc.cap + cols - 1) / cols) * grid;
      CUtensorMap map;
      u64 R;
      Geo g = make_map(d, P, 128, &map, &R, bands_needed * 128);
      if (R * P > BIG || g.bands < bands_needed) {
        printf("panel pitch %llu grid %d: does not fit\n", P, grid);
        continue;
      }
      u64 bytes = (u64)grid * pc.cap * 128 * 128;
      size_t dsm = std::max<size_t>(pc.stages * 128 * 128 + 1024, 130 * 1024);
      std::vector<double> ms, mhz, cpb;
      u64 errors = 0;
      for (int r = 0; r < 7; r++) {
        flush_read<<<d.sms * 8, 512>>>(d.flush, (512ull << 20) / 16, d.sink);
        CKL();
        CK(cudaMemset(d.derr, 0, 8));
        CK(cudaEventRecord(e0));
        stride_panel<<<grid, 32, dsm>>>(map, g, pc.stages, pc.cap, d.derr, d.dclk);
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        CKL();
        float t;
        CK(cudaEventElapsedTime(&t, e0, e1));
        u64 e;
        CK(cudaMemcpy(&e, d.derr, 8, cudaMemcpyDeviceToHost));
        errors += e;
        if (r == 0) continue;
        u64 h[3];
        CK(cudaMemcpy(h, d.dclk, 24, cudaMemcpyDeviceToHost));
        ms.push_back(t);
        mhz.push_back(h[1] ? (double)h[0] / (double)h[1] * 1000.0 : 0.0);
        cpb.push_back(h[2] ? (double)h[0] / (double)h[2] : 0.0);
      }
      double med = median(ms), best = *std::min_element(ms.begin(), ms.end());
      const char* on = grid == 1 ? "panel_1cta" : "panel";
      fprintf(f, "bw,%s,%llu,128,64,16384,%llu,%d,%d,%llu,%zu,%.4f,%.1f,%.1f,,,,,%.0f,%llu,%.1f\n",
              on, P, (unsigned long long)R, pc.stages, grid, (unsigned long long)bytes, ms.size(),
              med, bytes / (med * 1e-3) / 1e9, bytes / (best * 1e-3) / 1e9, median(mhz),
              (unsigned long long)errors, median(cpb));
      fflush(f);
      printf(
          "bw  %-10s pitch %8llu 128x64 grid %3d st %d: %8.1f GB/s (best %8.1f) %7.1f cyc/box "
          "@%4.0f MHz err %llu\n",
          on, P, grid, pc.stages, bytes / (med * 1e-3) / 1e9, bytes / (best * 1e-3) / 1e9,
          median(cpb), median(mhz), (unsigned long long)errors);
      fflush(stdout);
    }
    for (uint32_t box_r : {1u, 64u, 128u}) {
      CUtensorMap map;
      u64 R;
      Geo g = make_map(d, P, box_r, &map, &R);
      const int n = 1024;
      flush_read<<<d.sms * 8, 512>>>(d.flush, (512ull << 20) / 16, d.sink);
      CKL();
      CK(cudaMemset(d.derr, 0, 8));
      stride_lat<<<1, 32>>>(map, g, n, d.dcyc, d.derr, d.dclk);
      CKL();
      CK(cudaDeviceSynchronize());
      std::vector<uint32_t> h(n);
      CK(cudaMemcpy(h.data(), d.dcyc, n * 4, cudaMemcpyDeviceToHost));
      u64 e;
      CK(cudaMemcpy(&e, d.derr, 8, cudaMemcpyDeviceToHost));
      double mhz = clk_mhz(d);
      std::vector<double> v(h.begin() + 1, h.end());  // drop the first (descriptor fetch)
      double m = median(v);
      fprintf(f, "lat,vertical,%llu,%u,64,%u,%llu,1,1,%llu,%zu,,,,%.1f,%.1f,%.1f,%.1f,%.0f,%llu,\n",
              P, box_r, box_r * 128, (unsigned long long)R, (unsigned long long)n * box_r * 128,
              v.size(), m, pct(v, 0.1), pct(v, 0.9), m / mhz * 1000.0, mhz, (unsigned long long)e);
      fflush(f);
      printf(
          "lat pitch %8llu box %3ux64: %7.1f cycles (p10 %7.1f p90 %7.1f) %6.1f ns @%4.0f MHz "
          "err %llu\n",
          P, box_r, m, pct(v, 0.1), pct(v, 0.9), m / mhz * 1000.0, mhz, (unsigned long long)e);
      fflush(stdout);
    }
  }
  fclose(f);
}

static void ncu_mode() {
  Dev d;
  setup(d, false);
  CUtensorMap map;
  u64 R;
  Geo g = make_map(d, 4096, 64, &map, &R);
  size_t dsm = std::max<size_t>(STAGES * g.box_r * 128 + 1024, 130 * 1024);
  for (int r = 0; r < 2; r++) {
    CK(cudaMemset(d.derr, 0, 8));
    stride_bw<<<d.sms, 32, dsm>>>(map, g, 1, STAGES, d.derr, d.dclk);
    CKL();
    CK(cudaDeviceSynchronize());
  }
  u64 e;
  CK(cudaMemcpy(&e, d.derr, 8, cudaMemcpyDeviceToHost));
  printf("ncu stream: pitch 4096 horizontal 64x64, %llu bytes, errors %llu, clk %.0f MHz\n",
         (unsigned long long)((u64)g.bands * g.cols * 8192), (unsigned long long)e, clk_mhz(d));
}

int main(int argc, char** argv) {
  if (argc >= 3 && !strcmp(argv[1], "run")) {
    run(argv[2]);
  } else if (argc >= 2 && !strcmp(argv[1], "ncu")) {
    ncu_mode();
  } else {
    fprintf(stderr, "usage: %s run OUT.csv | ncu\n", argv[0]);
    return 2;
  }
  CK(cudaDeviceSynchronize());
  return 0;
}
