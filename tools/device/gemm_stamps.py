"""A Triton TMA GEMM's CTA cut in three by %clock64 stamps (simfa issue 17): the setup before the
first copy, the copies and the K loop, the epilogue up to the store's issue.

  python3 tools/device/gemm_stamps.py OUT.csv M,N,K,CFG [M,N,K,CFG ...]

CFG indexes triton_kernels.SUITE_CFGS. The kernel is the suite's (triton_kernels.gemm_tma_kernel)
with four clock reads: `start` first thing, `pre` just before the K loop (Triton's pipeliner puts
the prologue's copies after it), `post` after the loop, read once per accumulator element so that
it waits for the last WGMMAs (thread 0's first element is kept), `end` after the output's TMA
store is issued (Triton's store wait follows at the kernel's end, unstamped). The plain timed
twin (triton_kernels.gemm_tma_timed_kernel: `start` and `end` only) runs on the same inputs, so
that what the two middle stamps cost can be read off (`twin_cycles_med`).

Per point: fresh fp16 inputs, cold L2 (a 256 MiB write before each launch, as gemm_suite.py),
REPS launches of each kernel; the stamped launch whose span is the median is written, one row
per CTA: pid, smid, start and end (ns after the grid's first start, %globaltimer) and the three
phases in SM cycles. Outputs are checked against torch. Only reads clocks.
"""
import csv
import statistics
import sys

import torch
import triton
import triton.language as tl

import triton_kernels as tk

REPS = 7
FIELDS = 8  # start, pre, post, end (%clock64), start_ns, end_ns (%globaltimer), smid, spare


@triton.jit
def _clock_after(x):
    # %clock64 read once x is ready: the register operand orders it after x's producer
    return tl.inline_asm_elementwise("{ .reg .f32 t; mov.f32 t, $1; mov.u64 $0, %clock64; }",
                                     "=l,f", [x], dtype=tl.int64, is_pure=False, pack=1)


@triton.jit
def gemm_tma_stamped_kernel(a_desc, b_desc, c_desc, M, N, K, T,
                            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                            GROUP_M: tl.constexpr):
    c0 = tk._clock64()
    g0 = tk._globaltimer()
    pid = tl.program_id(0)
    offs_m, offs_n = tk.suite_tile(pid, M, N, BLOCK_M, BLOCK_N, GROUP_M)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    c_pre = tk._clock64()
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = a_desc.load([offs_m, k * BLOCK_K])
        b = b_desc.load([offs_n, k * BLOCK_K])
        acc = tl.dot(a, b.T, acc)
    post = _clock_after(acc)
    c_desc.store([offs_m, offs_n], acc.to(tl.float16))
    c1 = tk._clock64()
    g1 = tk._globaltimer()
    sm = tk._smid()
    base = T + pid.to(tl.int64) * 8
    rows = tl.arange(0, BLOCK_M)[:, None]
    cols = tl.arange(0, BLOCK_N)[None, :]
    tl.store(base + 2 + rows * 0 + cols * 0, post, mask=(rows == 0) & (cols == 0))
    tl.store(base + 0, c0)
    tl.store(base + 1, c_pre)
    tl.store(base + 3, c1)
    tl.store(base + 4, g0)
    tl.store(base + 5, g1)
    tl.store(base + 6, sm.to(tl.int64))


def launches(a, b, cfg):
    """(stamped launch, its T), (twin launch, its T), c: on the same inputs and output."""
    M, K = a.shape
    N = b.shape[0]
    c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
    ad, bd, cd = tk.gemm_descs(a, b, c, cfg)
    grid = tk.gemm_grid(M, N, cfg)
    kw = dict(BLOCK_M=cfg["BLOCK_M"], BLOCK_N=cfg["BLOCK_N"], BLOCK_K=cfg["BLOCK_K"],
              GROUP_M=cfg["GROUP_M"], num_warps=cfg["num_warps"], num_stages=cfg["num_stages"])
    Ts = torch.zeros((grid[0], FIELDS), device="cuda", dtype=torch.int64)
    Tt = torch.zeros((grid[0], 5), device="cuda", dtype=torch.int64)
    stamped = lambda: gemm_tma_stamped_kernel[grid](ad, bd, cd, M, N, K, Ts, **kw)  # noqa: E731
    twin = lambda: tk.gemm_tma_timed_kernel[grid](ad, bd, cd, M, N, K, Tt, **kw)  # noqa: E731
    return (stamped, Ts), (twin, Tt), c


def main(out, specs):
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    with open(out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["M", "N", "K", "block_m", "block_n", "block_k", "stages", "warps", "group_m",
                    "span_us", "twin_span_us", "twin_cycles_med", "pid", "smid", "start_ns",
                    "end_ns", "setup_cycles", "loop_cycles", "epilogue_cycles", "cycles",
                    "sm_mhz"])
        for spec in specs:
            M, N, K, ci = (int(x) for x in spec.split(","))
            cfg = tk.SUITE_CFGS[ci]
            a, b = tk.seeded_operands(M, N, K)
            (stamped, Ts), (twin, Tt), c = launches(a, b, cfg)
            ref = a.float() @ b.float().T
            for launch in (stamped, twin):
                c.fill_(float("nan"))
                launch()  # compile, and check
                torch.cuda.synchronize()
                err = ((c.float() - ref).norm() / ref.norm()).item()
                if not err < 1e-2:
                    sys.exit(f"{spec}: relative error {err}")
            span, t, _ = tk.median_cold_launch(stamped, Ts, flush, REPS, 4, 5)
            twin_span, tt, _ = tk.median_cold_launch(twin, Tt, flush, REPS, 2, 3)
            twin_cycles = statistics.median((tt[:, 1] - tt[:, 0]).tolist())
            first = t[:, 4].min().item()
            for pid in range(t.shape[0]):
                c0, pre, post, c1, g0, g1, sm = (int(x) for x in t[pid, :7])
                mhz = (c1 - c0) / max(g1 - g0, 1) * 1000.0
                w.writerow([M, N, K, cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"],
                            cfg["num_stages"], cfg["num_warps"], cfg["GROUP_M"],
                            round(span / 1000.0, 3), round(twin_span / 1000.0, 3), twin_cycles,
                            pid, sm, g0 - first, g1 - first, pre - c0, post - pre, c1 - post,
                            c1 - c0, round(mhz, 1)])
            phases = [statistics.median((t[:, j + 1] - t[:, j]).tolist()) for j in range(3)]
            print(f"{spec}: {t.shape[0]} CTAs, span {span / 1000:.2f} us (twin {twin_span / 1000:.2f}),"
                  f" CTA cycles {statistics.median((t[:, 3] - t[:, 0]).tolist()):.0f} (twin "
                  f"{twin_cycles:.0f}): setup {phases[0]:.0f}, loop {phases[1]:.0f}, epilogue "
                  f"{phases[2]:.0f}", flush=True)
            del a, b, c, Ts, Tt
            torch.cuda.empty_cache()


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
