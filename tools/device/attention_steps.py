"""Every KV step of every CTA of Triton's attention, stamped: do the two CTAs that share an SM run
their steps in phase or in turn? (simfa issue 10, docs/calibration.md §33.)

  python3 tools/device/attention_steps.py OUTDIR

`attn_steps` is attention_suite.py's `attn_fwd` (non-causal) with two `%clock64` reads a KV step,
stored to global memory at once: `top` at the loop's top (before K's wait) and `dot` right after
QK^T's `tl.dot` (K landed and the WGMMAs issued; Triton waits for them before the softmax). Per
CTA also its start, its end, `%smid` and `%globaltimer` at both ends. The output,
`attention_steps.csv`, has one row a CTA and step (SM cycles of the CTA's own SM, whose counter
the CTAs on that SM share, so two co-resident CTAs' stamps compare directly);
`attention_steps_points.csv` one row a point (the plain kernel's and the twin's CUDA-event
times, cold, median of REPS; the in-kernel clock). Never changes clocks or any GPU setting.
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
from attention_phases import _clk, _gt, _smid  # noqa: E402

gs = su.gs
REPS = 11
# (Z, HQ, HKV, L, D): the D = 64 shape whose 128x64 tiles hold two CTAs an SM, and a D = 128
# shape of one CTA an SM.
POINTS = [(4, 16, 16, 1024, 64), (1, 32, 8, 1024, 128)]


@triton.jit
def attn_steps(desc_q, desc_k, desc_v, desc_o, sm_scale, N_CTX, GROUP, T, S,
               HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HQ):
    c_start = _clk()
    g_start = _gt()
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // HQ
    off_kv = off_z * (HQ // GROUP) + (off_hz % HQ) // GROUP
    q_row = off_hz * N_CTX + start_m * BLOCK_M
    kv_row = off_kv * N_CTX
    cta = start_m + off_hz * tl.num_programs(0)
    steps = S + cta.to(tl.int64) * (2 * (N_CTX // BLOCK_N))
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    q = desc_q.load([q_row, 0])
    for start_n in range(0, N_CTX, BLOCK_N):
        i = start_n // BLOCK_N
        tl.store(steps + 2 * i, _clk())
        k = desc_k.load([kv_row + start_n, 0])
        qk = tl.dot(q, k.T)
        tl.store(steps + 2 * i + 1, _clk())
        p, m_i, l_i, acc = su._softmax_step(qk, m_i, l_i, acc, qk_scale)
        v = desc_v.load([kv_row + start_n, 0])
        acc = tl.dot(p.to(tl.float16), v, acc)
    acc = acc / l_i[:, None]
    desc_o.store([q_row, 0], acc.to(tl.float16))
    c_end = _clk()
    g_end = _gt()
    base = T + cta.to(tl.int64) * 6
    tl.store(base + 0, c_start)
    tl.store(base + 1, c_end)
    tl.store(base + 2, g_start)
    tl.store(base + 3, g_end)
    tl.store(base + 4, _smid().to(tl.int64))
    tl.store(base + 5, cta.to(tl.int64))


def twin_launch(q, k, v, cfg, T, S):
    Z, HQ, L, D = q.shape
    HKV = k.shape[1]
    bm, bn = cfg["BLOCK_M"], cfg["BLOCK_N"]
    o = torch.full_like(q, float("nan"))
    dq = TensorDescriptor.from_tensor(q.view(-1, D), [bm, D])
    dk = TensorDescriptor.from_tensor(k.view(-1, D), [bn, D])
    dv = TensorDescriptor.from_tensor(v.view(-1, D), [bn, D])
    do = TensorDescriptor.from_tensor(o.view(-1, D), [bm, D])
    grid = (triton.cdiv(L, bm), Z * HQ)

    def launch():
        attn_steps[grid](dq, dk, dv, do, 1.0 / D ** 0.5, L, HQ // HKV, T, S, HEAD_DIM=D,
                         BLOCK_M=bm, BLOCK_N=bn, HQ=HQ, num_warps=cfg["num_warps"],
                         num_stages=cfg["num_stages"])

    return launch, o, grid


def main(outdir):
    os.makedirs(outdir, exist_ok=True)
    gs.FLUSH = torch.empty(256 * 1024 * 1024 // 4, device="cuda", dtype=torch.float32)
    pf = open(os.path.join(outdir, "attention_steps_points.csv"), "w", newline="")
    pw = csv.writer(pf)
    key = ["Z", "HQ", "HKV", "L", "D", "block_m", "block_n", "warps", "stages"]
    pw.writerow(key + ["ctas", "plain_event_us", "twin_event_us", "twin_mhz_inkernel", "rel_err"])
    sf = open(os.path.join(outdir, "attention_steps.csv"), "w", newline="")
    sw = csv.writer(sf)
    sw.writerow(key + ["cta", "smid", "c_start", "c_end", "step", "top", "dot"])
    for (Z, HQ, HKV, L, D) in POINTS:
        for cfg in su.CFGS:
            q, k, v = su.make_inputs(Z, HQ, HKV, L, D, seed=L + HQ)
            heads, ref = su.reference(q, k, v, False)
            launch, o, grid, _ = su.triton_launch(q, k, v, cfg, False)
            launch()
            torch.cuda.synchronize()
            plain_med, _ = gs.time_cold(launch, REPS)
            ctas = grid[0] * grid[1]
            nsteps = L // cfg["BLOCK_N"]
            T = torch.zeros((ctas, 6), device="cuda", dtype=torch.int64)
            S = torch.zeros((ctas, nsteps, 2), device="cuda", dtype=torch.int64)
            tw, o2, _ = twin_launch(q, k, v, cfg, T, S)
            tw()
            torch.cuda.synchronize()
            err = max(su.check(o, heads, ref), su.check(o2, heads, ref))
            runs = []
            for _ in range(REPS):
                torch.cuda._sleep(100_000)
                gs.FLUSH.zero_()
                e0 = torch.cuda.Event(enable_timing=True)
                e1 = torch.cuda.Event(enable_timing=True)
                e0.record()
                tw()
                e1.record()
                torch.cuda.synchronize()
                runs.append((e0.elapsed_time(e1) * 1000.0, T.cpu().clone(), S.cpu().clone()))
            runs.sort(key=lambda r: r[0])
            ev, t, s = runs[len(runs) // 2]
            mhz = float(((t[:, 1] - t[:, 0]).double() / (t[:, 3] - t[:, 2]).double() * 1000.0).median())
            row = [Z, HQ, HKV, L, D, cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["num_warps"], cfg["num_stages"]]
            pw.writerow(row + [ctas, round(plain_med, 3), round(ev, 3), round(mhz, 1), "%.1e" % err])
            pf.flush()
            for c in range(ctas):
                for i in range(nsteps):
                    sw.writerow(row + [int(t[c, 5]), int(t[c, 4]), int(t[c, 0]), int(t[c, 1]), i,
                                       int(s[c, i, 0]), int(s[c, i, 1])])
            sf.flush()
            steps = (s[:, -1, 0] - s[:, 1, 0]).double() / max(1, nsteps - 2)
            print(f"{Z}x{HQ}x{HKV}x{L}x{D} {cfg['BLOCK_M']}x{cfg['BLOCK_N']} w{cfg['num_warps']}: "
                  f"{ctas} CTAs plain {plain_med:.1f} us twin {ev:.1f} us {mhz:.0f} MHz "
                  f"step {statistics.median(steps.tolist()):.0f} cycles err {err:.1e}", flush=True)
            del q, k, v, o, o2, T, S
            torch.cuda.empty_cache()
    pf.close()
    sf.close()


if __name__ == "__main__":
    main(sys.argv[1])
