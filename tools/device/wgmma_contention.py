"""Does register arithmetic in one WarpGroup slow the tensor core fed by another? (simfa issue 10,
items 3 and 4: the FA3 / cuDNN softmax hides behind the other consumer's WGMMAs only if it does
not.)

Run on the device machine:  python3 tools/device/wgmma_contention.py OUTDIR

One CTA on one SM. WarpGroup 0 issues ITERS x 4 `wgmma.mma_async` m64n128k16 f16 (operands in
shared memory, `ss`, or A from registers, `rs`, as FA3's P x V), a commit after every 4 and
`wait_group 1`, as wgmma_bench.py's rate case. WarpGroups 1 (and 2) each loop over one op on 64
registers a thread (8192 elements a WarpGroup an iteration): `ex2` (MUFU.EX2), `ffma`, `fmax`
(FMNMX), `mix` (an FFMA, an EX2 and an FADD an element, the softmax's exp step), `fadd`, `fmul`
or `cudnn` (cuDNN's exp step: an FMUL, an FADD, an EX2 and an FADD an element). Modes: the
WGMMA WarpGroup alone, the arithmetic alone, both at once. Each WarpGroup records its own clock64
span; the CSV has SM cycles per WGMMA and arithmetic elements per SM cycle in each mode, the
median of REPS launches after a warm-up. Never changes clocks or GPU settings.

    python3 tools/device/wgmma_contention.py OUTDIR [--ops=fadd,fmul,cudnn] [--generate-only]

`--ops` runs only those ops and writes wgmma_contention_OPS.csv (OPS joined by '_').
"""
import csv
import os
import statistics
import subprocess
import sys

OPS = ["ex2", "ffma", "fmax", "mix", "fadd", "fmul", "cudnn"]
MMA = ["ss", "rs"]
ITERS = 512           # WGMMA loop: 2048 m64n128k16, ~131k cycles at 64.1 a WGMMA
# Arithmetic loop iterations, so one arithmetic WarpGroup alone lasts about as long.
ALU_ITERS = {"ex2": 256, "ffma": 2048, "fmax": 1024, "mix": 256, "fadd": 2048, "fmul": 2048,
             "cudnn": 256}
REPS = 5
SMEM = 48 * 1024

SRC_HEAD = r"""
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
  fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(e), __FILE__, __LINE__); exit(1); } } while (0)
__device__ __forceinline__ uint64_t smem_desc(uint32_t saddr) {
  return (uint64_t)((saddr & 0x3FFFF) >> 4) | ((uint64_t)1 << 16) | ((uint64_t)64 << 32) |
         ((uint64_t)1 << 62);
}
__device__ __forceinline__ void wg_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void wg_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" :: "n"(N) : "memory");
}
"""


def wgmma(rs):
    regs = 64
    outs = ", ".join(f"%{i}" for i in range(regs))
    a_op = "{%64, %65, %66, %67}" if rs else "%64"
    b = 68 if rs else 65
    tail = "p, 1, 1, 0" if rs else "p, 1, 1, 0, 0"
    text = (f'"{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{b + 1}, 0;\\n'
            f'wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {{{outs}}}, {a_op}, %{b}, {tail};\\n}}\\n"')
    out_c = ", ".join(f'"+f"(d[{i}])' for i in range(regs))
    in_c = '"r"(ar[0]), "r"(ar[1]), "r"(ar[2]), "r"(ar[3])' if rs else '"l"(da)'
    return f'asm volatile({text} : {out_c} : {in_c}, "l"(db), "r"(1));'


def fence():
    return " ".join(f'asm volatile("" : "+f"(d[{i}]) :: "memory");' for i in range(64))


def op_code(op):
    if op == "ex2":
        return 'asm volatile("ex2.approx.ftz.f32 %0, %0;" : "+f"(x[i]));'
    if op == "ffma":
        return "x[i] = fmaf(x[i], 0.999f, 0.001f);"
    if op == "fmax":
        return "x[i] = fmaxf(x[i], x[(i + 1) & 63]);"
    if op == "fadd":
        return "x[i] = x[i] + 0.001f;"
    if op == "fmul":
        return "x[i] = x[i] * 0.999f;"
    if op == "cudnn":  # S x scale (FMUL), - max (FADD), exp2 (MUFU), row-sum add (FADD)
        return ('{ float t = __fadd_rn(__fmul_rn(x[i], 0.0625f), -0.5f); '
                'asm volatile("ex2.approx.ftz.f32 %0, %0;" : "+f"(t)); acc += t; x[i] = t; }')
    # mix: S x scale - max (FFMA), exp2 (MUFU), row-sum add (FADD)
    return ('{ float t = fmaf(x[i], 0.0625f, -0.5f); asm volatile("ex2.approx.ftz.f32 %0, %0;" : "+f"(t)); '
            "acc += t; x[i] = t; }")


