// membench.cu -- H200 memory-hierarchy microbenchmarks for simfa issue 4.
//
//   props                       device properties (key=value lines)
//   chase  OUT.csv LAT.csv [TMA.csv]  pointer-chase latency vs working set (warm L2 and cold L2)
//   tchase TMA.csv              the same chain through cp.async.bulk + mbarrier only
//   bw     OUT.csv              DRAM stream read, cudaMemcpy D2D, TMA bulk, TMA 2D tensor copies
//
// Build (sm_90a for cp.async.bulk / tensor maps):
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o membench membench.cu -lcuda
// Every CUDA call is checked; every kernel that moves data checks what it moved.
// Timing: cudaEvent around each kernel, median of repetitions; in-kernel clock64 and
// %globaltimer (block 0, thread 0) give the effective SM clock of each measurement.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "device_common.cuh"


static int g_num_sms = 0;

// ---------------------------------------------------------------------------------------
// Pointer chase
// ---------------------------------------------------------------------------------------
// Line i of the working set holds, in its first 8 bytes, the address of the next line of
// a single random cycle over all lines (Sattolo). One thread follows it with ld.global.cg
// (__ldcg: cached in L2 only, L1 bypassed).
__global__ void build_chain(u64* base, const uint32_t* perm, size_t n, size_t stride_words) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  size_t step = (size_t)gridDim.x * blockDim.x;
  for (; i < n; i += step) {
    size_t a = perm[i], b = perm[(i + 1) % n];
    base[a * stride_words] = (u64)(base + b * stride_words);
  }
}

// res[0]=cycles, res[1]=ns (globaltimer), res[2]=final pointer (keeps the chain live)
__global__ void chase(u64 start, long warm_steps, long steps, u64* res) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  const u64* p = (const u64*)start;
  for (long i = 0; i < warm_steps; i++) p = (const u64*)__ldcg(p);
  u64 g0 = gtimer();
  u64 c0 = clock64();
#pragma unroll 8
  for (long i = 0; i < steps; i++) p = (const u64*)__ldcg(p);
  u64 c1 = clock64();
  u64 g1 = gtimer();
  res[0] = c1 - c0;
  res[1] = g1 - g0;
  res[2] = (u64)p;
}

// Per-load latency of `n` dependent loads (after warm_steps untimed loads). The ALU op on
// the loaded value stalls issue until the load returns, so the clock read after it closes
// the interval; includes a few cycles of clock-read overhead.
__global__ void chase_each(u64 start, long warm_steps, int n, uint32_t* lat, u64* res) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  const u64* p = (const u64*)start;
  for (long i = 0; i < warm_steps; i++) p = (const u64*)__ldcg(p);
  u64 acc = 0;
  for (int i = 0; i < n; i++) {
    u64 c0 = clock64();
    u64 v = __ldcg(p);
    acc += v & 7;  // depends on v: issue waits for the load
    u64 c1 = clock64();
    lat[i] = (uint32_t)(c1 - c0 + (acc & 0));  // keep acc alive without changing value
    p = (const u64*)v;
  }
  res[0] = acc;
  res[2] = (u64)p;
}


__global__ void tma_chase(u64 start, long warm_steps, long steps, uint32_t bytes, u64* res);

