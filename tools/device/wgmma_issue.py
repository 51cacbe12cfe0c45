"""How many WGMMAs can be issued before the issue waits? (simfa issue 10: `[sm.tensor_core]
buffer_depth`, docs/calibration.md §34.)

Run on the device machine:  python3 tools/device/wgmma_issue.py OUTDIR

One CTA of W WarpGroups (W = 1, 2). Each WarpGroup, together after a `__syncthreads`, issues K
`wgmma.mma_async` m64nNk16 f16 (operands in shared memory, one accumulator: a dot's k-steps, as
Triton issues them) and reads `clock64` right after the last issue (`issue`: the cycles the K
issues held the warp), then commits and waits for them (`done`). If the tensor core holds B
issued-but-unfinished WGMMAs, the issue returns at once up to B and then waits for one to finish
per further WGMMA. Medians over REPS rounds, each WarpGroup apart (`wg`), in
OUTDIR/wgmma_issue.csv; the kernels and ptxas's report (any "wgmma serialized" warning voids the
rows) beside it. Never changes clocks or GPU settings.
"""
import csv
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wgmma_bench import COMMON, SMEM_BYTES, fence, operands, wgmma_asm  # noqa: E402

KS = [1, 2, 4, 6, 8, 10, 12, 16, 24, 32]
NS = [64, 128]
WGS = [1, 2]
REPS = 21


def issue_kernel(name, n, k):
    regs = n // 2
    body = " ".join(wgmma_asm(n, "f16_ss", "d0") for _ in range(k))
    return f"""
__global__ void {name}(int reps, long long* out) {{
{operands("f16_ss", ("", "", "", ""))}  float d0[{regs}]; for (int i = 0; i < {regs}; ++i) d0[i] = 0.f;
  float s = 0.f;
  const int wg = threadIdx.x / 128, wgs = blockDim.x / 128;
  for (int r = 0; r < reps; ++r) {{
    __syncthreads();
    const long long t0 = clock64();
    {fence("d0", n)} wg_fence();
    {body}
    const long long t1 = clock64();
    wg_commit(); wg_wait<0>(); {fence("d0", n)}
    const long long t2 = clock64();
    if (threadIdx.x % 128 == 0) {{
      out[(r * wgs + wg) * 2] = t1 - t0;
      out[(r * wgs + wg) * 2 + 1] = t2 - t0;
    }}
  }}
  for (int i = 0; i < {regs}; ++i) s += d0[i];  // after the loop: a read inside it serializes the WGMMAs
  if (threadIdx.x == 0) out[reps * wgs * 2] = (long long)__float_as_int(s);
}}
"""


def main(outdir):
    os.makedirs(outdir, exist_ok=True)
    names = [(n, k, f"issue_n{n}_k{k}") for n in NS for k in KS]
    src = COMMON.replace("%SMEM%", str(SMEM_BYTES))
    src += "".join(issue_kernel(name, n, k) for n, k, name in names)
    src += r"""
typedef void (*Kernel)(int, long long*);
int main(int argc, char** argv) {
  const int reps = %REPS%;
  long long* d; CK(cudaMalloc(&d, sizeof(long long) * (reps * 4 + 1)));
  long long h[%REPS% * 4 + 1];
  struct { int n, k; Kernel f; } ks[] = {%TABLE%};
  printf("n,k,wgs,wg,rep,issue,done\n");
  for (auto& kern : ks) {
    CK(cudaFuncSetAttribute(kern.f, cudaFuncAttributeMaxDynamicSharedMemorySize, %SMEM%));
    for (int wgs = 1; wgs <= 2; ++wgs) {
      kern.f<<<1, 128 * wgs, %SMEM%>>>(reps, d);
      CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
      CK(cudaMemcpy(h, d, sizeof(long long) * (reps * wgs * 2 + 1), cudaMemcpyDeviceToHost));
      for (int r = 1; r < reps; ++r)  // round 0 warms the instruction cache
        for (int w = 0; w < wgs; ++w)
          printf("%d,%d,%d,%d,%d,%lld,%lld\n", kern.n, kern.k, wgs, w, r, h[(r * wgs + w) * 2],
                 h[(r * wgs + w) * 2 + 1]);
    }
  }
  return 0;
}
"""
    table = ", ".join(f"{{{n}, {k}, {name}}}" for n, k, name in names)
    src = src.replace("%TABLE%", table).replace("%REPS%", str(REPS)).replace("%SMEM%", str(SMEM_BYTES))
    cu = os.path.join(outdir, "wgmma_issue.cu")
    with open(cu, "w") as f:
        f.write(src)
    exe = os.path.join(outdir, "wgmma_issue")
    p = subprocess.run(["nvcc", "-O3", "-std=c++17", "-gencode=arch=compute_90a,code=sm_90a",
                        "-Xptxas", "-v", "-o", exe, cu], capture_output=True, text=True)
    with open(os.path.join(outdir, "wgmma_issue_ptxas.txt"), "w") as f:
        f.write(p.stdout + p.stderr)
    if p.returncode:
        sys.exit("nvcc failed:\n" + p.stderr[-3000:])
    if "serialized" in p.stderr:
        print("WARNING: ptxas serialized a wgmma; see wgmma_issue_ptxas.txt", flush=True)
    run = subprocess.run([exe], capture_output=True, text=True, check=True)
    rows = list(csv.DictReader(run.stdout.splitlines()))
    groups = {}
    for r in rows:
        groups.setdefault((int(r["n"]), int(r["k"]), int(r["wgs"]), int(r["wg"])), []).append(r)
    with open(os.path.join(outdir, "wgmma_issue.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["n", "k", "wgs", "wg", "samples", "issue_med", "issue_min", "issue_max",
                    "done_med"])
        for (n, k, wgs, wg), g in sorted(groups.items()):
            iss = [int(r["issue"]) for r in g]
            done = [int(r["done"]) for r in g]
            w.writerow([n, k, wgs, wg, len(g), statistics.median(iss), min(iss), max(iss),
                        statistics.median(done)])
            print(f"n{n} k{k} wgs{wgs} wg{wg}: issue {statistics.median(iss):.0f} "
                  f"done {statistics.median(done):.0f}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
