// lrc_merge.cu -- which reads of the same lines, made by several SMs, Hopper's L2 request
// coalescer (LRC) merges before the L2 slices see them (simfa issue 17, item 4).
//
//   lrc_merge list OUT.csv          the cases, no GPU
//   lrc_merge run OUT.csv cold|warm one launch of `shared_read` per case, timed
//
// Every case is one launch of `shared_read` over all 132 SMs (one CTA per SM: its dynamic shared
// memory is more than half an SM's). The CTAs on the case's participant SMs read the same region
// (REGION bytes, ops of 16 KiB through STAGES shared-memory slots, each with its mbarrier, as
// Triton's GEMM loop does), each starting DELAY cycles after a common %globaltimer instant; the
// other CTAs return at once. Under ncu (one profile per launch, -k regex:shared_read, cases in the
// order of `list`), lts__t_sectors_srcunit_tex_op_read.sum against REGION / 32 x participants
// says how many reads the LRC merged. `run` adds the timing: per case, the median over CTAs of a
// participant's read time (ns and SM cycles) and the SM clock. `cold` writes a 256 MiB buffer
// before each launch (the L2 holds 60 MiB); `warm` reads the region once before each launch.
// Modes: `bulk` (cp.async.bulk of 16 KiB contiguous bytes) and `tile` (a 2D TMA box of 128 rows
// x 64 fp16 of a 4096-column matrix: 128-byte pieces 8 KiB apart, the GEMM's A and B tiles).
//
// Build: nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o lrc_merge lrc_merge.cu -lcuda
// Every CUDA call is checked; every op's first and last words are checked against the fill.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "device_common.cuh"

constexpr int kSms = 132;
constexpr uint32_t kOp = 16384;      // bytes per op (a 128 x 64 fp16 tile)
constexpr int kStages = 4;           // Triton's GEMM runs 3-4
constexpr u64 kRegion = 2ull << 20;  // bytes every participant reads
constexpr uint32_t kCols = 4096;     // `tile` mode: the matrix is kRows x kCols fp16
constexpr uint32_t kRows = (uint32_t)(kRegion / (kCols * 2));  // the region, 256 rows of 8 KiB
constexpr uint32_t kBandCols = 64, kBoxRows = 128;

// Element i of the region holds fill_of(i). `tile` mode's op j is the box of rows
// [128 (j / 64), +128) and columns [64 (j % 64), +64); `bulk` mode reads the same bytes in
// address order.
__host__ __device__ static inline uint16_t fill_of(u64 element) {
  return (uint16_t)(element * 0x9E37u + (element >> 16));
}

__global__ void fill(uint16_t* a, u64 n) {
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x)
    a[i] = fill_of(i);
}

// role[smid]: the participant index of that SM, or -1. delay[p]: SM cycles participant p waits
// after the common start. out[p]: {start ns, end ns, cycles, errors}.
__global__ void shared_read(const __grid_constant__ CUtensorMap map, const uint8_t* src, int mode,
                            const int* role, const u64* delay, int participants, unsigned* arrived,
                            volatile u64* go, u64* out) {
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  __shared__ __align__(8) u64 bars[kStages];
  if (threadIdx.x != 0) return;
  uint32_t smid;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
  const int p = smid < kSms ? role[smid] : -1;
  if (p < 0) return;
  uint8_t* smem = (uint8_t*)(((uintptr_t)smem_raw + 1023) & ~(uintptr_t)1023);
  for (int s = 0; s < kStages; s++) mbar_init(smem_u32(&bars[s]), 1);
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");

  // A common start: the last participant to arrive sets it 2 us ahead.
  if (atomicAdd(arrived, 1u) + 1 == (unsigned)participants) *go = gtimer() + 2000;
  u64 t_go;
  while ((t_go = *go) == 0) {
  }
  while (gtimer() < t_go) {
  }
  const u64 c_go = clock64();
  while (clock64() - c_go < delay[p]) {
  }

  const u64 t0 = gtimer(), c0 = clock64();
  const uint32_t n_ops = (uint32_t)(kRegion / kOp);
  u64 errors = 0;
  uint32_t parity = 0;
  for (uint32_t k = 0; k < n_ops + kStages; k++) {
    const int s = (int)(k % kStages);
    const uint32_t bar = smem_u32(&bars[s]);
    uint8_t* slot = smem + (size_t)s * kOp;
    if (k >= (uint32_t)kStages) {  // op k - kStages landed in this slot
      mbar_wait(bar, (parity >> s) & 1u);
      parity ^= 1u << s;
      const uint32_t j = k - kStages;
      const uint16_t* h = (const uint16_t*)slot;
      u64 first, last;
      if (mode == 0) {
        first = (u64)j * kOp / 2;
        last = first + kOp / 2 - 1;
      } else {  // box row 0 col 0, and row 127 col 63 (no swizzle: rows of 128 B)
        const u64 r0 = (u64)(j / (kCols / kBandCols)) * kBoxRows,
                  c0e = (j % (kCols / kBandCols)) * kBandCols;
        first = r0 * kCols + c0e;
        last = (r0 + kBoxRows - 1) * kCols + c0e + kBandCols - 1;
      }
      if (h[0] != fill_of(first) || h[kOp / 2 - 1] != fill_of(last)) errors++;
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    }
    if (k < n_ops) {
      mbar_expect_tx(bar, kOp);
      if (mode == 0) {
        bulk_g2s(smem_u32(slot), src + (u64)k * kOp, kOp, bar);
      } else {
        const int col = (int)((k % (kCols / kBandCols)) * kBandCols);
        const int row = (int)((k / (kCols / kBandCols)) * kBoxRows);
        tma2d_g2s(smem_u32(slot), &map, col, row, bar);
      }
    }
  }
  out[4 * p + 0] = t0;
  out[4 * p + 1] = gtimer();
  out[4 * p + 2] = clock64() - c0;
  out[4 * p + 3] = errors;
}