static void run_chase(const char* out_csv, const char* lat_csv, const char* tma_csv) {
  const size_t MB = 1 << 20;
  const std::vector<int> sizes_mb = {1,  2,  4,  8,  12, 16, 20, 24,  28,  32,
                                     36, 40, 48, 56, 64, 80, 96, 128, 192, 256};
  const size_t max_bytes = 256 * MB;
  const size_t line = 128, stride_words = line / 8;
  const size_t flush_bytes = 512 * MB;  // > 8x L2
  u64* buf;
  int4* flush;
  uint32_t* dperm;
  u64* dres;
  uint32_t* dlat;
  int* sink;
  CK(cudaMalloc(&buf, max_bytes));
  CK(cudaMalloc(&flush, flush_bytes));
  CK(cudaMemset(flush, 1, flush_bytes));
  CK(cudaMalloc(&dperm, (max_bytes / line) * sizeof(uint32_t)));
  CK(cudaMalloc(&dres, 4 * sizeof(u64)));
  CK(cudaMalloc(&sink, sizeof(int)));
  const int LATN = 4096;
  CK(cudaMalloc(&dlat, LATN * sizeof(uint32_t)));
  auto do_flush = [&]() {
    flush_read<<<g_num_sms * 8, 512>>>(flush, flush_bytes / 16, sink);
    CKL();
  };

  FILE* f = out_csv ? fopen(out_csv, "w") : nullptr;
  FILE* fl = lat_csv ? fopen(lat_csv, "w") : nullptr;
  FILE* ft = tma_csv ? fopen(tma_csv, "w") : nullptr;
  if ((out_csv && !f) || (lat_csv && !fl) || (tma_csv && !ft)) {
    fprintf(stderr, "cannot open outputs\n");
    exit(1);
  }
  if (ft)
    fprintf(ft,
            "working_set_bytes,mode,bytes_per_copy,cycles_per_load,ns_per_load,sm_clock_mhz,loads,"
            "warmup_loads,reps,cycles_per_load_min,cycles_per_load_max\n");
  if (f)
    fprintf(f,
            "working_set_bytes,mode,cycles_per_load,ns_per_load,sm_clock_mhz,loads,warmup_loads,"
            "reps,cycles_per_load_min,cycles_per_load_max\n");
  if (fl) fprintf(fl, "working_set_bytes,mode,index,cycles\n");
  std::mt19937_64 rng(12345);
  for (int smb : sizes_mb) {
    size_t ws = (size_t)smb * MB;
    size_t n = ws / line;
    std::vector<uint32_t> perm(n);
    std::iota(perm.begin(), perm.end(), 0u);
    std::shuffle(perm.begin(), perm.end(), rng);  // a random order of all lines; chain = cycle
    CK(cudaMemcpy(dperm, perm.data(), n * sizeof(uint32_t), cudaMemcpyHostToDevice));
    build_chain<<<g_num_sms * 4, 256>>>(buf, dperm, n, stride_words);
    CKL();
    CK(cudaDeviceSynchronize());
    // check the chain on the host: follow 1000 steps from perm[0] and compare
    {
      u64 addr = (u64)(buf + (size_t)perm[0] * stride_words);
      for (int k = 1; k <= 1000 && k < (int)n + 1; k++) {
        u64 next;
        CK(cudaMemcpy(&next, (void*)addr, 8, cudaMemcpyDeviceToHost));
        u64 expect = (u64)(buf + (size_t)perm[k % n] * stride_words);
        if (next != expect) {
          fprintf(stderr, "chain check failed at ws=%d MB step %d\n", smb, k);
          exit(1);
        }
        addr = next;
        if (k > 50) break;  // a few dozen steps suffice; keeps H2D traffic small
      }
    }
    u64 start = (u64)(buf + (size_t)perm[0] * stride_words);
    // warm: one untimed pass over (up to 1M) lines fills the L2 for L2-resident sizes, then
    // the timed loads continue along the same cycle.
    const long warm = (long)std::min<size_t>(n, 1u << 20);
    const long steps = 1 << 18;
    const int reps = 3;
    for (int mode = 0; f && mode < 2; mode++) {
      std::vector<double> cpl, npl, mhz;
      long wsteps = mode == 0 ? warm : 0;
      long tsteps =
          mode == 0 ? steps : (long)std::min<size_t>(n, 1u << 16);  // cold: each line once
      for (int r = 0; r < reps; r++) {
        u64 st = (u64)(buf + (size_t)perm[(r * 7919) % n] * stride_words);
        if (mode == 1) do_flush();
        chase<<<1, 32>>>(st, wsteps, tsteps, dres);
        CKL();
        u64 h[3];
        CK(cudaMemcpy(h, dres, sizeof(h), cudaMemcpyDeviceToHost));
        cpl.push_back((double)h[0] / tsteps);
        npl.push_back((double)h[1] / tsteps);
        mhz.push_back(h[1] ? (double)h[0] / (double)h[1] * 1000.0 : 0);
      }
      double c = median(cpl);
      fprintf(f, "%zu,%s,%.2f,%.2f,%.0f,%ld,%ld,%d,%.2f,%.2f\n", ws, mode == 0 ? "warm" : "cold", c,
              median(npl), median(mhz), tsteps, wsteps, reps,
              *std::min_element(cpl.begin(), cpl.end()), *std::max_element(cpl.begin(), cpl.end()));
      fflush(f);
      printf("chase ws=%4d MB %s: %.1f cycles/load %.1f ns/load @ %.0f MHz\n", smb,
             mode == 0 ? "warm" : "cold", c, median(npl), median(mhz));
      fflush(stdout);
    }
    // per-load latency samples at a few sizes (warm), and cold at 256 MB
    // the same chain through the bulk-copy engine (TMA_BULK + MB_WAIT), 128 B and 16 B copies
    for (int bi = 0; ft && bi < 2; bi++) {
      uint32_t bytes = bi == 0 ? 128 : 16;
      for (int mode = 0; mode < 2; mode++) {
        std::vector<double> cpl, npl, mhz;
        long wsteps = mode == 0 ? std::min<long>(warm, 1 << 19) : 0;
        long tsteps = mode == 0 ? (1 << 16) : (long)std::min<size_t>(n, 1u << 15);
        for (int r = 0; r < 3; r++) {
          u64 st = (u64)(buf + (size_t)perm[(r * 7919) % n] * stride_words);
          if (mode == 1) do_flush();
          tma_chase<<<1, 32>>>(st, wsteps, tsteps, bytes, dres);
          CKL();
          u64 h[3];
          CK(cudaMemcpy(h, dres, sizeof(h), cudaMemcpyDeviceToHost));
          cpl.push_back((double)h[0] / tsteps);
          npl.push_back((double)h[1] / tsteps);
          mhz.push_back(h[1] ? (double)h[0] / (double)h[1] * 1000.0 : 0);
        }
        double c = median(cpl);
        fprintf(ft, "%zu,%s,%u,%.2f,%.2f,%.0f,%ld,%ld,%d,%.2f,%.2f\n", ws,
                mode == 0 ? "warm" : "cold", bytes, c, median(npl), median(mhz), tsteps, wsteps, 3,
                *std::min_element(cpl.begin(), cpl.end()),
                *std::max_element(cpl.begin(), cpl.end()));
        fflush(ft);
        printf("tma_chase ws=%4d MB %3uB %s: %.1f cycles/load %.1f ns/load @ %.0f MHz\n", smb,
               bytes, mode == 0 ? "warm" : "cold", c, median(npl), median(mhz));
        fflush(stdout);
      }
    }
    if (fl && (smb == 4 || smb == 16 || smb == 32 || smb == 48 || smb == 64 || smb == 256)) {
      for (int mode = 0; mode < 2; mode++) {
        if (mode == 1 && smb != 256 && smb != 4) continue;
        if (mode == 1) do_flush();
        chase_each<<<1, 32>>>(start, mode == 0 ? warm : 0, LATN, dlat, dres);
        CKL();
        std::vector<uint32_t> lat(LATN);
        CK(cudaMemcpy(lat.data(), dlat, LATN * 4, cudaMemcpyDeviceToHost));
        int lim = std::min<int>(LATN, mode == 1 ? (int)std::min<size_t>(n, LATN) : LATN);
        for (int i = 0; i < lim; i++)
          fprintf(fl, "%zu,%s,%d,%u\n", ws, mode == 0 ? "warm" : "cold", i, lat[i]);
      }
    }
  }
  if (f) fclose(f);
  if (fl) fclose(fl);
  if (ft) fclose(ft);
  CK(cudaFree(buf));
  CK(cudaFree(flush));
  CK(cudaFree(dperm));
  CK(cudaFree(dres));
  CK(cudaFree(dlat));
  CK(cudaFree(sink));
}

