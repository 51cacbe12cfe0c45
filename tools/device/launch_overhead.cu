// launch_overhead.cu -- what a CUDA-event timing adds to a kernel's in-kernel span (issue 17).
//
//   launch_overhead OUT.csv
//
// Build: nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o launch_overhead
// launch_overhead.cu
//
// Kernels (block 128 threads):
//   empty   no body at all: event time only;
//   stamp   thread 0 of each CTA writes %globaltimer and %clock64 at its start and end;
//   spin    grid 1: thread 0 spins until clock64 has advanced S cycles, stamped like `stamp`.
// Each rep: a preceding kernel keeps the GPU ahead of the host (`pre`: a 1-CTA 40 us spin, or
// `flush`: cudaMemsetAsync of 256 MiB as do_bench's cache clear), cudaEventRecord(start), ONE
// launch, cudaEventRecord(end). Medians over REPS reps; span = max(CTA end) - min(CTA start)
// from %globaltimer; event_minus_span = event - span per rep (median). Also `b2b`: 1000
// back-to-back launches between two events (per-launch cost when launches queue), and the
// %globaltimer tick (smallest nonzero step seen by one thread).
// Every CUDA call is checked.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "device_common.cuh"

__global__ void empty_k() {}

// t[4*cta + {0,1,2,3}] = g0, g1, c0, c1
__global__ void stamp_k(u64* t) {
  u64 g0 = gtimer();
  u64 c0 = clock64();
  __syncthreads();
  if (threadIdx.x == 0) {
    u64 c1 = clock64();
    u64 g1 = gtimer();
    u64* p = t + 4 * (size_t)blockIdx.x;
    p[0] = g0;
    p[1] = g1;
    p[2] = c0;
    p[3] = c1;
  }
}

__global__ void spin_k(u64* t, long long cycles) {
  if (threadIdx.x != 0) return;
  u64 g0 = gtimer();
  long long c0 = clock64();
  long long c = c0;
  while (c - c0 < cycles) c = clock64();
  u64 g1 = gtimer();
  if (t) {
    u64* p = t + 4 * (size_t)blockIdx.x;
    p[0] = g0;
    p[1] = g1;
    p[2] = (u64)c0;
    p[3] = (u64)c;
  }
}

__global__ void gt_tick_k(u64* out, int n) {
  u64 best = ~0ull, prev = gtimer();
  int changes = 0;
  while (changes < n) {
    u64 g = gtimer();
    if (g != prev) {
      if (g - prev < best) best = g - prev;
      prev = g;
      changes++;
    }
  }
  out[0] = best;
}

static double vmin(const std::vector<double>& v) {
  return *std::min_element(v.begin(), v.end());
}

struct Ctx {
  void* flush = nullptr;
  size_t flush_bytes = 256ull << 20;
  double mhz_hint = 1980.0;
};

enum Kind { EMPTY, STAMP, SPIN };

static void pre_launch(Ctx& cx, int pre) {
  if (pre == 0) {
    spin_k<<<1, 32>>>(nullptr, 80000);  // ~40 us at 1980 MHz
  } else {
    CK(cudaMemsetAsync(cx.flush, 0, cx.flush_bytes));
  }
  CKL();
}

static FILE* g_csv;

