"""WGMMA microbenchmark of the H200's tensor core (simfa issue 10, item 1).

Run on the device machine:  python3 tools/device/wgmma_bench.py OUTDIR [CASE,CASE...]

CASE limits the run to some of the cases below (rate, latency, commit_wait, clock; default all).

Generates OUTDIR/wgmma_bench.cu (one kernel per case, inline PTX), compiles it with nvcc for
sm_90a, runs it and writes OUTDIR/wgmma_bench.csv. Cases:

- rate: each of W WarpGroups of one CTA (W = 1, 2, 3) issues ITERS x 4 `wgmma.mma_async`
  m64nNk16 (f16/bf16) or m64nNk32 (e4m3), accumulating into one register accumulator (acc=1) or
  alternating between two (acc=2), with a commit after every 4 and `wgmma.wait_group 1` (one
  group kept in flight, as a pipelined GEMM loop does). Operands both in shared memory (ss) or
  A from registers (rs, as FA3's P x V). SM cycles per WGMMA = the CTA's clock64 span /
  (W x ITERS x 4): the SM's sustained rate, whatever WarpGroup issued.
- latency: one WarpGroup issues K (1, 2, 4, 8) chained WGMMAs, commits and waits for group 0;
  the clock64 span from before the first issue to after the wait, median over REPS rounds.
- commit/wait: an empty `commit_group` + `wait_group 0`, the same way.
- grid: the rate case on 132 CTAs (one per SM), the in-kernel SM clock from clock64 against
  %globaltimer, to see the per-SM rate under full-chip power.

Operands are fixed non-zero f16/bf16/e4m3 patterns in shared memory (128B-swizzled K-major
descriptors); the accumulators are summed and written out so nothing is dead code. ptxas's
report (and any "wgmma serialized" warning, which would make the rates meaningless) is kept in
OUTDIR/wgmma_bench_ptxas.txt. Never changes clocks or GPU settings.
"""
import csv
import os
import statistics
import subprocess
import sys

NS = [8, 16, 32, 64, 96, 128, 192, 256]
KINDS = {  # name: (ptx type suffix, k, a from registers)
    "f16_ss": ("f32.f16.f16", 16, False),
    "f16_rs": ("f32.f16.f16", 16, True),
    "bf16_ss": ("f32.bf16.bf16", 16, False),
    "e4m3_ss": ("f32.e4m3.e4m3", 32, False),
    "e4m3_rs": ("f32.e4m3.e4m3", 32, True),
}
TWO_ACC_KINDS = ["f16_ss", "f16_rs"]
LAT_CHAIN = [1, 2, 4]
LAT_NS = [16, 32, 64, 128, 192, 256]
ITERS = 512
REPS = 5
SMEM_BYTES = 48 * 1024  # A at 0 (64 rows of 128 B), B at 8 KiB (up to 256 rows of 128 B)


def wgmma_asm(n, kind, acc):
    """The asm statement of one WGMMA into accumulator array `acc`."""
    ptx, k, rs = KINDS[kind]
    regs = n // 2
    outs = ", ".join(f"%{i}" for i in range(regs))
    a_op = f"%{regs}" if not rs else "{" + ", ".join(f"%{regs + i}" for i in range(4)) + "}"
    nxt = regs + (4 if rs else 1)
    b_op = f"%{nxt}"
    fp8 = kind.startswith("e4m3")
    if fp8:
        tail = "p, 1, 1"
    elif rs:
        tail = "p, 1, 1, 0"
    else:
        tail = "p, 1, 1, 0, 0"
    text = (f'"{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{nxt + 1}, 0;\\n'
            f'wgmma.mma_async.sync.aligned.m64n{n}k{k}.{ptx} {{{outs}}}, {a_op}, {b_op}, {tail};\\n}}\\n"')
    out_c = ", ".join(f'"+f"({acc}[{i}])' for i in range(regs))
    in_c = ('"r"(ar[0]), "r"(ar[1]), "r"(ar[2]), "r"(ar[3])' if rs else '"l"(da)')
    return f'asm volatile({text} : {out_c} : {in_c}, "l"(db), "r"(1));'