// ---------------------------------------------------------------------------------------
// Bandwidth
// ---------------------------------------------------------------------------------------
__global__ void fill_words(uint32_t* a, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  size_t step = (size_t)gridDim.x * blockDim.x;
  for (; i < n; i += step) a[i] = (uint32_t)(i & 0xFFFF);
}

// 16-byte loads, 4 independent loads in flight per thread; per-block sum of all 32-bit words.
__global__ void __launch_bounds__(256)
    stream_read(const int4* __restrict__ a, size_t n_vec, u64* block_sums, u64* clk) {
  u64 c0 = 0, g0 = 0;
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    g0 = gtimer();
    c0 = clock64();
  }
  size_t tid = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  size_t stride = (size_t)gridDim.x * blockDim.x;
  u64 s = 0;
  size_t i = tid;
  for (; i + 3 * stride < n_vec; i += 4 * stride) {
    int4 v0 = a[i], v1 = a[i + stride], v2 = a[i + 2 * stride], v3 = a[i + 3 * stride];
    s += (u64)(uint32_t)v0.x + (uint32_t)v0.y + (uint32_t)v0.z + (uint32_t)v0.w;
    s += (u64)(uint32_t)v1.x + (uint32_t)v1.y + (uint32_t)v1.z + (uint32_t)v1.w;
    s += (u64)(uint32_t)v2.x + (uint32_t)v2.y + (uint32_t)v2.z + (uint32_t)v2.w;
    s += (u64)(uint32_t)v3.x + (uint32_t)v3.y + (uint32_t)v3.z + (uint32_t)v3.w;
  }
  for (; i < n_vec; i += stride) {
    int4 v0 = a[i];
    s += (u64)(uint32_t)v0.x + (uint32_t)v0.y + (uint32_t)v0.z + (uint32_t)v0.w;
  }
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  __shared__ u64 ws[32];
  if ((threadIdx.x & 31) == 0) ws[threadIdx.x >> 5] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    u64 t = 0;
    for (int w = 0; w < (int)(blockDim.x >> 5); w++) t += ws[w];
    block_sums[blockIdx.x] = t;
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    clk[0] = clock64() - c0;
    clk[1] = gtimer() - g0;
  }
}