static void measure(Ctx& cx, Kind kind, int grid, long long spin_cycles, int pre, int reps) {
  const int block = 128;
  u64* dt = nullptr;
  size_t per = 4 * (size_t)grid;
  if (kind != EMPTY) CK(cudaMalloc(&dt, per * reps * sizeof(u64)));
  std::vector<cudaEvent_t> s(reps), e(reps);
  for (int i = 0; i < reps; i++) {
    CK(cudaEventCreate(&s[i]));
    CK(cudaEventCreate(&e[i]));
  }
  // warm-up (module load)
  for (int w = 0; w < 3; w++) {
    if (kind == EMPTY)
      empty_k<<<grid, block>>>();
    else if (kind == STAMP)
      stamp_k<<<grid, block>>>(dt);
    else
      spin_k<<<1, block>>>(dt, spin_cycles);
    CKL();
  }
  CK(cudaDeviceSynchronize());
  for (int i = 0; i < reps; i++) {
    pre_launch(cx, pre);
    CK(cudaEventRecord(s[i]));
    if (kind == EMPTY)
      empty_k<<<grid, block>>>();
    else if (kind == STAMP)
      stamp_k<<<grid, block>>>(dt + per * i);
    else
      spin_k<<<1, block>>>(dt + per * i, spin_cycles);
    CKL();
    CK(cudaEventRecord(e[i]));
  }
  CK(cudaDeviceSynchronize());
  std::vector<double> ev, span, diff, mhz;
  std::vector<u64> h(per * reps);
  if (dt) CK(cudaMemcpy(h.data(), dt, h.size() * sizeof(u64), cudaMemcpyDeviceToHost));
  for (int i = 0; i < reps; i++) {
    float ms;
    CK(cudaEventElapsedTime(&ms, s[i], e[i]));
    ev.push_back(ms * 1000.0);
    if (dt) {
      u64 g0 = ~0ull, g1 = 0;
      double c = 0, ns = 0;
      for (int b = 0; b < grid; b++) {
        const u64* p = &h[per * i + 4 * b];
        g0 = std::min(g0, p[0]);
        g1 = std::max(g1, p[1]);
        if (b == 0) {
          c = (double)(p[3] - p[2]);
          ns = (double)(p[1] - p[0]);
        }
      }
      double sp = (g1 - g0) / 1000.0;
      span.push_back(sp);
      diff.push_back(ms * 1000.0 - sp);
      if (ns > 0) mhz.push_back(c / ns * 1000.0);
    }
  }
  for (int i = 0; i < reps; i++) {
    cudaEventDestroy(s[i]);
    cudaEventDestroy(e[i]);
  }
  if (dt) CK(cudaFree(dt));
  const char* kn = kind == EMPTY ? "empty" : kind == STAMP ? "stamp" : "spin";
  const char* pn = pre == 0 ? "spin40us" : "flush256MiB";
  auto f = [](const std::vector<double>& v) { return v.empty() ? -1.0 : median(v); };
  auto fm = [](const std::vector<double>& v) { return v.empty() ? -1.0 : vmin(v); };
  auto s3 = [](double v, char* b) {  // empty field where there is no value
    if (v < 0)
      b[0] = 0;
    else
      snprintf(b, 32, "%.3f", v);
    return b;
  };
  char b1[32], b2[32], b3[32], b4[32], b5[32];
  fprintf(g_csv, "cuda,%s,%d,%d,%lld,%s,%d,%.3f,%.3f,%s,%s,%s,%s,%s,%s\n", kn,
          kind == SPIN ? 1 : grid, block, spin_cycles, pn, reps, f(ev), fm(ev), s3(f(span), b1),
          s3(fm(span), b2), s3(f(diff), b3), s3(fm(diff), b4), s3(f(mhz), b5),
          kind == STAMP ? "clock over the ~0.1 us stamp span is coarse" : "");
  fflush(g_csv);
  printf(
      "%-6s grid %4d spin %7lld pre %-11s: event %8.3f us (min %8.3f) span %8.3f us "
      "event-span %7.3f us (min %7.3f) clk %6.1f MHz\n",
      kn, kind == SPIN ? 1 : grid, spin_cycles, pn, f(ev), fm(ev), f(span), f(diff), fm(diff),
      f(mhz));
  fflush(stdout);
}

static void b2b(int grid, int n) {
  cudaEvent_t s, e;
  CK(cudaEventCreate(&s));
  CK(cudaEventCreate(&e));
  std::vector<double> per;
  for (int r = 0; r < 7; r++) {
    spin_k<<<1, 32>>>(nullptr, 2000000);  // ~1 ms: the host queues all n launches behind it
    CKL();
    CK(cudaEventRecord(s));
    for (int i = 0; i < n; i++) empty_k<<<grid, 128>>>();
    CKL();
    CK(cudaEventRecord(e));
    CK(cudaEventSynchronize(e));
    float ms;
    CK(cudaEventElapsedTime(&ms, s, e));
    if (r) per.push_back(ms * 1000.0 / n);
  }
  fprintf(g_csv,
          "cuda_b2b,empty,%d,128,0,spin1ms,%zu,%.3f,%.3f,,,,,,%d launches between two events; us "
          "per launch\n",
          grid, per.size(), median(per), vmin(per), n);
  printf("b2b empty grid %d: %.3f us per launch (%d launches)\n", grid, median(per), n);
  cudaEventDestroy(s);
  cudaEventDestroy(e);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s OUT.csv\n", argv[0]);
    return 2;
  }
  CK(cudaSetDevice(0));
  Ctx cx;
  CK(cudaMalloc(&cx.flush, cx.flush_bytes));
  g_csv = fopen(argv[1], "w");
  if (!g_csv) return 1;
  fprintf(g_csv,
          "method,kernel,grid,block,spin_cycles,preceded_by,reps,event_us_med,event_us_min,"
          "span_us_med,span_us_min,event_minus_span_us_med,event_minus_span_us_min,"
          "inkernel_sm_mhz,note\n");
  {
    u64* d;
    CK(cudaMalloc(&d, 8));
    gt_tick_k<<<1, 1>>>(d, 2000);
    CKL();
    u64 tick;
    CK(cudaMemcpy(&tick, d, 8, cudaMemcpyDeviceToHost));
    CK(cudaFree(d));
    fprintf(g_csv,
            "globaltimer_tick,gt_tick,1,1,0,none,2000,%.3f,,,,,,,smallest nonzero %%globaltimer "
            "step (us)\n",
            tick / 1000.0);
    printf("globaltimer tick: %llu ns\n", (unsigned long long)tick);
  }
  const int REPS = 200;
  for (int pre = 0; pre < 2; pre++) {
    for (int g : {1, 132, 1056}) measure(cx, EMPTY, g, 0, pre, REPS);
    for (int g : {1, 132, 1056}) measure(cx, STAMP, g, 0, pre, REPS);
    for (long long c : {2000LL, 10000LL, 20000LL, 50000LL, 100000LL, 200000LL})
      measure(cx, SPIN, 1, c, pre, REPS / 2);
  }
  b2b(1, 1000);
  b2b(132, 1000);
  fclose(g_csv);
  CK(cudaFree(cx.flush));
  return 0;
}
