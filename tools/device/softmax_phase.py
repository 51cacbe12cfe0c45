"""Do the two WarpGroups of one CTA run the online softmax in phase? (simfa issue 10,
docs/calibration.md §36.)

  python3 tools/device/softmax_phase.py OUTDIR
  python3 tools/device/softmax_phase.py OUTDIR --delays 0,64,160,320


`softmax_phase` is attention_suite.py's `softmax_micro` in its `softmax` mode with one `%clock64`
read a step by every thread, taken beside the row max of the step before (the read takes m_i as an
operand, so each row's stamp comes from a thread of the warp that holds the row) and stored to
global memory at once. The accumulator's layout gives each warp 16 rows, so rows 0, 16, ... are
warps 0, 1, ...: with 8 warps, rows 0-63 are WarpGroup 0's and 64-127 WarpGroup 1's. Output:
`softmax_phase.csv`, one row a tile, repetition, step and warp (its first row's stamp, SM cycles);
`softmax_phase_points.csv`, one row a tile: the plain kernel's and the stamped twin's cycles a step
(median of REPS launches, the whole loop over ITERS, as softmax_micro.csv).

With `--delays`, instead (session 40): does an offset between the two WarpGroups last? The 8-warp
tiles' twin with WarpGroup 1's threads held DELAY cycles (their own %clock64) before the loop, so
that it starts the softmax that much behind WarpGroup 0: `softmax_free_delay.csv`, one row a
tile, delay, repetition, step and warp (the step's stamp as above). The model's WarpGroups drift
apart from an in-phase start and then keep their offset (docs/calibration.md §37); on the silicon
an offset that decays, stays or grows tells which pull the model lacks. Never changes clocks or
any GPU setting.
"""
import csv
import os
import statistics
import sys

import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attention_suite as su  # noqa: E402

ITERS = 256
REPS = 5
D = 128
TILES = [dict(BLOCK_M=64, BLOCK_N=64, num_warps=4), dict(BLOCK_M=128, BLOCK_N=64, num_warps=8),
         dict(BLOCK_M=128, BLOCK_N=128, num_warps=8), dict(BLOCK_M=128, BLOCK_N=64, num_warps=4)]


@triton.jit
def _clk_beside(x):
    # One %clock64 read per element of x, by the thread that holds it; x is only an operand.
    return tl.inline_asm_elementwise("mov.u64 $0, %clock64;", "=l,f", [x], dtype=tl.int64,
                                     is_pure=False, pack=1)


@triton.jit
def _stamp_thread(x, base):
    # Each thread stores its %clock64 at base + 8 x %tid.x and returns x. The address needs no
    # other thread's data, so x keeps its layout: no layout conversion, no barrier (the stamps of
    # _clk_beside go to memory through a conversion that syncs the CTA every step).
    return tl.inline_asm_elementwise(
        "{ .reg .u64 t, a; .reg .u32 w; mov.u64 t, %clock64; mov.u32 w, %tid.x; "
        "mul.wide.u32 a, w, 8; add.u64 a, a, $2; st.global.u64 [a], t; mov.f32 $0, $1; }",
        "=f,f,l", [x, base], dtype=tl.float32, is_pure=False, pack=1)


@triton.jit
def _hold_warpgroup1(x, cycles):
    # Threads 128 on (WarpGroup 1 of 8 warps) wait `cycles` of their SM's %clock64; returns x.
    # The braces scope the labels to each copy.
    return tl.inline_asm_elementwise(
        "{ .reg .u64 t0, t1; .reg .u32 w; .reg .pred p; mov.u32 w, %tid.x; "
        "setp.lt.u32 p, w, 128; @p bra DONE; mov.u64 t0, %clock64;\n"
        "SPIN: mov.u64 t1, %clock64; sub.u64 t1, t1, t0; setp.lt.u64 p, t1, $2; @p bra SPIN;\n"
        "DONE: mov.f32 $0, $1; }", "=f,f,l", [x, cycles], dtype=tl.float32, is_pure=False,
        pack=1)


@triton.jit
def _twin_end(T, t0, acc, l_i, BLOCK_M: tl.constexpr):
    # The loop's two clock reads, and the softmax's result so that the loop is not folded away.
    t1 = su._clock64()
    tl.store(T + 0, t0)
    tl.store(T + 1, t1)
    tl.store(T + 2 + tl.arange(0, BLOCK_M), (tl.sum(acc, 1) + l_i).to(tl.int64))