// Pointer chase through the bulk-copy engine: one thread copies `bytes` (16..128) from the
// current line into shared memory with cp.async.bulk + mbarrier complete_tx, waits on the
// mbarrier, reads the next address from shared memory, and repeats (the simulator's
// TMA_BULK + MB_WAIT chain). res as in chase().
__global__ void tma_chase(u64 start, long warm_steps, long steps, uint32_t bytes, u64* res) {
  __shared__ __align__(128) u64 buf[16];
  __shared__ __align__(8) u64 bar_s;
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  uint32_t bar = smem_u32(&bar_s), dst = smem_u32(buf);
  mbar_init(bar, 1);
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  uint32_t phase = 0;
  u64 p = start;
  volatile u64* vb = buf;
  for (long i = 0; i < warm_steps; i++) {
    mbar_expect_tx(bar, bytes);
    bulk_g2s(dst, (const void*)p, bytes, bar);
    mbar_wait(bar, phase);
    phase ^= 1;
    p = vb[0];
  }
  u64 g0 = gtimer();
  u64 c0 = clock64();
  for (long i = 0; i < steps; i++) {
    mbar_expect_tx(bar, bytes);
    bulk_g2s(dst, (const void*)p, bytes, bar);
    mbar_wait(bar, phase);
    phase ^= 1;
    p = vb[0];
  }
  u64 c1 = clock64();
  u64 g1 = gtimer();
  res[0] = c1 - c0;
  res[1] = g1 - g0;
  res[2] = p;
}

#define MAXST 64

// One CTA per SM (dynamic smem > half the SM), one thread issues bulk copies of op_bytes
// through `stages` shared-memory slots, each with its mbarrier. Source offset of op j is
// (j*op_bytes) mod src_bytes; ops j = blockIdx.x + k*gridDim.x. After each completes, its
// first and last 8-byte words are compared with the fill pattern (word index).
__global__ void tma_bulk(const uint8_t* src, size_t src_bytes, size_t n_ops, uint32_t op_bytes,
                         int stages, u64* errors, u64* clk) {
  extern __shared__ __align__(1024) uint8_t smem[];
  __shared__ __align__(8) u64 bars[MAXST];
  if (threadIdx.x != 0) return;
  u64 c0 = clock64(), g0 = gtimer();
  for (int s = 0; s < stages; s++) mbar_init(smem_u32(&bars[s]), 1);
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  u64 parity = 0;  // bit s = parity to wait for on stage s (64-bit: up to MAXST stages)
  u64 err = 0;
  size_t my_n = n_ops > blockIdx.x ? (n_ops - blockIdx.x + gridDim.x - 1) / gridDim.x : 0;
  // offsets advance incrementally (no 64-bit division in the loop); stride < src_bytes
  const size_t stride = (size_t)gridDim.x * op_bytes;
  size_t off_issue = ((size_t)blockIdx.x * op_bytes) % src_bytes, off_ret = off_issue;
  int s = 0;
  for (size_t k = 0; k < my_n + stages; k++) {
    uint32_t bar = smem_u32(&bars[s]);
    uint8_t* slot = smem + (size_t)s * op_bytes;
    if (k >= (size_t)stages) {  // retire op k - stages (same slot)
      mbar_wait(bar, (uint32_t)(parity >> s) & 1u);
      parity ^= 1ull << s;
      size_t r = k - stages;
      if ((r & 7) == 0 || r + 1 == my_n) {  // check every 8th op and the last one
        const u64* w = (const u64*)slot;
        if (w[0] != off_ret / 8) err++;
        if (w[op_bytes / 8 - 1] != (off_ret + op_bytes - 8) / 8) err++;
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      }
      off_ret += stride;
      if (off_ret >= src_bytes) off_ret -= src_bytes;
    }
    if (k < my_n) {
      mbar_expect_tx(bar, op_bytes);
      bulk_g2s(smem_u32(slot), src + off_issue, op_bytes, bar);
      off_issue += stride;
      if (off_issue >= src_bytes) off_issue -= src_bytes;
    }
    if (++s == stages) s = 0;
  }
  if (err) atomicAdd(errors, err);
  if (blockIdx.x == 0) {
    clk[0] = clock64() - c0;
    clk[1] = gtimer() - g0;
  }
}