struct Case {
  std::string set;         // pair, delay, many
  int mode;                // 0 bulk, 1 tile
  std::vector<int> sms;    // participant SM ids
  std::vector<u64> delay;  // cycles, per participant
};

static std::string join(const std::vector<int>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); i++) s += (i ? ";" : "") + std::to_string(v[i]);
  return s;
}
static std::string join(const std::vector<u64>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); i++) s += (i ? ";" : "") + std::to_string(v[i]);
  return s;
}

// pair: SM 0 and SM s read together (which SMs share a coalescer); delay: SM 1 or SM 66 starts
// d cycles after SM 0 (how long a merge window stays open); many: SMs 0..k-1, or k SMs spread
// over the chip, all at once (how merging grows with the sharers).
static std::vector<Case> cases() {
  std::vector<Case> c;
  for (int mode : {0, 1}) {
    c.push_back({"one", mode, {0}, {0}});
    for (int s :
         {1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 17, 18, 20, 24, 32, 48, 64, 65, 66, 67, 96, 131})
      c.push_back({"pair", mode, {0, s}, {0, 0}});
    for (int s : {1, 66})
      for (u64 d : {100, 200, 400, 800, 1600, 3200, 6400, 12800, 51200})
        c.push_back({"delay", mode, {0, s}, {0, d}});
    for (int k : {4, 8, 16, 33, 66, 132}) {
      std::vector<int> first(k), spread(k);
      for (int i = 0; i < k; i++) first[i] = i, spread[i] = i * kSms / k;
      c.push_back({"many", mode, first, std::vector<u64>(k, 0)});
      if (k < kSms) c.push_back({"spread", mode, spread, std::vector<u64>(k, 0)});
    }
  }
  return c;
}

static void list(const char* path) {
  FILE* f = fopen(path, "w");
  if (!f) {
    perror(path);
    exit(1);
  }
  fprintf(f, "case,set,mode,participants,sms,delays_cycles,region_bytes,op_bytes,stages\n");
  auto all = cases();
  for (size_t i = 0; i < all.size(); i++)
    fprintf(f, "%zu,%s,%s,%zu,%s,%s,%llu,%u,%d\n", i, all[i].set.c_str(),
            all[i].mode ? "tile" : "bulk", all[i].sms.size(), join(all[i].sms).c_str(),
            join(all[i].delay).c_str(), (unsigned long long)kRegion, kOp, kStages);
  fclose(f);
}


