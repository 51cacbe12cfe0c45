"""The Triton TMA GEMM's prologue and epilogue per CTA, %clock64-stamped (simfa issue 10,
docs/calibration.md §30): do the attention probe's mbarrier-init cost and store wait hold for the
GEMMs the TTGIR route shares them with?

  python3 tools/device/gemm_phases.py OUT.csv

`gemm_phases` is triton_kernels.py's gemm_tma_kernel with %clock64 reads: the CTA's start
(c_start), the K loop's top at its first iteration (c_loop0: the stages' mbarrier inits and the
prologue's copies done), the loop's end (c_loopend), just before the C store (c_prestore: the
accumulator converted) and after it (c_end: the tile in shared memory, the TMA store issued and
its cp.async.bulk.wait_group.read), with %globaltimer at start and end and %smid; one row a CTA,
the launch whose globaltimer span is the median of REPS kept (cold L2: 256 MiB written before each
launch). The suite's three tiles (triton_kernels.SUITE_CFGS: 128x128 4 warps 3 stages, 128x256
8 warps 3 stages, 64x128 4 warps 4 stages) on one CTA, one wave and many waves. Output checked
against torch. Never changes clocks or any GPU setting.
"""
import csv
import sys

import torch
import triton
import triton.language as tl

import triton_kernels as tk

REPS = 9
SHAPES = [(128, 256, 512), (1024, 1024, 512), (4096, 4096, 512)]


@triton.jit
def gemm_phases(a_desc, b_desc, c_desc, M, N, K, T,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                GROUP_M: tl.constexpr):
    c_start = tk._clock64()
    g_start = tk._globaltimer()
    pid = tl.program_id(0)
    offs_m, offs_n = tk.suite_tile(pid, M, N, BLOCK_M, BLOCK_N, GROUP_M)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    c_loop0 = c_start * 0
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        t = tk._clock64()
        c_loop0 = tl.where(k == 0, t, c_loop0)
        a = a_desc.load([offs_m, k * BLOCK_K])
        b = b_desc.load([offs_n, k * BLOCK_K])
        acc = tl.dot(a, b.T, acc)
    c_loopend = tk._clock64()
    c = acc.to(tl.float16)
    c_prestore = tk._clock64()
    c_desc.store([offs_m, offs_n], c)
    c_end = tk._clock64()
    g_end = tk._globaltimer()
    sm = tk._smid()
    base = T + pid.to(tl.int64) * 8
    tl.store(base + 0, c_start)
    tl.store(base + 1, c_loop0)
    tl.store(base + 2, c_loopend)
    tl.store(base + 3, c_prestore)
    tl.store(base + 4, c_end)
    tl.store(base + 5, g_start)
    tl.store(base + 6, g_end)
    tl.store(base + 7, sm.to(tl.int64))


def main(out):
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    with open(out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["M", "N", "K", "block_m", "block_n", "block_k", "stages", "warps", "pid",
                    "c_start", "c_loop0", "c_loopend", "c_prestore", "c_end", "g_start", "g_end",
                    "smid"])
        for ci, cfg in enumerate(tk.SUITE_CFGS):
            for M, N, K in SHAPES:
                a, b = tk.seeded_operands(M, N, K)
                c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
                ad, bd, cd = tk.gemm_descs(a, b, c, cfg)
                grid = tk.gemm_grid(M, N, cfg)
                T = torch.zeros((grid[0], 8), device="cuda", dtype=torch.int64)
                kw = dict(BLOCK_M=cfg["BLOCK_M"], BLOCK_N=cfg["BLOCK_N"], BLOCK_K=cfg["BLOCK_K"],
                          GROUP_M=cfg["GROUP_M"], num_warps=cfg["num_warps"],
                          num_stages=cfg["num_stages"])

                def launch():
                    return gemm_phases[grid](ad, bd, cd, M, N, K, T, **kw)

                kern = launch()
                torch.cuda.synchronize()
                if M == 1024:
                    name = tk.cfg_name(cfg)
                    with open(out.replace(".csv", f"_{name}.ttgir"), "w") as fh:
                        fh.write(kern.asm["ttgir"])
                    with open(out.replace(".csv", f"_{name}.sass"), "w") as fh:
                        fh.write(kern.asm["sass"])
                span, t, _ = tk.median_cold_launch(launch, T, flush, REPS, 5, 6)
                ref = a.float() @ b.float().T
                err = ((c.float() - ref).norm() / ref.norm()).item()
                for pid in range(t.shape[0]):
                    w.writerow([M, N, K, cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"],
                                cfg["num_stages"], cfg["num_warps"], pid] + [int(x) for x in t[pid].tolist()])
                f.flush()
                d = t.double()
                mhz = float(((d[:, 4] - d[:, 0]) / (d[:, 6] - d[:, 5]) * 1000).median())

                def med(i, j):
                    return int((t[:, j] - t[:, i]).double().median())
                print(f"{tk.cfg_name(cfg)} {M}x{N}x{K}: {grid[0]} CTAs span {span / 1000:.1f} us "
                      f"{mhz:.0f} MHz err {err:.1e} | pro {med(0, 1)} loop {med(1, 2)} cvt {med(2, 3)} "
                      f"store {med(3, 4)} cta {med(0, 4)}", flush=True)
                del a, b, c, T


if __name__ == "__main__":
    main(sys.argv[1])
