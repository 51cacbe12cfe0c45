// tma_load.cu -- 2D TMA boxes under load and at the tensor's edge (simfa issues 17 and 10).
//
//   tma_load run OUT.csv     both experiments below, one CSV
//   tma_load ncu             one launch of each edge case (for ncu -k edge_stream)
//
// Build: nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o tma_load tma_load.cu -lcuda
//
// `panel`: how one SM's stream of boxes from DRAM slows as more SMs stream beside it. G CTAs (one
//   an SM), one thread each; CTA b walks the 64 columns of its own 128-row band of an fp16 tensor
//   with rows P = 8 KiB apart (a GEMM K loop over a 128 x 4096 operand panel), then the band G
//   further down, 256 boxes of 128 x 64 (16 KiB) through S mbarrier stages; a 512 MiB read flush
//   before every launch (cold L2). `cyc_box_*` are over the G CTAs' own clock64 cycles per box.
// `edge`: what a box's rows past the tensor's edge cost. An fp16 tensor of R rows (128 or 256) x
//   4096 columns, rows 8 KiB apart (1 or 2 MiB, L2-resident after the warm-up launch), read as
//   boxes of B rows x 64 columns at row 0 (or at row R: a box wholly outside), column (b + k G)
//   mod 64 for the k-th box of CTA b; 1 CTA and 132, 1 stage (each box waits for the last: its
//   latency) and 4. A box of 256 rows over a 128-row tensor is half outside: the TMA unit fills
//   its last 128 rows with zeros, and the mbarrier still counts the whole box's bytes.
// Every 8th box is checked (3 in-bounds elements against the fill, 1 outside against 0).
// Clock: block 0's clock64 / %globaltimer in every launch. 1 warm-up + 6 timed launches, medians.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "device_common.cuh"

#define MAXST 8



static const uint32_t PITCH_ELEMS = 4096;  // 8 KiB rows
static const uint32_t COLS = PITCH_ELEMS / 64;

struct Stream {
  uint32_t box_r;        // rows a box
  uint32_t tensor_rows;  // rows of the tensor (the edge)
  uint32_t row0;         // edge: the boxes' first row
  int panel;             // 1: CTA b's band b + (k / COLS) G, column k % COLS; 0: edge layout
  uint32_t cap;          // boxes a CTA
};

__device__ static inline void box_of(const Stream& s, uint32_t k, uint32_t& row, uint32_t& col) {
  if (s.panel) {
    row = (blockIdx.x + (k / COLS) * gridDim.x) * s.box_r;
    col = k % COLS;
  } else {
    row = s.row0;
    col = (blockIdx.x + k * gridDim.x) % COLS;
  }
}

__device__ static inline uint32_t check_box(const uint8_t* slot, uint32_t row, uint32_t col,
                                            const Stream& s) {
  const uint16_t* h = (const uint16_t*)slot;
  uint32_t err = 0;
  const uint32_t rr[4] = {0, s.box_r / 2 - 1, s.box_r - 1, s.box_r / 2};
  const uint32_t cc[4] = {0, 9, 63, 33};
  for (int q = 0; q < 4; q++) {
    u64 r = (u64)row + rr[q];
    uint16_t want = r < s.tensor_rows ? pat(r * PITCH_ELEMS + (u64)col * 64 + cc[q]) : 0;
    if (h[swz_off(rr[q], cc[q]) / 2] != want) err++;
  }
  return err;
}