static void run(const char* path, bool cold) {
  CK(cudaSetDevice(0));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  if (prop.multiProcessorCount != kSms) {
    fprintf(stderr, "lrc_merge: %d SMs, the cases are written for %d\n", prop.multiProcessorCount,
            kSms);
    exit(1);
  }
  uint16_t* a;
  const u64 elems = (u64)kRows * kCols;  // the region: both modes read all of it
  CK(cudaMalloc(&a, elems * 2));
  fill<<<1024, 256>>>(a, elems);
  CK(cudaGetLastError());
  const u64 flush_bytes = 256ull << 20;
  int4* flush;
  int* sink;
  CK(cudaMalloc(&flush, flush_bytes));
  CK(cudaMalloc(&sink, 4));
  int* role;
  u64 *delay, *go, *out;
  unsigned* arrived;
  CK(cudaMalloc(&role, kSms * sizeof(int)));
  CK(cudaMalloc(&delay, kSms * sizeof(u64)));
  CK(cudaMalloc(&go, 8));
  CK(cudaMalloc(&arrived, 4));
  CK(cudaMalloc(&out, 4 * kSms * sizeof(u64)));
  CUtensorMap map;
  cuuint64_t gdim[2] = {kCols, kRows};
  cuuint64_t gstride[1] = {kCols * 2};
  cuuint32_t box[2] = {kBandCols, kBoxRows};
  cuuint32_t estr[2] = {1, 1};
  CKD(cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, a, gdim, gstride, box, estr,
                             CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                             CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  const int smem = 2 * kStages * (int)kOp + 1024;  // > half of the SM's 228 KiB: one CTA an SM
  const int smem_bytes = std::max(smem, 120 * 1024);
  CK(cudaFuncSetAttribute(shared_read, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));

  FILE* f = fopen(path, "w");
  if (!f) {
    perror(path);
    exit(1);
  }
  fprintf(f,
          "case,set,mode,l2,participants,sms,delays_cycles,read_ns_med,read_ns_max,"
          "read_cycles_med,sm_mhz,span_ns,event_us,errors\n");
  auto all = cases();
  for (size_t i = 0; i < all.size(); i++) {
    const Case& c = all[i];
    std::vector<int> r(kSms, -1);
    std::vector<u64> d(kSms, 0);
    for (size_t p = 0; p < c.sms.size(); p++) r[c.sms[p]] = (int)p, d[p] = c.delay[p];
    CK(cudaMemcpy(role, r.data(), kSms * sizeof(int), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(delay, d.data(), kSms * sizeof(u64), cudaMemcpyHostToDevice));
    CK(cudaMemset(go, 0, 8));
    CK(cudaMemset(arrived, 0, 4));
    CK(cudaMemset(out, 0, 4 * kSms * sizeof(u64)));
    if (cold) {
      CK(cudaMemset(flush, (int)i, flush_bytes));
    } else {
      touch<<<kSms * 4, 256>>>((const int4*)a, kRegion / 16, sink);
    }
    CK(cudaEventRecord(e0));
    shared_read<<<kSms, 128, smem_bytes>>>(map, (const uint8_t*)a, c.mode, role, delay,
                                           (int)c.sms.size(), arrived, go, out);
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    CK(cudaGetLastError());
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    std::vector<u64> h(4 * kSms);
    CK(cudaMemcpy(h.data(), out, h.size() * sizeof(u64), cudaMemcpyDeviceToHost));
    std::vector<double> ns, cyc, mhz;
    u64 first = ~0ull, last = 0, errors = 0;
    for (size_t p = 0; p < c.sms.size(); p++) {
      const u64* o = &h[4 * p];
      ns.push_back((double)(o[1] - o[0]));
      cyc.push_back((double)o[2]);
      if (o[1] > o[0]) mhz.push_back((double)o[2] / (double)(o[1] - o[0]) * 1000.0);
      first = std::min(first, o[0]);
      last = std::max(last, o[1]);
      errors += o[3];
    }
    fprintf(f, "%zu,%s,%s,%s,%zu,%s,%s,%.0f,%.0f,%.0f,%.0f,%llu,%.2f,%llu\n", i, c.set.c_str(),
            c.mode ? "tile" : "bulk", cold ? "cold" : "warm", c.sms.size(), join(c.sms).c_str(),
            join(c.delay).c_str(), median(ns), *std::max_element(ns.begin(), ns.end()), median(cyc),
            median(mhz), (unsigned long long)(last - first), ms * 1000.0,
            (unsigned long long)errors);
    fflush(f);
    if (errors)
      fprintf(stderr, "case %zu: %llu ops read wrong data\n", i, (unsigned long long)errors);
  }
  fclose(f);
}

int main(int argc, char** argv) {
  if (argc >= 3 && !strcmp(argv[1], "list")) {
    list(argv[2]);
    return 0;
  }
  if (argc >= 4 && !strcmp(argv[1], "run") &&
      (!strcmp(argv[3], "cold") || !strcmp(argv[3], "warm"))) {
    run(argv[2], !strcmp(argv[3], "cold"));
    return 0;
  }
  fprintf(stderr, "usage: lrc_merge list OUT.csv | lrc_merge run OUT.csv cold|warm\n");
  return 2;
}
