// tma_inflight.cu -- what limits one SM's TMA reads (simfa issue 17): the time of each bulk copy
// from issue to its mbarrier's completion, and the stream's rate, against the copy size and the
// copies in flight, from an L2-resident region (warm) and from DRAM (cold).
//
//   tma_inflight OUT.csv
//
// One CTA (one thread issuing) reads a 2 MiB region in ops of OP bytes through STAGES slots, each
// with its mbarrier, as Triton's pipelined loads do: op k waits for op k - STAGES, then reuses its
// slot. Per op it records %clock64 at issue and at completion (the wait returning; with STAGES >
// 1 a completion is seen only when its slot is next needed, so the stream rate is the reliable
// number there, and the latency column is exact for STAGES = 1). `warm`: the region is read once
// before (ld.global.cg) and stays in the L2; `cold`: a 256 MiB write evicts it. Per (l2, kind, op,
// stages): ops, median and 90th percentile op latency (cycles), stream rate (bytes per SM cycle)
// and the SM clock (MHz). kind `bulk` is cp.async.bulk of contiguous bytes; `tile` is a 2D box of
// OP / 128 rows x 64 fp16 of a 4096-column matrix (rows 8 KiB apart, the GEMM's tiles).
//
// `group` > 1: each stage holds `group` ops on one mbarrier (expect_tx of group x OP bytes, one
// wait for all), as Triton's GEMM loop puts its A and B loads of a k-tile on one barrier; ops
// counts every op, op_cycles the group's time in the ring.
//
// Build: nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o tma_inflight tma_inflight.cu
// -lcuda
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "device_common.cuh"

constexpr u64 kRegion = 2ull << 20;
constexpr uint32_t kCols = 4096;  // tile kind: kRows x kCols fp16
constexpr uint32_t kRows = (uint32_t)(kRegion / (kCols * 2));
constexpr int kMaxStages = 16;
constexpr int kMaxOps = 512;

// out[2k], out[2k+1]: op k's issue and completion cycles; out[2 * kMaxOps]: the stream's cycles,
// out[2 * kMaxOps + 1]: its ns.
__global__ void stream(const __grid_constant__ CUtensorMap map, const uint8_t* src, int tile,
                       uint32_t op_bytes, int stages, int group, u64* out) {
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  __shared__ __align__(8) u64 bars[kMaxStages];
  if (threadIdx.x != 0) return;
  uint8_t* smem = align_1k(smem_raw);
  ring_init(bars, stages);
  const uint32_t n_ops = (uint32_t)(kRegion / op_bytes) / group;  // stage fills
  const uint32_t box_rows = op_bytes / 128, bands = kCols / 64;
  uint32_t parity = 0;
  const u64 g0 = gtimer();
  const u64 c0 = clock64();
  for (uint32_t k = 0; k < n_ops + stages; k++) {
    const int s = (int)(k % stages);
    const uint32_t bar = smem_u32(&bars[s]);
    if (k >= (uint32_t)stages) {
      mbar_wait(bar, (parity >> s) & 1u);
      parity ^= 1u << s;
      out[2 * (k - stages) + 1] = clock64();
    }
    if (k < n_ops) {
      out[2 * k] = clock64();
      mbar_expect_tx(bar, op_bytes * group);
      for (int g = 0; g < group; g++) {
        const uint32_t j = k * group + g;  // the op's place in the region
        uint8_t* slot = smem + ((size_t)s * group + g) * op_bytes;
        if (!tile) {
          bulk_g2s(smem_u32(slot), src + (u64)j * op_bytes, op_bytes, bar);
        } else {
          const int col = (int)((j % bands) * 64), row = (int)((j / bands) * box_rows);
          tma2d_g2s(smem_u32(slot), &map, col, row, bar);
        }
      }
    }
  }
  const u64 g1 = gtimer();
  out[2 * kMaxOps] = clock64() - c0;
  out[2 * kMaxOps + 1] = g1 - g0;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: tma_inflight OUT.csv\n");
    return 2;
  }
  CK(cudaSetDevice(0));
  uint16_t* a;
  CK(cudaMalloc(&a, kRegion));
  CK(cudaMemset(a, 1, kRegion));
  int4* flush;
  int* sink;
  const u64 flush_bytes = 256ull << 20;
  CK(cudaMalloc(&flush, flush_bytes));
  CK(cudaMalloc(&sink, 4));
  u64* out;
  CK(cudaMalloc(&out, (2 * kMaxOps + 2) * sizeof(u64)));
  const int smem_bytes = 200 * 1024;
  CK(cudaFuncSetAttribute(stream, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes));
  FILE* f = fopen(argv[1], "w");
  if (!f) {
    perror(argv[1]);
    return 1;
  }
  fprintf(f,
          "l2,kind,op_bytes,group,stages,ops,op_cycles_med,op_cycles_p90,bytes_per_cycle,sm_mhz\n");
  for (int group : {1, 2, 4})
    for (int cold : {0, 1})
      for (int tile : {0, 1})
        for (uint32_t op : {4096u, 8192u, 16384u, 32768u})
          for (int stages : {1, 2, 3, 4, 6, 8, 12}) {
            if ((u64)stages * group * op + 1024 > (u64)smem_bytes) continue;
            if (group > 1 && (cold || op == 32768u)) continue;
            CUtensorMap map;
            cuuint64_t gdim[2] = {kCols, kRows};
            cuuint64_t gstride[1] = {kCols * 2};
            cuuint32_t box[2] = {64, op / 128};
            cuuint32_t estr[2] = {1, 1};
            CKD(cuTensorMapEncodeTiled(
                &map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, a, gdim, gstride, box, estr,
                CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
            std::vector<double> lat, rate, mhz;
            const uint32_t n_ops = (uint32_t)(kRegion / op) / group;
            for (int rep = 0; rep < 5; rep++) {
              if (cold)
                CK(cudaMemset(flush, rep, flush_bytes));
              else
                touch<<<132 * 4, 256>>>((const int4*)a, kRegion / 16, sink);
              stream<<<1, 32, smem_bytes>>>(map, (const uint8_t*)a, tile, op, stages, group, out);
              CK(cudaDeviceSynchronize());
              std::vector<u64> h(2 * kMaxOps + 2);
              CK(cudaMemcpy(h.data(), out, h.size() * sizeof(u64), cudaMemcpyDeviceToHost));
              for (uint32_t k = 0; k < n_ops; k++) lat.push_back((double)(h[2 * k + 1] - h[2 * k]));
              rate.push_back((double)kRegion / (double)h[2 * kMaxOps]);
              mhz.push_back((double)h[2 * kMaxOps] / (double)h[2 * kMaxOps + 1] * 1000.0);
            }
            std::sort(lat.begin(), lat.end());
            std::sort(rate.begin(), rate.end());
            std::sort(mhz.begin(), mhz.end());
            fprintf(f, "%s,%s,%u,%d,%d,%u,%.0f,%.0f,%.2f,%.0f\n", cold ? "cold" : "warm",
                    tile ? "tile" : "bulk", op, group, stages, n_ops * group, lat[lat.size() / 2],
                    lat[lat.size() * 9 / 10], rate[rate.size() / 2], mhz[mhz.size() / 2]);
            fflush(f);
          }
  fclose(f);
  return 0;
}