def fence(acc, n):
    # Keeps the compiler from moving accumulator reads/writes across the WGMMA pipeline.
    return " ".join(f'asm volatile("" : "+f"({acc}[{i}]) :: "memory");' for i in range(n // 2))


COMMON = r"""
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
  fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(e), __FILE__, __LINE__); exit(1); } } while (0)

__device__ __forceinline__ uint64_t smem_desc(uint32_t saddr) {
  // K-major, 128-byte swizzle: start address >> 4, leading byte offset 16 B (unused when
  // swizzled), stride byte offset 1024 B (8 rows of 128 B), layout type 1 (128B swizzle).
  return (uint64_t)((saddr & 0x3FFFF) >> 4) | ((uint64_t)1 << 16) | ((uint64_t)64 << 32) |
         ((uint64_t)1 << 62);
}
__device__ __forceinline__ uint64_t gtimer() {
  uint64_t t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t;
}
__device__ __forceinline__ uint32_t smid() {
  uint32_t s; asm volatile("mov.u32 %0, %%smid;" : "=r"(s)); return s;
}
__device__ __forceinline__ void wg_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void wg_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" :: "n"(N) : "memory");
}
__device__ __forceinline__ void fill_smem(unsigned char* smem, uint32_t pattern) {
  for (int i = threadIdx.x; i < %SMEM% / 4; i += blockDim.x)
    reinterpret_cast<uint32_t*>(smem)[i] = pattern ^ ((i * 2654435761u) & 0x00030003u);
  __syncthreads();
}
"""


def pattern(kind):
    # Small finite non-zero values: f16 / bf16 pairs near 1, e4m3 bytes near 1.
    return {"f16": "0x3c003c00u", "bf16": "0x3f803f80u", "e4m3": "0x38383838u"}[kind.split("_")[0]]


def operands(kind, a_tweaks):
    """A kernel's operands: shared memory filled with the kind's pattern, the A (at 0) and B (at
    8 KiB) descriptors, and A's four registers (the pattern with `a_tweaks` applied)."""
    a = ", ".join(pattern(kind) + t for t in a_tweaks)
    return f"""  extern __shared__ __align__(1024) unsigned char smem[];
  fill_smem(smem, {pattern(kind)});
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  const uint64_t da = smem_desc(base), db = smem_desc(base + 8192);
  uint32_t ar[4] = {{{a}}};
"""


def rate_kernel(name, n, kind, nacc):
    regs = n // 2
    accs = ["d0", "d1"][:nacc]
    decl = " ".join(f"float {a}[{regs}];" for a in accs)
    init = " ".join(f"for (int i = 0; i < {regs}; ++i) {a}[i] = 0.f;" for a in accs)
    body = []
    for j in range(4):
        a = accs[j % nacc]
        body.append(wgmma_asm(n, kind, a))
    sums = " ".join(f"for (int i = 0; i < {regs}; ++i) s += {a}[i];" for a in accs)
    fences = " ".join(fence(a, n) for a in accs)
    return f"""
__global__ void {name}(int iters, long long* out) {{
{operands(kind, ("", " ^ 1u", " ^ 2u", " ^ 3u"))}  {decl} {init}
  __syncthreads();
  const long long t0 = clock64(); const uint64_t g0 = gtimer();
  wg_fence(); {fences}
  for (int it = 0; it < iters; ++it) {{
    {' '.join(body)}
    wg_commit(); wg_wait<1>(); {fences}
  }}
  wg_wait<0>(); {fences}
  __syncthreads();
  const long long t1 = clock64(); const uint64_t g1 = gtimer();
  float s = 0.f; {sums}
  if (threadIdx.x == 0) {{
    long long* o = out + blockIdx.x * 4;
    o[0] = t1 - t0; o[1] = (long long)(g1 - g0); o[2] = smid(); o[3] = (long long)__float_as_int(s);
  }}
}}
"""


def latency_kernel(name, n, kind, chain):
    regs = n // 2
    body = " ".join(wgmma_asm(n, kind, "d0") for _ in range(chain))
    return f"""
__global__ void {name}(int reps, long long* out) {{
{operands(kind, ("", "", "", ""))}  float d0[{regs}]; for (int i = 0; i < {regs}; ++i) d0[i] = 0.f;
  float s = 0.f;
  for (int r = 0; r < reps; ++r) {{
    __syncwarp();
    const long long t0 = clock64();
    wg_fence(); {fence("d0", n)}
    {body}
    wg_commit(); wg_wait<0>(); {fence("d0", n)}
    const long long t1 = clock64();
    s += d0[0];  // a constant index: a dynamic one would put d0 in local memory
    if (threadIdx.x == 0) out[r] = t1 - t0;
  }}
  if (threadIdx.x == 0) out[reps] = (long long)__float_as_int(s);
}}
"""


def commit_wait_kernel(name):
    return f"""
__global__ void {name}(int reps, long long* out) {{
  for (int r = 0; r < reps; ++r) {{
    __syncwarp();
    const long long t0 = clock64();
    wg_commit(); wg_wait<0>();
    const long long t1 = clock64();
    if (threadIdx.x == 0) out[r] = t1 - t0;
  }}
}}
"""


def clock_kernel(name):
    return f"""
__global__ void {name}(int reps, long long* out) {{
  for (int r = 0; r < reps; ++r) {{
    __syncwarp();
    const long long t0 = clock64();
    const long long t1 = clock64();
    if (threadIdx.x == 0) out[r] = t1 - t0;
  }}
}}
"""


def cases():
    out = all_cases()
    if ONLY:
        out = [c for c in out if c["case"] in ONLY]
    return out


ONLY = set()


def all_cases():
    out = []
    for kind in KINDS:
        for n in NS:
            for nacc in ([1, 2] if kind in TWO_ACC_KINDS and n <= 128 else [1]):
                for w in (1, 2, 3):
                    out.append(dict(case="rate", kind=kind, n=n, acc=nacc, wgs=w, chain=0, grid=1))
    for n in (128, 256):
        out.append(dict(case="rate", kind="f16_ss", n=n, acc=1, wgs=2, chain=0, grid=132))
    for kind in ("f16_ss", "f16_rs", "e4m3_ss"):
        for n in LAT_NS:
            for chain in LAT_CHAIN:
                out.append(dict(case="latency", kind=kind, n=n, acc=1, wgs=1, chain=chain, grid=1))
    out.append(dict(case="commit_wait", kind="-", n=0, acc=0, wgs=1, chain=0, grid=1))
    out.append(dict(case="clock", kind="-", n=0, acc=0, wgs=1, chain=0, grid=1))
    return out


def kname(c):
    if c["case"] == "rate":
        return f"rate_{c['kind']}_n{c['n']}_a{c['acc']}"
    if c["case"] == "latency":
        return f"lat_{c['kind']}_n{c['n']}_c{c['chain']}"
    return c["case"] + "_cost"  # not `clock`: that names CUDA's own clock()


def generate(path):
    kernels, seen = [], set()
    for c in cases():
        name = kname(c)
        if name in seen:
            continue
        seen.add(name)
        if c["case"] == "rate":
            kernels.append(rate_kernel(name, c["n"], c["kind"], c["acc"]))
        elif c["case"] == "latency":
            kernels.append(latency_kernel(name, c["n"], c["kind"], c["chain"]))
        elif c["case"] == "commit_wait":
            kernels.append(commit_wait_kernel(name))
        else:
            kernels.append(clock_kernel(name))
    rows = []
    for c in cases():
        rows.append("  {\"%s\", (void*)%s, %d, %d, %d, %d}," % (
            f"{c['case']},{c['kind']},{c['n']},{c['acc']},{c['wgs']},{c['chain']},{c['grid']}",
            kname(c), 1 if c["case"] == "rate" else 0, c["wgs"] * 128, c["grid"],
            ITERS if c["case"] == "rate" else 64))
    main = r"""
struct Case { const char* key; void* fn; int rate; int threads; int grid; int arg; };
static const Case kCases[] = {
%ROWS%
};
int main() {
  long long* d; CK(cudaMalloc(&d, sizeof(long long) * 4096));
  long long h[4096];
  for (const Case& c : kCases) {
    CK(cudaFuncSetAttribute(c.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, %SMEMB%));
    for (int rep = 0; rep < %REPS% + 1; ++rep) {  // the first launch warms up, not printed
      int arg = c.arg;
      void* args[] = {&arg, &d};
      const cudaError_t launched =
          cudaLaunchKernel(c.fn, dim3(c.grid), dim3(c.threads), args, %SMEMB%, 0);
      if (launched == cudaErrorLaunchOutOfResources) {  // e.g. 3 WarpGroups of N = 256
        cudaGetLastError();
        printf("S,%s,registers\n", c.key);
        break;
      }
      CK(launched);
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      const int words = c.rate ? c.grid * 4 : c.arg;
      CK(cudaMemcpy(h, d, sizeof(long long) * words, cudaMemcpyDeviceToHost));
      if (rep == 0) continue;
      if (c.rate) {
        for (int b = 0; b < c.grid; ++b)
          printf("R,%s,%d,%lld,%lld,%lld\n", c.key, rep, h[b * 4], h[b * 4 + 1], h[b * 4 + 2]);
      } else {
        for (int r = 0; r < words; ++r) printf("L,%s,%d,%lld\n", c.key, rep, h[r]);
      }
    }
  }
  CK(cudaFree(d));
  return 0;
}
"""
    src = (COMMON.replace("%SMEM%", str(SMEM_BYTES)) + "".join(kernels) +
           main.replace("%ROWS%", "\n".join(rows)).replace("%REPS%", str(REPS))
           .replace("%SMEMB%", str(SMEM_BYTES)))
    with open(path, "w") as fh:
        fh.write(src)


def main():
    outdir = sys.argv[1]
    if len(sys.argv) > 2 and sys.argv[2] != "--generate-only":
        ONLY.update(sys.argv[2].split(","))
    os.makedirs(outdir, exist_ok=True)
    cu = os.path.join(outdir, "wgmma_bench.cu")
    exe = os.path.join(outdir, "wgmma_bench")
    generate(cu)
    if len(sys.argv) > 2 and sys.argv[2] == "--generate-only":
        return
    ptxas = subprocess.run(["nvcc", "-O3", "-std=c++17", "-gencode=arch=compute_90a,code=sm_90a", "-Xptxas", "-v",
                            "-o", exe, cu], capture_output=True, text=True)
    with open(os.path.join(outdir, "wgmma_bench_ptxas.txt"), "w") as fh:
        fh.write(ptxas.stdout + ptxas.stderr)
    if ptxas.returncode != 0:
        print(ptxas.stderr[-4000:])
        sys.exit(1)
    serialized = [l for l in (ptxas.stdout + ptxas.stderr).splitlines() if "serializ" in l]
    print(f"ptxas: {len(serialized)} wgmma serialization warnings")
    for l in serialized[:10]:
        print("  ", l)
    run = subprocess.run([exe], capture_output=True, text=True)
    with open(os.path.join(outdir, "wgmma_bench_raw.txt"), "w") as fh:
        fh.write(run.stdout)
    if run.returncode != 0:
        print(run.stderr[-4000:])
        sys.exit(1)
    summarize(run.stdout, os.path.join(outdir, "wgmma_bench.csv"))


def summarize(text, path):
    rate, lat = {}, {}
    for line in text.splitlines():
        f = line.split(",")
        if f[0] == "R":
            key = tuple(f[1:8])
            rate.setdefault(key, []).append((int(f[9]), int(f[10]), int(f[11])))
        elif f[0] == "S":
            print("skipped (too many registers for the block):", ",".join(f[1:8]))
        elif f[0] == "L":
            key = tuple(f[1:8])
            lat.setdefault(key, []).append(int(f[9]))
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["case", "kind", "n", "acc", "wgs", "chain", "grid", "wgmma_count", "samples",
                    "cycles_med", "cycles_min", "cycles_max", "cycles_per_wgmma", "sm_mhz",
                    "sms"])
        for key, vals in rate.items():
            case, kind, n, acc, wgs, chain, grid = key
            count = int(wgs) * ITERS * 4
            cyc = [v[0] for v in vals]
            mhz = [v[0] / v[1] * 1000.0 for v in vals if v[1] > 0]
            med = statistics.median(cyc)
            w.writerow([*key, count, len(cyc), med, min(cyc), max(cyc), round(med / count, 3),
                        round(statistics.median(mhz), 1) if mhz else 0,
                        len({v[2] for v in vals})])
        for key, vals in lat.items():
            vals = vals[4:] if len(vals) > 8 else vals  # drop each case's first rounds
            med = statistics.median(vals)
            w.writerow([*key, int(key[5]), len(vals), med, min(vals), max(vals), "", "", 1])
    print(f"wrote {path}")
    # A short table for the reply.
    with open(path) as fh:
        for row in csv.DictReader(fh):
            if row["case"] == "rate" and row["grid"] == "1" and row["acc"] == "1":
                print(row["kind"], row["n"], "wgs", row["wgs"], "cyc/wgmma", row["cycles_per_wgmma"])


if __name__ == "__main__":
    main()