// One thread a CTA: box k waits for stage k - stages before it is issued. cta_cyc[b] = CTA b's
// clock64 cycles from its first issue to its last box's arrival; clk = block 0's clock64 and
// %globaltimer spans.
__global__ void box_stream(const __grid_constant__ CUtensorMap map, Stream s, int stages,
                           u64* errors, u64* clk, uint32_t* cta_cyc) {
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  __shared__ __align__(8) u64 bars[MAXST];
  if (threadIdx.x != 0) return;
  uint8_t* smem = (uint8_t*)(((uintptr_t)smem_raw + 1023) & ~(uintptr_t)1023);
  const uint32_t box_bytes = s.box_r * 128;
  for (int i = 0; i < stages; i++) mbar_init(smem_u32(&bars[i]), 1);
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  u64 c0 = clock64(), g0 = gtimer();
  uint32_t parity = 0;
  u64 err = 0;
  int st = 0;
  for (uint32_t k = 0; k < s.cap + stages; k++) {
    uint32_t bar = smem_u32(&bars[st]);
    uint8_t* slot = smem + (size_t)st * box_bytes;
    if (k >= (uint32_t)stages) {
      mbar_wait(bar, (parity >> st) & 1u);
      parity ^= 1u << st;
      uint32_t r = k - stages;
      if ((r & 7) == 0 || r + 1 == s.cap) {
        uint32_t row, col;
        box_of(s, r, row, col);
        err += check_box(slot, row, col, s);
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      }
    }
    if (k < s.cap) {
      uint32_t row, col;
      box_of(s, k, row, col);
      mbar_expect_tx(bar, box_bytes);
      tma2d_g2s(smem_u32(slot), &map, (int)(col * 64), (int)row, bar);
    }
    if (++st == stages) st = 0;
  }
  u64 c1 = clock64();
  cta_cyc[blockIdx.x] = (uint32_t)(c1 - c0);
  if (err) atomicAdd(errors, err);
  if (blockIdx.x == 0) {
    clk[0] = c1 - c0;
    clk[1] = gtimer() - g0;
  }
}


static const u64 PANEL_ROWS = 132ull * 4 * 128;  // 4 bands of 128 rows per CTA: 552 MiB

struct Dev {
  uint16_t* a = nullptr;
  int4* flush = nullptr;
  int* sink = nullptr;
  u64* derr = nullptr;
  u64* dclk = nullptr;
  uint32_t* dcta = nullptr;
  int sms = 0;
};

