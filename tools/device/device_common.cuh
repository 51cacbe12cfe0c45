// What the CUDA microbenchmarks of tools/device share: checked CUDA calls, %globaltimer, and the
// mbarrier and TMA copy instructions (PTX ISA 8.0, sm_90a).
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                              \
  do {                                                                                     \
    cudaError_t e_ = (x);                                                                  \
    if (e_ != cudaSuccess) {                                                               \
      fprintf(stderr, "CUDA error %s at %s:%d: %s\n", cudaGetErrorString(e_), __FILE__,    \
              __LINE__, #x);                                                               \
      exit(1);                                                                             \
    }                                                                                      \
  } while (0)
// Driver API calls (tensor maps): the program links -lcuda.
#define CKD(x)                                                                             \
  do {                                                                                     \
    CUresult r_ = (x);                                                                     \
    if (r_ != CUDA_SUCCESS) {                                                              \
      const char* s_ = nullptr;                                                            \
      cuGetErrorString(r_, &s_);                                                           \
      fprintf(stderr, "CUDA driver error %d (%s) at %s:%d: %s\n", (int)r_, s_ ? s_ : "?",  \
              __FILE__, __LINE__, #x);                                                     \
      exit(1);                                                                             \
    }                                                                                      \
  } while (0)
#define CKL() CK(cudaGetLastError())

typedef unsigned long long u64;

static __device__ __forceinline__ u64 gtimer() {
  u64 t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
// The SM's cycle counter; the clobber keeps the compiler from moving memory operations across it.
static __device__ __forceinline__ u64 clk() {
  u64 t;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory");
  return t;
}
static __device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return (uint32_t)__cvta_generic_to_shared(p);
}
static __device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
static __device__ __forceinline__ void mbar_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
               : "memory");
}
static __device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n\t.reg .pred P1;\n"
      "LAB_WAIT:\n\t"
      "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\n\t"
      "@P1 bra DONE;\n\t"
      "bra LAB_WAIT;\n"
      "DONE:\n\t}" ::"r"(bar),
      "r"(parity)
      : "memory");
}
/// Initialises `stages` mbarriers of arrival count 1 and makes them visible to the TMA unit.
static __device__ __forceinline__ void ring_init(u64* bars, int stages) {
  for (int s = 0; s < stages; s++) mbar_init(smem_u32(&bars[s]), 1);
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
/// The first 1024-byte boundary at or after `p` (the 128 B swizzle's alignment).
static __device__ __forceinline__ uint8_t* align_1k(uint8_t* p) {
  return (uint8_t*)(((uintptr_t)p + 1023) & ~(uintptr_t)1023);
}
/// A bulk copy of `bytes` from global `src` to shared `dst`, completing on mbarrier `bar`.
static __device__ __forceinline__ void bulk_g2s(uint32_t dst, const void* src, uint32_t bytes,
                                                uint32_t bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
          dst),
      "l"(src), "r"(bytes), "r"(bar)
      : "memory");
}
/// The 2D box of tensor map `map` at (c0, c1) to shared `dst`, completing on mbarrier `bar`.
static __device__ __forceinline__ void tma2d_g2s(uint32_t dst, const CUtensorMap* map, int c0,
                                                 int c1, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, "
      "%3}], [%4];" ::"r"(dst),
      "l"((u64)map), "r"(c0), "r"(c1), "r"(bar)
      : "memory");
}

/// The tensor map of a rows x cols fp16 matrix at `base` (rows cols x 2 bytes apart) read as
/// boxes of 64 columns (128 B, the 128 B swizzle's width) x `box_rows`, as Triton's GEMM operands.
static inline CUtensorMap fp16_box_map(void* base, uint32_t cols, uint64_t rows,
                                       uint32_t box_rows) {
  CUtensorMap map;
  cuuint64_t gdim[2] = {cols, rows};
  cuuint64_t gstride[1] = {(cuuint64_t)cols * 2};
  cuuint32_t box[2] = {64, box_rows};
  cuuint32_t estr[2] = {1, 1};
  CKD(cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, base, gdim, gstride, box,
                             estr, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                             CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  return map;
}

/// Reads n int4 of `a` through the L2 (ld.global.cg), leaving them there; `sink` keeps the reads.
__global__ void touch(const int4* a, u64 n, int* sink) {
  int acc = 0;
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x)
    acc ^= __ldcg(&a[i]).x;
  if (acc == 0x7fffffff) *sink = acc;
}

/// Writes `v` into `n` int4s: a write flush, which leaves the L2 holding dirty lines of `a` only.
__global__ void flush_write(int4* a, u64 n, int v) {
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x)
    a[i] = make_int4(v, v, v, v);
}

/// Reads `n` int4s with L2-only loads over the whole chip: evicts whatever the L2 held.
__global__ void flush_read(const int4* __restrict__ a, size_t n, int* sink) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  size_t step = (size_t)gridDim.x * blockDim.x;
  int x = 0;
  for (; i < n; i += step) {
    int4 v = __ldcg(a + i);
    x ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (x == 0x7fffffff) sink[0] = x;
}

/// The fp16 fill pattern of the box programs (dram_stride.cu, tma_load.cu): element e holds
/// pat(e), so a box is checked against its coordinates alone.
__host__ __device__ static inline uint16_t pat(u64 e) {
  uint32_t x = (uint32_t)e * 2654435761u;
  return (uint16_t)((x >> 16) ^ (uint32_t)(e >> 29));
}
__global__ void fill_pat(uint16_t* a, u64 n) {
  u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x;
  u64 step = (u64)gridDim.x * blockDim.x;
  for (; i < n; i += step) a[i] = pat(i);
}

/// Byte offset of element (r, c) of a 64-column (128 B a row) box with SWIZZLE_128B.
__device__ static inline uint32_t swz_off(uint32_t r, uint32_t c) {
  uint32_t b = c * 2;
  return r * 128 + ((((b >> 4) ^ (r & 7)) & 7) << 4) + (b & 15);
}

/// The median of `v` (0 when empty).
static inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
/// The p-quantile of `v` (nearest rank).
static inline double pct(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  size_t i = (size_t)(p * (v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}