__host__ __device__ static inline uint16_t pat2d(uint32_t r, uint32_t c) {
  return (uint16_t)((r * 0x9E37u) ^ (c * 0x85EBu + 0x1234u));
}
__global__ void fill2d(uint16_t* a, uint32_t R, uint32_t C) {
  size_t n = (size_t)R * C;
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  size_t step = (size_t)gridDim.x * blockDim.x;
  for (; i < n; i += step) a[i] = pat2d((uint32_t)(i / C), (uint32_t)(i % C));
}

// byte offset of element (r, c) of a box with row pitch rowbytes in shared memory
__device__ static inline uint32_t box_off(int r, int c, int rowbytes, int swz128) {
  uint32_t b = (uint32_t)c * 2;
  if (!swz128) return (uint32_t)r * rowbytes + b;
  // 128B swizzle: 16-byte chunk index (bits 4..6) XOR row index mod 8 (bits 7..9)
  return (uint32_t)r * 128 + ((((b >> 4) ^ (uint32_t)(r & 7)) & 7) << 4) + (b & 15);
}

// Same pipeline as tma_bulk with 2D tiles of box_r x box_c fp16 elements from an R x C tensor.
__global__ void tma_2d(const __grid_constant__ CUtensorMap map, uint32_t R, uint32_t C, int box_r,
                       int box_c, int swz128, int stages, u64* errors, u64* clk) {
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  __shared__ __align__(8) u64 bars[MAXST];
  if (threadIdx.x != 0) return;
  uint8_t* smem = (uint8_t*)(((uintptr_t)smem_raw + 1023) & ~(uintptr_t)1023);
  u64 c0 = clock64(), g0 = gtimer();
  const uint32_t box_bytes = (uint32_t)box_r * box_c * 2;
  for (int s = 0; s < stages; s++) mbar_init(smem_u32(&bars[s]), 1);
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  const uint32_t tiles_c = C / box_c;
  const size_t n_tiles = (size_t)(R / box_r) * tiles_c;
  u64 parity = 0;
  u64 err = 0;
  size_t my_n = n_tiles > blockIdx.x ? (n_tiles - blockIdx.x + gridDim.x - 1) / gridDim.x : 0;
  // tile t = blockIdx.x + k*gridDim.x as (band, col), advanced incrementally (gridDim.x < tiles_c)
  uint32_t col_i = blockIdx.x % tiles_c, band_i = blockIdx.x / tiles_c;
  uint32_t col_r = col_i, band_r = band_i;
  const int rb = box_c * 2;
  int s = 0;
  for (size_t k = 0; k < my_n + stages; k++) {
    uint32_t bar = smem_u32(&bars[s]);
    uint8_t* slot = smem + (size_t)s * box_bytes;
    if (k >= (size_t)stages) {
      mbar_wait(bar, (uint32_t)(parity >> s) & 1u);
      parity ^= 1ull << s;
      size_t r = k - stages;
      if ((r & 7) == 0 || r + 1 == my_n) {
        uint32_t r0 = band_r * box_r, cc0 = col_r * box_c;
        const uint16_t* h = (const uint16_t*)slot;
        if (h[box_off(0, 0, rb, swz128) / 2] != pat2d(r0, cc0)) err++;
        if (h[box_off(box_r - 1, box_c - 1, rb, swz128) / 2] !=
            pat2d(r0 + box_r - 1, cc0 + box_c - 1))
          err++;
        if (h[box_off(box_r / 2 + 1, 9, rb, swz128) / 2] != pat2d(r0 + box_r / 2 + 1, cc0 + 9))
          err++;
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      }
      col_r += gridDim.x;
      if (col_r >= tiles_c) {
        col_r -= tiles_c;
        band_r++;
      }
    }
    if (k < my_n) {
      mbar_expect_tx(bar, box_bytes);
      tma2d_g2s(smem_u32(slot), &map, (int)(col_i * box_c), (int)(band_i * box_r), bar);
      col_i += gridDim.x;
      if (col_i >= tiles_c) {
        col_i -= tiles_c;
        band_i++;
      }
    }
    if (++s == stages) s = 0;
  }
  if (err) atomicAdd(errors, err);
  if (blockIdx.x == 0) {
    clk[0] = clock64() - c0;
    clk[1] = gtimer() - g0;
  }
}