@triton.jit
def softmax_phase(desc_q, desc_k, T, S, ITERS, c,
                  HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    x, m_i, l_i, acc = su._micro_start(desc_q, desc_k, HEAD_DIM, BLOCK_M)
    t0 = su._clock64()
    for i in range(ITERS):
        tl.store(S + i * BLOCK_M + tl.arange(0, BLOCK_M), _clk_beside(m_i))
        p, m_i, l_i, acc = su._softmax_step(x, m_i, l_i, acc, c)
        x = p.to(tl.float16).to(tl.float32)
    _twin_end(T, t0, acc, l_i, BLOCK_M)


@triton.jit
def softmax_free(desc_q, desc_k, T, S_ADDR, ITERS, c, DELAY,
                 HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # The twin whose stamps need no barrier: every thread stores its own clock each step
    # (S_ADDR + 8 x (256 x step + thread)); WarpGroup 1 held DELAY cycles before the loop.
    x, m_i, l_i, acc = su._micro_start(desc_q, desc_k, HEAD_DIM, BLOCK_M)
    m_i = _hold_warpgroup1(m_i, DELAY)
    t0 = su._clock64()
    for i in range(ITERS):
        m_i = _stamp_thread(m_i, S_ADDR + i * 2048)
        p, m_i, l_i, acc = su._softmax_step(x, m_i, l_i, acc, c)
        x = p.to(tl.float16).to(tl.float32)
    _twin_end(T, t0, acc, l_i, BLOCK_M)


def _operands(outdir):
    """The output directory made, and the micro's Q, K, O and the clock-read buffer T."""
    os.makedirs(outdir, exist_ok=True)
    q = torch.randn((128, D), device="cuda", dtype=torch.float16) * 0.1
    k = torch.randn((128, D), device="cuda", dtype=torch.float16) * 0.1
    o = torch.empty((128, D), device="cuda", dtype=torch.float16)
    return q, k, o, torch.zeros(2 + 128, device="cuda", dtype=torch.int64)


def main(outdir):
    q, k, o, T = _operands(outdir)
    S = torch.zeros(ITERS * 128, device="cuda", dtype=torch.int64)
    stamps, points = [], []
    for tile in TILES:
        bm, bn, nw = tile["BLOCK_M"], tile["BLOCK_N"], tile["num_warps"]
        dq = TensorDescriptor.from_tensor(q, [bm, D])
        dk = TensorDescriptor.from_tensor(k, [bn, D])
        do = TensorDescriptor.from_tensor(o, [bm, D])
        plain, twin = [], []
        for rep in range(REPS + 1):  # the first launch compiles and warms up
            su.softmax_micro[(1,)](dq, dk, do, T, ITERS, 0.5, 0.25, HEAD_DIM=D, BLOCK_M=bm,
                                   BLOCK_N=bn, MODE="softmax", REPEAT=1, num_warps=nw,
                                   num_stages=1)
            torch.cuda.synchronize()
            t = T[:2].cpu()
            if rep:
                plain.append(int(t[1] - t[0]) / ITERS)
            softmax_phase[(1,)](dq, dk, T, S, ITERS, 0.5, HEAD_DIM=D, BLOCK_M=bm, BLOCK_N=bn,
                                num_warps=nw, num_stages=1)
            torch.cuda.synchronize()
            t = T[:2].cpu()
            if rep:
                twin.append(int(t[1] - t[0]) / ITERS)
                s = S[:ITERS * bm].view(ITERS, bm)[:, ::16].cpu().tolist()
                for i, row in enumerate(s):
                    for w, stamp in enumerate(row):
                        stamps.append([bm, bn, nw, rep, i, w, stamp])
        points.append([bm, bn, nw, ITERS, round(statistics.median(plain), 2),
                       round(statistics.median(twin), 2)])
        print(f"{bm}x{bn} w{nw}: plain {points[-1][4]} twin {points[-1][5]} cycles a step",
              flush=True)
    with open(os.path.join(outdir, "softmax_phase.csv"), "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["block_m", "block_n", "warps", "rep", "step", "warp", "stamp"])
        w.writerows(stamps)
    with open(os.path.join(outdir, "softmax_phase_points.csv"), "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["block_m", "block_n", "warps", "iters", "plain_cycles_per_step",
                    "twin_cycles_per_step"])
        w.writerows(points)


def delays(outdir, held):
    q, k, o, T = _operands(outdir)
    S = torch.zeros(ITERS * 256, device="cuda", dtype=torch.int64)
    stamps = []
    for tile in TILES:
        bm, bn, nw = tile["BLOCK_M"], tile["BLOCK_N"], tile["num_warps"]
        if nw != 8:
            continue
        dq = TensorDescriptor.from_tensor(q, [bm, D])
        dk = TensorDescriptor.from_tensor(k, [bn, D])
        do = TensorDescriptor.from_tensor(o, [bm, D])
        # The CTA barriers of the plain kernel and of the first twin, for comparison.
        plain = su.softmax_micro[(1,)](dq, dk, do, T, ITERS, 0.5, 0.25, HEAD_DIM=D, BLOCK_M=bm,
                                       BLOCK_N=bn, MODE="softmax", REPEAT=1, num_warps=nw,
                                       num_stages=1)
        twin = softmax_phase[(1,)](dq, dk, T, S, ITERS, 0.5, HEAD_DIM=D, BLOCK_M=bm, BLOCK_N=bn,
                                   num_warps=nw, num_stages=1)
        torch.cuda.synchronize()
        for name, compiled in (("plain", plain), ("twin", twin)):
            ptx = compiled.asm["ptx"]
            print(f"{bm}x{bn} w{nw} {name}: ptx bar.sync {ptx.count('bar.sync')}, "
                  f"barrier.sync {ptx.count('barrier.sync')}", flush=True)
            with open(os.path.join(outdir, f"softmax_{name}_{bm}x{bn}.ptx"), "w") as fh:
                fh.write(ptx)
        for delay in held:
            steps = []
            for rep in range(REPS + 1):  # the first launch compiles and warms up
                kernel = softmax_free[(1,)](dq, dk, T, S.data_ptr(), ITERS, 0.5, delay,
                                            HEAD_DIM=D, BLOCK_M=bm, BLOCK_N=bn, num_warps=nw,
                                            num_stages=1)
                torch.cuda.synchronize()
                if not rep:
                    if delay == held[0]:  # what the compiler made of it: barriers in the loop?
                        for ir in ("ttgir", "ptx"):
                            with open(os.path.join(outdir, f"softmax_free_{bm}x{bn}.{ir}"),
                                      "w") as fh:
                                fh.write(kernel.asm[ir])
                        ptx = kernel.asm["ptx"]
                        print(f"{bm}x{bn} w{nw}: ptx bar.sync {ptx.count('bar.sync')}, "
                              f"barrier.sync {ptx.count('barrier.sync')}", flush=True)
                    continue
                t = T[:2].cpu()
                steps.append(int(t[1] - t[0]) / ITERS)
                s = S.view(ITERS, 256)[:, ::32].cpu().tolist()  # lane 0 of each warp
                for i, row in enumerate(s):
                    for w, stamp in enumerate(row):
                        stamps.append([bm, bn, nw, delay, rep, i, w, stamp])
            # WarpGroup 1's step top after WarpGroup 0's (warp 4 against warp 0), by step
            top = {(r[4], r[5], r[6]): r[7] for r in stamps if r[:4] == [bm, bn, nw, delay]}
            lag = {i: statistics.median(top[rep, i, 4] - top[rep, i, 0]
                                        for rep in range(1, REPS + 1))
                   for i in (0, 1, 2, 4, 8, 16, 64, ITERS - 1)}
            print(f"{bm}x{bn} w{nw} delay {delay}: {statistics.median(steps):.1f} cycles a step; "
                  f"WarpGroup 1 behind by (step: cycles) {lag}", flush=True)
    with open(os.path.join(outdir, "softmax_free_delay.csv"), "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["block_m", "block_n", "warps", "delay", "rep", "step", "warp", "stamp"])
        w.writerows(stamps)


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/simfa_out"
    if "--delays" in sys.argv:
        delays(out, [int(d) for d in sys.argv[sys.argv.index("--delays") + 1].split(",")])
    else:
        main(out)
