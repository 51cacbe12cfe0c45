// sm_map.cu -- where the H200 puts CTAs: which SMs share a GPC, and which SM each CTA of a plain
// 1-D launch lands on (simfa issue 17, item 4: the L2 request coalescer merges reads within a GPC).
//
//   sm_map clusters OUT.csv   CTAs of one thread-block cluster run on one GPC (CUDA programming
//                             guide, "Thread Block Clusters"): clusters of 2, 4, 8 and 16 CTAs,
//                             one CTA an SM, every CTA's %smid; SMs seen in one cluster share a GPC
//   sm_map launch OUT.csv     1-D grids of 132, 264 and 528 CTAs, one CTA an SM, each CTA's
//                             %smid and its start (%globaltimer, ns after the grid's first)
//
// Build: nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o sm_map sm_map.cu
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "device_common.cuh"

// More than half an SM's shared memory: one CTA an SM.
constexpr int kSmem = 120 * 1024;

__global__ void where(uint32_t* smid_out, u64* start_out, u64 spin_ns) {
  extern __shared__ uint8_t smem[];
  if (threadIdx.x != 0) return;
  u64 t0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  uint32_t smid;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
  smem[0] = (uint8_t)smid;
  smid_out[blockIdx.x] = smid;
  start_out[blockIdx.x] = t0;
  u64 t = t0;
  while (t - t0 < spin_ns) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
}

struct Grid {
  std::vector<uint32_t> smid;
  std::vector<u64> start;
};

// The grid's placement; empty when the launch is refused (a cluster larger than a GPC can hold).
static Grid launch(int ctas, int cluster, u64 spin_ns) {
  uint32_t* d_smid;
  u64* d_start;
  CK(cudaMalloc(&d_smid, ctas * sizeof(uint32_t)));
  CK(cudaMalloc(&d_start, ctas * sizeof(u64)));
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(ctas);
  cfg.blockDim = dim3(32);
  cfg.dynamicSmemBytes = kSmem;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = cluster;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = cluster > 1 ? 1 : 0;
  cudaError_t e = cudaLaunchKernelEx(&cfg, where, d_smid, d_start, spin_ns);
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    fprintf(stderr, "sm_map: %d CTAs in clusters of %d: %s\n", ctas, cluster,
            cudaGetErrorString(e));
    (void)cudaGetLastError();
    CK(cudaFree(d_smid));
    CK(cudaFree(d_start));
    return {};
  }
  Grid g{std::vector<uint32_t>(ctas), std::vector<u64>(ctas)};
  CK(cudaMemcpy(g.smid.data(), d_smid, ctas * sizeof(uint32_t), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(g.start.data(), d_start, ctas * sizeof(u64), cudaMemcpyDeviceToHost));
  CK(cudaFree(d_smid));
  CK(cudaFree(d_start));
  return g;
}

int main(int argc, char** argv) {
  if (argc < 3 || (strcmp(argv[1], "clusters") && strcmp(argv[1], "launch"))) {
    fprintf(stderr, "usage: sm_map clusters|launch OUT.csv\n");
    return 2;
  }
  CK(cudaFuncSetAttribute(where, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
  CK(cudaFuncSetAttribute(where, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  FILE* f = fopen(argv[2], "w");
  if (!f) {
    perror(argv[2]);
    return 1;
  }
  if (!strcmp(argv[1], "clusters")) {
    fprintf(f, "cluster_size,launch,cta,cluster,smid\n");
    for (int size : {2, 4, 8, 16}) {
      for (int rep = 0; rep < 4; rep++) {
        const int ctas = 132 / size * size;
        Grid g = launch(ctas, size, 20000);  // 20 us: every cluster of the launch overlaps
        for (int c = 0; c < (int)g.smid.size(); c++)
          fprintf(f, "%d,%d,%d,%d,%u\n", size, rep, c, c / size, g.smid[c]);
      }
    }
  } else {
    fprintf(f, "ctas,launch,cta,smid,start_ns\n");
    for (int ctas : {132, 264, 528}) {
      for (int rep = 0; rep < 3; rep++) {
        Grid g = launch(ctas, 1, 5000);
        if (g.smid.empty()) return 1;
        const u64 first = *std::min_element(g.start.begin(), g.start.end());
        for (int c = 0; c < ctas; c++)
          fprintf(f, "%d,%d,%d,%u,%llu\n", ctas, rep, c, g.smid[c],
                  (unsigned long long)(g.start[c] - first));
      }
    }
  }
  fclose(f);
  return 0;
}