static void make_map(Dev& d, u64 rows, uint32_t box_r, CUtensorMap* map) {
  cuuint64_t gdim[2] = {PITCH_ELEMS, rows};
  cuuint64_t gstride[1] = {PITCH_ELEMS * 2};
  cuuint32_t box[2] = {64, box_r};
  cuuint32_t estr[2] = {1, 1};
  CKD(cuTensorMapEncodeTiled(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, d.a, gdim, gstride, box, estr,
                             CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                             CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
}

static void setup(Dev& d) {
  CK(cudaSetDevice(0));
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  d.sms = p.multiProcessorCount;
  const u64 elems = PANEL_ROWS * PITCH_ELEMS;
  CK(cudaMalloc(&d.a, elems * 2));
  fill_pat<<<d.sms * 8, 256>>>(d.a, elems);
  CKL();
  CK(cudaMalloc(&d.flush, 512ull << 20));
  CK(cudaMemset(d.flush, 1, 512ull << 20));
  CK(cudaMalloc(&d.sink, 4));
  CK(cudaMalloc(&d.derr, 8));
  CK(cudaMalloc(&d.dclk, 16));
  CK(cudaMalloc(&d.dcta, 1024 * 4));
  CK(cudaFuncSetAttribute(box_stream, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
  CK(cudaDeviceSynchronize());
}

struct Case {
  const char* exp;
  u64 tensor_rows;
  uint32_t box_r, row0;
  int panel, grid, stages;
  uint32_t cap;
  bool cold;
};

static void run_case(Dev& d, FILE* f, const Case& c, cudaEvent_t e0, cudaEvent_t e1) {
  CUtensorMap map;
  make_map(d, c.tensor_rows, c.box_r, &map);
  Stream s{c.box_r, (uint32_t)c.tensor_rows, c.row0, c.panel, c.cap};
  const size_t dsm = std::max<size_t>((size_t)c.stages * c.box_r * 128 + 1024, 130 * 1024);
  std::vector<double> ms, mhz, cpb_med, cpb_p10, cpb_p90;
  u64 errors = 0;
  std::vector<uint32_t> h(c.grid);
  for (int r = 0; r < 7; r++) {
    if (c.cold) {
      flush_read<<<d.sms * 8, 512>>>(d.flush, (512ull << 20) / 16, d.sink);
      CKL();
    }
    CK(cudaMemset(d.derr, 0, 8));
    CK(cudaEventRecord(e0));
    box_stream<<<c.grid, 32, dsm>>>(map, s, c.stages, d.derr, d.dclk, d.dcta);
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    CKL();
    float t;
    CK(cudaEventElapsedTime(&t, e0, e1));
    u64 e;
    CK(cudaMemcpy(&e, d.derr, 8, cudaMemcpyDeviceToHost));
    errors += e;
    if (r == 0) continue;  // warm-up (and, for `edge`, what puts the tensor in the L2)
    u64 k[2];
    CK(cudaMemcpy(k, d.dclk, 16, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(h.data(), d.dcta, c.grid * 4, cudaMemcpyDeviceToHost));
    std::vector<double> per(h.begin(), h.end());
    for (double& x : per) x /= c.cap;
    ms.push_back(t);
    mhz.push_back(k[1] ? (double)k[0] / (double)k[1] * 1000.0 : 0.0);
    cpb_med.push_back(median(per));
    cpb_p10.push_back(pct(per, 0.1));
    cpb_p90.push_back(pct(per, 0.9));
  }
  const double bytes = (double)c.grid * c.cap * c.box_r * 128;
  const double med = median(ms);
  fprintf(f, "%s,%s,%llu,%u,%u,%d,%d,%u,%zu,%.4f,%.1f,%.1f,%.1f,%.1f,%.0f,%llu\n", c.exp,
          c.cold ? "cold" : "warm", (unsigned long long)c.tensor_rows, c.box_r, c.row0, c.grid,
          c.stages, c.cap, ms.size(), med, bytes / (med * 1e-3) / 1e9, median(cpb_med),
          median(cpb_p10), median(cpb_p90), median(mhz), (unsigned long long)errors);
  fflush(f);
  printf("%-5s %s rows %6llu box %3u row0 %3u grid %3d st %d: %8.1f cyc/box (p10 %7.1f p90 %7.1f)"
         " %7.1f GB/s @%4.0f MHz err %llu\n",
         c.exp, c.cold ? "cold" : "warm", (unsigned long long)c.tensor_rows, c.box_r, c.row0, c.grid,
         c.stages, median(cpb_med), median(cpb_p10), median(cpb_p90), bytes / (med * 1e-3) / 1e9,
         median(mhz), (unsigned long long)errors);
  fflush(stdout);
}

static std::vector<Case> edge_cases(int sms) {
  std::vector<Case> cs;
  struct E {
    u64 rows;
    uint32_t box_r, row0;
  };
  // in bounds 128, in bounds 256, half outside, wholly outside
  const E es[] = {{128, 128, 0}, {256, 256, 0}, {128, 256, 0}, {128, 128, 128}};
  for (const E& e : es)
    for (int grid : {1, sms})
      for (int stages : {1, 4}) cs.push_back({"edge", e.rows, e.box_r, e.row0, 0, grid, stages,
                                               256, false});
  return cs;
}

static void run(const char* out) {
  Dev d;
  setup(d);
  FILE* f = fopen(out, "w");
  if (!f) exit(1);
  fprintf(f,
          "exp,l2,tensor_rows,box_rows,row0,ctas,stages,boxes_per_cta,reps,median_ms,GBps,"
          "cyc_box_med,cyc_box_p10,cyc_box_p90,sm_clock_mhz,errors\n");
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int stages : {6, 2})
    for (int grid : {1, 2, 4, 8, 16, 33, 66, 99, 110, 132})
      run_case(d, f, {"panel", PANEL_ROWS, 128, 0, 1, std::min(grid, d.sms), stages, 256, true}, e0,
               e1);
  for (const Case& c : edge_cases(d.sms)) run_case(d, f, c, e0, e1);
  fclose(f);
}

// One warm-up and one launch of each edge case at 132 CTAs, 4 stages, for Nsight Compute.
static void ncu_mode() {
  Dev d;
  setup(d);
  for (const Case& c : edge_cases(d.sms)) {
    if (c.grid != d.sms || c.stages != 4) continue;
    CUtensorMap map;
    make_map(d, c.tensor_rows, c.box_r, &map);
    Stream s{c.box_r, (uint32_t)c.tensor_rows, c.row0, 0, c.cap};
    const size_t dsm = std::max<size_t>((size_t)c.stages * c.box_r * 128 + 1024, 130 * 1024);
    for (int r = 0; r < 2; r++)
      box_stream<<<c.grid, 32, dsm>>>(map, s, c.stages, d.derr, d.dclk, d.dcta);
    CK(cudaDeviceSynchronize());
    CKL();
    printf("ncu edge rows %llu box %u row0 %u\n", (unsigned long long)c.tensor_rows, c.box_r,
           c.row0);
  }
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
  return 0;
}