struct Timer {
  cudaEvent_t a, b;
  Timer() {
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
  }
  ~Timer() {
    cudaEventDestroy(a);
    cudaEventDestroy(b);
  }
  void start() { CK(cudaEventRecord(a)); }
  double stop_ms() {
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    return ms;
  }
};

__global__ void fill_index64(u64* a, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  size_t step = (size_t)gridDim.x * blockDim.x;
  for (; i < n; i += step) a[i] = i;
}

static FILE* g_bw;
static void bw_row(const char* kind, const std::string& shape, u64 bytes_per_op, int stages,
                   int ctas, u64 total_bytes, const std::vector<double>& ms, double mhz, u64 errors,
                   const char* note) {
  double med = median(ms);
  double gbs = total_bytes / (med * 1e-3) / 1e9;
  double best = total_bytes / (*std::min_element(ms.begin(), ms.end()) * 1e-3) / 1e9;
  fprintf(g_bw, "%s,%s,%llu,%d,%d,%llu,%.4f,%.1f,%.1f,%.0f,%d,%llu,%s\n", kind, shape.c_str(),
          (unsigned long long)bytes_per_op, stages, ctas, (unsigned long long)total_bytes, med, gbs,
          best, mhz, (int)ms.size(), (unsigned long long)errors, note);
  fflush(g_bw);
  printf("bw %-14s %-10s op=%7llu st=%2d: %8.1f GB/s (best %8.1f) @ %.0f MHz err=%llu\n", kind,
         shape.c_str(), (unsigned long long)bytes_per_op, stages, gbs, best, mhz,
         (unsigned long long)errors);
  fflush(stdout);
}

