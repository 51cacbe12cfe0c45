// atomic_tile.cu -- a persistent kernel's first tile index from an atomic counter (issue 10,
// docs/calibration.md §25): cuDNN's sm90 flash kernel starts each of its 132 CTAs with one
// ATOMG.E.ADD on one counter (its SASS, validation/h100/tilecost/sass0_sass.csv.gz) and its
// producer loads nothing before the index is back.
//
//   atomic_tile OUT.csv
//
// Build: nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o atomic_tile atomic_tile.cu
//
// Kernel: GRID CTAs of 384 threads with 200 KiB of dynamic shared memory (one CTA an SM, as
// cuDNN's); thread 0 reads %clock64, does atomicAdd(counter, 1), stores the result to shared
// memory and reads %clock64 again once it is back (`first`), then a second atomicAdd the same
// way (`second`: the line now in flight to the L2 in every CTA). Each rep: a 256 MiB memset
// (the validation's cold L2), the counter's memset (cuDNN's Memset before its kernel), one
// launch. Per rep the mean and the largest over the CTAs; the CSV gives the median over REPS
// of each. Every CUDA call is checked.
#include "device_common.cuh"

__global__ void atomic_k(unsigned* counter, u64* t) {
  extern __shared__ unsigned smem[];
  if (threadIdx.x == 0) {
    u64 c0 = clk();
    unsigned a = atomicAdd(counter, 1u);
    ((volatile unsigned*)smem)[0] = a;
    u64 c1 = clk();
    unsigned b = atomicAdd(counter, 1u);
    ((volatile unsigned*)smem)[1] = b;
    u64 c2 = clk();
    t[3 * blockIdx.x + 0] = c1 - c0;
    t[3 * blockIdx.x + 1] = c2 - c1;
    t[3 * blockIdx.x + 2] = gtimer();
  }
  __syncthreads();
}

int main(int argc, char** argv) {
  const char* out = argc > 1 ? argv[1] : "atomic_tile.csv";
  const int reps = 20, smem = 200 * 1024;
  CK(cudaFuncSetAttribute(atomic_k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  unsigned* counter;
  u64* t;
  char* flush;
  const size_t flush_bytes = 256u << 20;
  CK(cudaMalloc(&counter, 4));
  CK(cudaMalloc(&t, 3 * 1024 * sizeof(u64)));
  CK(cudaMalloc(&flush, flush_bytes));
  FILE* f = fopen(out, "w");
  if (!f) { perror(out); return 1; }
  fprintf(f, "grid,reps,first_mean_cycles,first_max_cycles,second_mean_cycles,second_max_cycles,start_skew_ns\n");
  for (int grid : {1, 8, 33, 66, 132}) {
    std::vector<double> fm, fx, sm, sx, skew;
    std::vector<u64> h(3 * grid);
    for (int r = 0; r < reps + 2; ++r) {
      CK(cudaMemsetAsync(flush, r & 0xff, flush_bytes));
      CK(cudaMemsetAsync(counter, 0, 4));
      atomic_k<<<grid, 384, smem>>>(counter, t);
      CKL();
      CK(cudaDeviceSynchronize());
      if (r < 2) continue;  // warm-up: module load
      CK(cudaMemcpy(h.data(), t, h.size() * sizeof(u64), cudaMemcpyDeviceToHost));
      double a = 0, b = 0, am = 0, bm = 0;
      u64 g0 = ~0ull, g1 = 0;
      for (int c = 0; c < grid; ++c) {
        a += h[3 * c]; b += h[3 * c + 1];
        am = std::max(am, (double)h[3 * c]); bm = std::max(bm, (double)h[3 * c + 1]);
        g0 = std::min(g0, h[3 * c + 2]); g1 = std::max(g1, h[3 * c + 2]);
      }
      fm.push_back(a / grid); fx.push_back(am); sm.push_back(b / grid); sx.push_back(bm);
      skew.push_back((double)(g1 - g0));
    }
    unsigned final_count;
    CK(cudaMemcpy(&final_count, counter, 4, cudaMemcpyDeviceToHost));
    if (final_count != 2u * grid) { fprintf(stderr, "counter %u, expected %d\n", final_count, 2 * grid); return 1; }
    fprintf(f, "%d,%d,%.0f,%.0f,%.0f,%.0f,%.0f\n", grid, reps, median(fm), median(fx), median(sm),
            median(sx), median(skew));
    printf("grid %3d: first atomic %6.0f mean %6.0f max, second %6.0f mean %6.0f max cycles, skew %.0f ns\n",
           grid, median(fm), median(fx), median(sm), median(sx), median(skew));
  }
  fclose(f);
  printf("%s, %d SMs\n", prop.name, prop.multiProcessorCount);
  return 0;
}
