// icache_cold.cu -- what a kernel's own code costs a CTA when the L2 is cold (simfa issues 10 and
// 17: the first wave of a launch lacks 470 (GEMM) to ~2650 (Triton attention, cuDNN) cycles in
// the model, and a lone TMA load at the kernel's start costs no more than a later one, so the
// candidate is the code: a 256 MiB write flush evicts the kernel's instructions from the L2 too,
// and every SM of the first wave fetches them from DRAM; docs/calibration.md §21, §45).
//
//   icache_cold OUT.csv
//
// Build: nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o icache_cold icache_cold.cu
//
// Kernels `straight<N>`: one WarpGroup (128 threads) a CTA runs N straight-line IMADs (four
// independent chains of mad.lo.u32 on values the compiler cannot know, so nothing folds; 16 B of
// code each) between two %clock64 reads, N = 0, 256, 1024, 4096, 16384 (0 to 256 KiB of code).
// Modes, each launch preceded by:
//   cold   a 256 MiB write (the L2 holds neither the data nor the code)
//   warm   nothing (the same kernel ran just before: its code in the L2 and the SMs' caches)
//   l2     a launch of another kernel of the same size (its code evicts this one's from the SMs'
//          instruction caches but the L2 keeps both)
// Grids of 1, 16 and 132 CTAs. Per (mode, N, grid), REPS launches; columns: the cycles between the
// reads (median, min, max over CTAs of the launch whose median is the median of REPS), the
// launch's CUDA-event time (us, median), the SM clock (MHz, %clock64 over %globaltimer) and the
// SASS instructions between the reads (the run script's cuobjdump count, in the log). Never
// changes clocks or any GPU setting.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "device_common.cuh"

static const int REPS = 7;

#define MAD4                                   \
  "mad.lo.u32 %0, %0, %4, %5;\n\t"             \
  "mad.lo.u32 %1, %1, %4, %5;\n\t"             \
  "mad.lo.u32 %2, %2, %4, %5;\n\t"             \
  "mad.lo.u32 %3, %3, %4, %5;\n\t"
#define MAD16 MAD4 MAD4 MAD4 MAD4
#define MAD64 MAD16 MAD16 MAD16 MAD16
#define MAD256 MAD64 MAD64 MAD64 MAD64

template <int N>
__device__ __forceinline__ void straight_line(uint32_t& a0, uint32_t& a1, uint32_t& a2,
                                              uint32_t& a3, uint32_t b, uint32_t c) {
  if constexpr (N >= 256) {
    asm volatile(MAD256 : "+r"(a0), "+r"(a1), "+r"(a2), "+r"(a3) : "r"(b), "r"(c));
    straight_line<N - 256>(a0, a1, a2, a3, b, c);
  }
}

// `salt` makes two instantiations of one N different code (the `l2` mode's evicting kernel).
template <int N, int salt>
__global__ void __launch_bounds__(128) straight(u64* out, uint32_t b, uint32_t c) {
  uint32_t a0 = threadIdx.x + salt, a1 = a0 ^ b, a2 = a0 + c, a3 = a0 * b;
  const u64 g0 = gtimer();
  const u64 t0 = clk();
  straight_line<N>(a0, a1, a2, a3, b, c);
  const u64 t1 = clk();
  const u64 g1 = gtimer();
  if (threadIdx.x == 0) {
    uint32_t sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    out[blockIdx.x * 4 + 0] = t1 - t0;
    out[blockIdx.x * 4 + 1] = g1 - g0;
    out[blockIdx.x * 4 + 2] = sm;
  }
  if ((a0 ^ a1 ^ a2 ^ a3) == 0x12345678u) out[blockIdx.x * 4 + 3] = a0;
}

typedef void (*Kernel)(u64*, uint32_t, uint32_t);

struct Variant {
  int n;
  Kernel self, other;
};

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: icache_cold OUT.csv\n");
    return 2;
  }
  FILE* f = fopen(argv[1], "w");
  if (!f) {
    perror(argv[1]);
    return 1;
  }
  fprintf(f, "mode,n_instr,grid,reps,cycles_med,cycles_min,cycles_max,event_us_med,sm_mhz\n");
  const u64 flush_n = (256ull << 20) / sizeof(int4);
  int4* fl;
  CK(cudaMalloc(&fl, flush_n * sizeof(int4)));
  u64* out;
  CK(cudaMalloc(&out, 132 * 4 * sizeof(u64)));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  const Variant variants[] = {
      {0, straight<0, 0>, straight<0, 1>},
      {256, straight<256, 0>, straight<256, 1>},
      {1024, straight<1024, 0>, straight<1024, 1>},
      {4096, straight<4096, 0>, straight<4096, 1>},
      {16384, straight<16384, 0>, straight<16384, 1>},
  };
  const char* modes[] = {"cold", "warm", "l2"};
  const int grids[] = {1, 16, 132};
  std::vector<u64> host(132 * 4);
  int flush_value = 1;
  for (const Variant& v : variants) {
    for (int grid : grids) {
      for (const char* mode : modes) {
        std::vector<double> meds, events;
        std::vector<std::vector<double>> launches;
        std::vector<double> mhz;
        for (int r = 0; r < REPS; r++) {
          // Run this kernel once so that `warm` finds its code in the caches.
          v.self<<<grid, 128>>>(out, 3, 5);
          CKL();
          if (mode[0] == 'c') flush_write<<<132 * 4, 256>>>(fl, flush_n, flush_value++);
          if (mode[0] == 'l') v.other<<<132, 128>>>(out, 7, 9);
          CKL();
          CK(cudaDeviceSynchronize());
          CK(cudaEventRecord(e0));
          v.self<<<grid, 128>>>(out, 3 + r, 5 + r);
          CK(cudaEventRecord(e1));
          CK(cudaDeviceSynchronize());
          CKL();
          float ms = 0;
          CK(cudaEventElapsedTime(&ms, e0, e1));
          events.push_back(ms * 1000.0);
          CK(cudaMemcpy(host.data(), out, grid * 4 * sizeof(u64), cudaMemcpyDeviceToHost));
          std::vector<double> cyc;
          for (int b = 0; b < grid; b++) {
            cyc.push_back((double)host[b * 4]);
            if (host[b * 4 + 1] > 0) mhz.push_back(1000.0 * host[b * 4] / host[b * 4 + 1]);
          }
          meds.push_back(median(cyc));
          launches.push_back(cyc);
        }
        // The launch whose median is the median of the launches.
        std::vector<double> sorted = meds;
        std::sort(sorted.begin(), sorted.end());
        const double m = sorted[sorted.size() / 2];
        size_t pick = 0;
        while (meds[pick] != m) pick++;
        const std::vector<double>& cyc = launches[pick];
        fprintf(f, "%s,%d,%d,%d,%.0f,%.0f,%.0f,%.3f,%.0f\n", mode, v.n, grid, REPS, m,
                *std::min_element(cyc.begin(), cyc.end()), *std::max_element(cyc.begin(), cyc.end()),
                median(events), v.n >= 1024 ? median(mhz) : 0.0);
        fflush(f);
        printf("%-5s N=%5d grid=%3d cycles med %7.0f (min %7.0f max %7.0f) event %.2f us\n", mode,
               v.n, grid, m, *std::min_element(cyc.begin(), cyc.end()),
               *std::max_element(cyc.begin(), cyc.end()), median(events));
      }
    }
  }
  fclose(f);
  return 0;
}