static void run_bw(const char* out_csv) {
  g_bw = fopen(out_csv, "w");
  if (!g_bw) {
    fprintf(stderr, "cannot open %s\n", out_csv);
    exit(1);
  }
  fprintf(g_bw,
          "kind,shape,bytes_per_op,stages,ctas,total_bytes,median_ms,GBps,best_GBps,sm_clock_mhz,"
          "reps,errors,note\n");
  const size_t GiB = 1ull << 30;
  const size_t bytes = 4 * GiB;
  const int REPS = 7;
  uint8_t *a, *b;
  u64 *dsum, *dclk, *derr;
  CK(cudaMalloc(&a, bytes));
  CK(cudaMalloc(&b, bytes));
  CK(cudaMalloc(&dclk, 2 * sizeof(u64)));
  CK(cudaMalloc(&derr, sizeof(u64)));
  Timer T;
  auto clk_mhz = [&]() {
    u64 h[2];
    CK(cudaMemcpy(h, dclk, sizeof(h), cudaMemcpyDeviceToHost));
    return h[1] ? (double)h[0] / h[1] * 1000.0 : 0.0;
  };

  // --- DRAM stream read -------------------------------------------------------------
  fill_words<<<g_num_sms * 8, 256>>>((uint32_t*)a, bytes / 4);
  CKL();
  CK(cudaDeviceSynchronize());
  {
    const size_t nwords = bytes / 4;
    // sum over words of (i & 0xFFFF): (nwords/65536) * sum(0..65535)
    const u64 expect = (u64)(nwords / 65536) * (65535ull * 65536ull / 2);
    const int cfgs[][2] = {{g_num_sms * 4, 256}, {g_num_sms * 8, 256}, {g_num_sms * 16, 256}};
    for (auto& cfg : cfgs) {
      int grid = cfg[0], blk = cfg[1];
      CK(cudaMalloc(&dsum, grid * sizeof(u64)));
      std::vector<double> ms, mhz;
      u64 errors = 0;
      for (int r = 0; r < REPS + 1; r++) {
        CK(cudaMemset(dsum, 0xff, grid * sizeof(u64)));
        T.start();
        stream_read<<<grid, blk>>>((const int4*)a, bytes / 16, dsum, dclk);
        double t = T.stop_ms();
        CKL();
        std::vector<u64> hs(grid);
        CK(cudaMemcpy(hs.data(), dsum, grid * sizeof(u64), cudaMemcpyDeviceToHost));
        u64 tot = 0;
        for (u64 v : hs) tot += v;
        if (tot != expect) errors++;
        if (r == 0) continue;  // warm-up
        ms.push_back(t);
        mhz.push_back(clk_mhz());
      }
      char shape[64];
      snprintf(shape, sizeof shape, "grid%dx%d", grid, blk);
      bw_row("dram_read", shape, 16, 4, grid, bytes, ms, median(mhz), errors,
             "ld.global.nc 16B x4 in flight/thread; sum checked");
      CK(cudaFree(dsum));
    }
  }
  // --- cudaMemcpy device to device (bytes read + written) -----------------------------
  {
    std::vector<double> ms;
    for (int r = 0; r < REPS + 1; r++) {
      T.start();
      CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice));
      double t = T.stop_ms();
      if (r) ms.push_back(t);
    }
    u64 h[2];
    CK(cudaMemcpy(h, b + bytes - 16, 16, cudaMemcpyDeviceToHost));
    u64 errors = 0;
    uint32_t* w = (uint32_t*)h;
    size_t base = (bytes - 16) / 4;
    for (int i = 0; i < 4; i++)
      if (w[i] != ((base + i) & 0xFFFF)) errors++;
    bw_row("memcpy_d2d", "4GiB", 0, 0, 0, 2 * bytes, ms, 0, errors,
           "cudaMemcpyAsync D2D; GB/s counts read+write");
  }

  // --- TMA bulk (1D) --------------------------------------------------------------------
  fill_index64<<<g_num_sms * 8, 256>>>((u64*)a, bytes / 8);  // 8-byte word i holds i
  CKL();
  CK(cudaDeviceSynchronize());
  CK(cudaFuncSetAttribute(tma_bulk, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
  {
    const uint32_t op_sizes[] = {4096, 16384, 65536};
    const uint32_t inflight[] = {32768, 65536, 131072, 196608};
    for (int src_kind = 0; src_kind < 2; src_kind++) {
      size_t src_bytes = src_kind == 0 ? bytes : (size_t)16 << 20;  // DRAM stream / L2-resident
      for (uint32_t op : op_sizes) {
        for (uint32_t fl : inflight) {
          if (fl < op) continue;
          if (src_kind == 1 && fl != 131072 && !(op == 65536 && fl == 196608)) continue;
          int stages = fl / op;
          if (stages > MAXST) continue;
          size_t n_ops = bytes / op;
          // at least 130 KB of dynamic smem so that only one CTA fits on an SM
          size_t dsm = std::max<size_t>((size_t)stages * op, 130 * 1024);
          std::vector<double> ms, mhz;
          u64 errors = 0;
          for (int r = 0; r < 4; r++) {
            CK(cudaMemset(derr, 0, 8));
            T.start();
            tma_bulk<<<g_num_sms, 32, dsm>>>(a, src_bytes, n_ops, op, stages, derr, dclk);
            double t = T.stop_ms();
            CKL();
            u64 e;
            CK(cudaMemcpy(&e, derr, 8, cudaMemcpyDeviceToHost));
            errors += e;
            if (r == 0) continue;
            ms.push_back(t);
            mhz.push_back(clk_mhz());
          }
          char shape[64];
          snprintf(shape, sizeof shape, "%uB", op);
          bw_row(src_kind == 0 ? "tma_bulk_dram" : "tma_bulk_l2", shape, op, stages, g_num_sms,
                 (u64)n_ops * op, ms, median(mhz), errors,
                 src_kind == 0 ? "cp.async.bulk g2s+mbarrier; 1 CTA/SM; 4GiB src read once"
                               : "cp.async.bulk g2s+mbarrier; 1 CTA/SM; 16MiB src re-read (L2)");
        }
      }
    }
  }

  // --- TMA 2D tensor map ------------------------------------------------------------------
  {
    const uint32_t R = 16384, C = 131072;  // fp16, 4 GiB
    fill2d<<<g_num_sms * 8, 256>>>((uint16_t*)a, R, C);
    CKL();
    CK(cudaDeviceSynchronize());
    CK(cudaFuncSetAttribute(tma_2d, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
    struct Box {
      int r, c, swz, stages;
    };
    const Box boxes[] = {{64, 64, 1, 16}, {64, 64, 1, 8},  {128, 64, 1, 8},
                         {128, 64, 1, 4}, {64, 128, 0, 8}, {64, 128, 0, 4},
                         {256, 64, 1, 4}, {256, 64, 1, 6}, {64, 64, 0, 16}};
    for (const Box& bx : boxes) {
      CUtensorMap map;
      cuuint64_t gdim[2] = {C, R};
      cuuint64_t gstride[1] = {(cuuint64_t)C * 2};
      cuuint32_t box[2] = {(cuuint32_t)bx.c, (cuuint32_t)bx.r};
      cuuint32_t estr[2] = {1, 1};
      CKD(cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, a, gdim, gstride, box,
                                 estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                 bx.swz ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE,
                                 CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                                 CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
      size_t box_bytes = (size_t)bx.r * bx.c * 2;
      size_t dsm = std::max<size_t>(bx.stages * box_bytes + 1024, 130 * 1024);
      std::vector<double> ms, mhz;
      u64 errors = 0;
      for (int r = 0; r < 4; r++) {
        CK(cudaMemset(derr, 0, 8));
        T.start();
        tma_2d<<<g_num_sms, 32, dsm>>>(map, R, C, bx.r, bx.c, bx.swz, bx.stages, derr, dclk);
        double t = T.stop_ms();
        CKL();
        u64 e;
        CK(cudaMemcpy(&e, derr, 8, cudaMemcpyDeviceToHost));
        errors += e;
        if (r == 0) continue;
        ms.push_back(t);
        mhz.push_back(clk_mhz());
      }
      char shape[64];
      snprintf(shape, sizeof shape, "%dx%d", bx.r, bx.c);
      bw_row("tma_2d", shape, box_bytes, bx.stages, g_num_sms, bytes, ms, median(mhz), errors,
             bx.swz ? "rows x cols fp16 box; SWIZZLE_128B; L2_PROMOTION_128B; 1 CTA/SM"
                    : "rows x cols fp16 box; SWIZZLE_NONE; L2_PROMOTION_128B; 1 CTA/SM");
    }
  }
  fclose(g_bw);
  CK(cudaFree(a));
  CK(cudaFree(b));
}

static void print_props() {
  int dev = 0;
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, dev));
  int clk = 0, mclk = 0, drv = 0, rt = 0;
  cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, dev);
  cudaDeviceGetAttribute(&mclk, cudaDevAttrMemoryClockRate, dev);
  CK(cudaDriverGetVersion(&drv));
  CK(cudaRuntimeGetVersion(&rt));
  printf("name=%s\n", p.name);
  printf("cc=%d.%d\n", p.major, p.minor);
  printf("multiProcessorCount=%d\n", p.multiProcessorCount);
  printf("l2CacheSize=%d\n", p.l2CacheSize);
  printf("persistingL2CacheMaxSize=%d\n", p.persistingL2CacheMaxSize);
  printf("accessPolicyMaxWindowSize=%d\n", p.accessPolicyMaxWindowSize);
  printf("totalGlobalMem=%zu\n", p.totalGlobalMem);
  printf("sharedMemPerMultiprocessor=%zu\n", p.sharedMemPerMultiprocessor);
  printf("sharedMemPerBlockOptin=%zu\n", p.sharedMemPerBlockOptin);
  printf("regsPerMultiprocessor=%d\n", p.regsPerMultiprocessor);
  printf("maxThreadsPerMultiProcessor=%d\n", p.maxThreadsPerMultiProcessor);
  printf("memoryBusWidth=%d\n", p.memoryBusWidth);
  printf("attr_clockRate_kHz=%d\n", clk);
  printf("attr_memoryClockRate_kHz=%d\n", mclk);
  printf("cudaDriverVersion=%d\n", drv);
  printf("cudaRuntimeVersion=%d\n", rt);
  printf("pciBusID=%d\n", p.pciBusID);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr,
            "usage: %s props | chase OUT.csv LAT.csv [TMA.csv] | tchase TMA.csv | bw OUT.csv\n",
            argv[0]);
    return 2;
  }
  CK(cudaSetDevice(0));
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  g_num_sms = p.multiProcessorCount;
  std::string cmd = argv[1];
  if (cmd == "props") {
    print_props();
  } else if (cmd == "chase" && argc >= 4) {
    run_chase(argv[2], argv[3], argc >= 5 ? argv[4] : nullptr);
  } else if (cmd == "tchase" && argc >= 3) {  // bulk-copy chase only
    run_chase(nullptr, nullptr, argv[2]);
  } else if (cmd == "bw" && argc >= 3) {
    run_bw(argv[2]);
  } else {
    fprintf(stderr, "bad arguments\n");
    return 2;
  }
  CK(cudaDeviceSynchronize());
  return 0;
}