def kernel(mma, op):
    return f"""
__global__ void k_{mma}_{op}(int mode, int iters, int alu_iters, long long* out) {{
  extern __shared__ __align__(1024) unsigned char smem[];
  for (int i = threadIdx.x; i < {SMEM} / 4; i += blockDim.x)
    reinterpret_cast<uint32_t*>(smem)[i] = 0x3c003c00u ^ ((i * 2654435761u) & 0x00030003u);
  __syncthreads();
  const int wg = threadIdx.x / 128;
  long long t0 = 0, t1 = 0;
  float s = 0.f;
  if (wg == 0) {{
    if (mode & 1) {{
      const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
      const uint64_t da = smem_desc(base), db = smem_desc(base + 8192);
      uint32_t ar[4] = {{0x3c003c00u, 0x3c003c01u, 0x3c003c02u, 0x3c003c03u}};
      float d[64]; for (int i = 0; i < 64; ++i) d[i] = 0.f;
      t0 = clock64();
      wg_fence(); {fence()}
      for (int it = 0; it < iters; ++it) {{
        {wgmma(mma == "rs")} {wgmma(mma == "rs")} {wgmma(mma == "rs")} {wgmma(mma == "rs")}
        wg_commit(); wg_wait<1>(); {fence()}
      }}
      wg_wait<0>(); {fence()}
      t1 = clock64();
      for (int i = 0; i < 64; ++i) s += d[i];
    }}
  }} else if (mode & 2) {{
    float x[64]; float acc = 0.f;
    for (int i = 0; i < 64; ++i) x[i] = 0.25f + 0.001f * (threadIdx.x + i);
    t0 = clock64();
    for (int it = 0; it < alu_iters; ++it) {{
#pragma unroll
      for (int i = 0; i < 64; ++i) {op_code(op)}
    }}
    t1 = clock64();
    for (int i = 0; i < 64; ++i) s += x[i];
    s += acc;
  }}
  __syncthreads();
  if (threadIdx.x % 128 == 0) {{ out[wg * 2] = t1 - t0; out[wg * 2 + 1] = (long long)__float_as_int(s); }}
}}
"""


def cases(ops):
    out = []
    for mma in MMA:
        for op in ops:
            for alu_wgs in (1, 2):
                for mode in (1, 2, 3):
                    if mode == 1 and (op != ops[0] or alu_wgs != 1):
                        continue  # the WGMMA loop alone: once per kind
                    out.append((mma, op, alu_wgs, mode))
    return out


def main():
    outdir = sys.argv[1]
    ops = OPS[:4]  # the committed wgmma_contention.csv
    name = "wgmma_contention"
    for arg in sys.argv[2:]:
        if arg.startswith("--ops="):
            ops = arg[len("--ops="):].split(",")
            name = "wgmma_contention_" + "_".join(ops)
    os.makedirs(outdir, exist_ok=True)
    cu, exe = os.path.join(outdir, "wgmma_contention.cu"), os.path.join(outdir, "wgmma_contention")
    rows = []
    for mma, op, alu_wgs, mode in cases(ops):
        rows.append('  {"%s,%s,%d,%d", (void*)k_%s_%s, %d, %d, %d},' % (
            mma, op, alu_wgs, mode, mma, op, mode, 128 * (1 + alu_wgs), ALU_ITERS[op]))
    main_src = r"""
struct Case { const char* key; void* fn; int mode; int threads; int alu_iters; };
static const Case kCases[] = {
%ROWS%
};
int main() {
  long long* d; CK(cudaMalloc(&d, sizeof(long long) * 8));
  long long h[8];
  for (const Case& c : kCases) {
    CK(cudaFuncSetAttribute(c.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, %SMEM%));
    for (int rep = 0; rep < %REPS% + 1; ++rep) {
      CK(cudaMemset(d, 0, sizeof(long long) * 8));
      int mode = c.mode, iters = %ITERS%, alu = c.alu_iters;
      void* args[] = {&mode, &iters, &alu, &d};
      CK(cudaLaunchKernel(c.fn, dim3(1), dim3(c.threads), args, %SMEM%, 0));
      CK(cudaDeviceSynchronize());
      CK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
      if (rep == 0) continue;
      printf("R,%s,%d,%lld,%lld,%lld\n", c.key, rep, h[0], h[2], h[4]);
    }
  }
  return 0;
}
"""
    src = SRC_HEAD + "".join(kernel(m, o) for m in MMA for o in ops) + (
        main_src.replace("%ROWS%", "\n".join(rows)).replace("%SMEM%", str(SMEM))
        .replace("%REPS%", str(REPS)).replace("%ITERS%", str(ITERS)))
    with open(cu, "w") as fh:
        fh.write(src)
    if "--generate-only" in sys.argv[2:]:
        return
    b = subprocess.run(["nvcc", "-O3", "-std=c++17", "-gencode=arch=compute_90a,code=sm_90a",
                        "-Xptxas", "-v", "-o", exe, cu], capture_output=True, text=True)
    with open(os.path.join(outdir, name + "_ptxas.txt"), "w") as fh:
        fh.write(b.stdout + b.stderr)
    if b.returncode != 0:
        print(b.stderr[-3000:])
        sys.exit(1)
    r = subprocess.run([exe], capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stderr[-3000:])
        sys.exit(1)
    spans = {}
    for line in r.stdout.splitlines():
        f = line.split(",")
        if f[0] == "R":
            spans.setdefault(tuple(f[1:5]), []).append([int(v) for v in f[6:9]])
    path = os.path.join(outdir, name + ".csv")
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["mma", "op", "alu_wgs", "mode", "reps", "mma_cycles", "alu_cycles",
                    "cycles_per_wgmma", "alu_elements_per_cycle"])
        for (mma, op, alu_wgs, mode), v in spans.items():
            alu_wgs, mode = int(alu_wgs), int(mode)
            mma_c = statistics.median(x[0] for x in v) if mode & 1 else 0
            alu_c = statistics.median(max(x[1:1 + alu_wgs]) for x in v) if mode & 2 else 0
            elems = alu_wgs * 8192 * ALU_ITERS[op]  # mix: 3 ops an element
            w.writerow([mma, op, alu_wgs, {1: "mma", 2: "alu", 3: "both"}[mode], len(v), mma_c, alu_c,
                        round(mma_c / (ITERS * 4), 2) if mma_c else "",
                        round(elems / alu_c, 2) if alu_c else ""])
    print(open(path).read())


if __name__ == "__main__":
    main()
