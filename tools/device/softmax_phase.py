"""Do the two WarpGroups of one CTA run the online softmax in phase? (simfa issue 10,
docs/calibration.md §36.)

  python3 tools/device/softmax_phase.py OUTDIR

`softmax_phase` is attention_suite.py's `softmax_micro` in its `softmax` mode with one `%clock64`
read a step by every thread, taken beside the row max of the step before (the read takes m_i as an
operand, so each row's stamp comes from a thread of the warp that holds the row) and stored to
global memory at once. The accumulator's layout gives each warp 16 rows, so rows 0, 16, ... are
warps 0, 1, ...: with 8 warps, rows 0-63 are WarpGroup 0's and 64-127 WarpGroup 1's. Output:
`softmax_phase.csv`, one row a tile, repetition, step and warp (its first row's stamp, SM cycles);
`softmax_phase_points.csv`, one row a tile: the plain kernel's and the stamped twin's cycles a step
(median of REPS launches, the whole loop over ITERS, as softmax_micro.csv). Never changes clocks
or any GPU setting.
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
def softmax_phase(desc_q, desc_k, T, S, ITERS, c,
                  HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    q = desc_q.load([0, 0])
    k = desc_k.load([0, 0])
    x = tl.dot(q, k.T)
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    rows = tl.arange(0, BLOCK_M)
    t0 = su._clock64()
    for i in range(ITERS):
        tl.store(S + i * BLOCK_M + rows, _clk_beside(m_i))
        p, m_i, l_i, acc = su._softmax_step(x, m_i, l_i, acc, c)
        x = p.to(tl.float16).to(tl.float32)
    t1 = su._clock64()
    tl.store(T + 0, t0)
    tl.store(T + 1, t1)
    tl.store(T + 2 + rows, (tl.sum(acc, 1) + l_i).to(tl.int64))


def main(outdir):
    os.makedirs(outdir, exist_ok=True)
    q = torch.randn((128, D), device="cuda", dtype=torch.float16) * 0.1
    k = torch.randn((128, D), device="cuda", dtype=torch.float16) * 0.1
    o = torch.empty((128, D), device="cuda", dtype=torch.float16)
    T = torch.zeros(2 + 128, device="cuda", dtype=torch.int64)
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


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/simfa_out")
