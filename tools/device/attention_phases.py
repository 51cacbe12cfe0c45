"""Where a Triton attention CTA's fixed cost goes: %clock64 stamps of each phase of the timed
kernel, per CTA, with %smid and the wave (simfa issue 10, docs/calibration.md §28's next
measurement and §30).

  python3 tools/device/attention_phases.py OUTDIR

`attn_phases` is attention_suite.py's `attn_fwd` (non-causal) with %clock64 reads between its
phases; each read is one CS2R an SM cycle wide, the loop's two a step are kept in registers, and
the stamps are stored at the end. Per CTA (one row of `attention_phases.csv`), SM cycles of the
CTA's own SM counter:
  c_start   the kernel's first instruction (also %globaltimer g_start and %smid)
  c_q       after Q's TMA load and its mbarrier wait (Q in shared memory)
  c_loop0   the loop's top at step 0 (the barrier inits and the prologue's K/V copies issued)
  c_dot0    after step 0's QK^T WGMMA is issued (K0 arrived)
  c_loop1   the loop's top at step 1 (step 0 done: softmax, V0's wait, P V issued)
  c_looplast  the loop's top at the last step
  c_loopend after the loop
  c_end     after the epilogue (the last P V's wait, the division, the O store and its wait)
  g_end     %globaltimer after c_end
Cycles are those of the SM the CTA ran on; the same SM's counter is shared by the CTAs that
follow on it, so the gap between one CTA's c_end and the next CTA's c_start on that SM is the
CTA launch's turn-around. The wave of a CTA is its rank among the CTAs of its SM by start time.

Each point: fresh inputs; the plain kernel (attention_suite.py's attn_fwd, the suite's kernel)
timed cold (256 MiB written before each launch, CUDA events, median of REPS); then the stamped
twin likewise, REPS launches, the one whose %globaltimer span is the median kept. NVML's SM clock
sampled, and the in-kernel clock (cycles / globaltimer ns) per CTA. Output checked against torch.
Never changes clocks or any GPU setting.
"""
import csv
import os
import statistics
import sys
import time

import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attention_suite as su  # noqa: E402  (attn_fwd, triton_launch, make_inputs, gs)

gs = su.gs
REPS = 15
NCOL = 12

# (Z, HQ, HKV, L, D): the suite's non-causal 1 x 32 x 8 x L x 128 series (128 CTAs a 512-token
# launch, one CTA an SM: one wave, 2, 4, 8 waves), and the 512-token launch narrower (4 to 64
# CTAs) for the width of the first wave's cost.
SERIES = [(1, 32, 8, L, 128) for L in (512, 1024, 2048, 4096)]
WIDTH = [(1, 1, 1, 512, 128), (1, 4, 4, 512, 128), (1, 8, 8, 512, 128), (1, 16, 16, 512, 128)]
# PHASES_POINTS="Z,HQ,HKV,L,D;..." runs these shapes in the three tiles instead (e.g. the D = 64
# shapes whose 128x64 tiles hold two CTAs an SM, calibration.md §33).
POINTS = [tuple(int(x) for x in p.split(",")) for p in os.environ.get("PHASES_POINTS", "").split(";") if p]


@triton.jit
def _clk():
    return tl.inline_asm_elementwise("mov.u64 $0, %clock64;", "=l", [], dtype=tl.int64,
                                     is_pure=False, pack=1)


@triton.jit
def _gt():
    return tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64,
                                     is_pure=False, pack=1)


@triton.jit
def _smid():
    return tl.inline_asm_elementwise("mov.u32 $0, %smid;", "=r", [], dtype=tl.int32,
                                     is_pure=False, pack=1)


@triton.jit
def attn_phases(desc_q, desc_k, desc_v, desc_o, sm_scale, N_CTX, GROUP, T,
                HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HQ,
                LOOP_STAMPS: tl.constexpr):
    c_start = _clk()
    g_start = _gt()
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // HQ
    off_kv = off_z * (HQ // GROUP) + (off_hz % HQ) // GROUP
    q_row = off_hz * N_CTX + start_m * BLOCK_M
    kv_row = off_kv * N_CTX
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    q = desc_q.load([q_row, 0])
    c_q = _clk()
    c_loop0 = c_q * 0
    c_dot0 = c_q * 0
    c_loop1 = c_q * 0
    c_looplast = c_q * 0
    for start_n in range(0, N_CTX, BLOCK_N):
        if LOOP_STAMPS:
            t = _clk()
            c_loop0 = tl.where(start_n == 0, t, c_loop0)
            c_loop1 = tl.where(start_n == BLOCK_N, t, c_loop1)
            c_looplast = t
        k = desc_k.load([kv_row + start_n, 0])
        qk = tl.dot(q, k.T)
        if LOOP_STAMPS:
            td = _clk()
            c_dot0 = tl.where(start_n == 0, td, c_dot0)
        p, m_i, l_i, acc = su._softmax_step(qk, m_i, l_i, acc, qk_scale)
        v = desc_v.load([kv_row + start_n, 0])
        acc = tl.dot(p.to(tl.float16), v, acc)
    c_loopend = _clk()
    acc = acc / l_i[:, None]
    desc_o.store([q_row, 0], acc.to(tl.float16))
    c_end = _clk()
    g_end = _gt()
    sm = _smid()
    cta = start_m + off_hz * tl.num_programs(0)
    base = T + cta.to(tl.int64) * 12
    tl.store(base + 0, c_start)
    tl.store(base + 1, c_q)
    tl.store(base + 2, c_loop0)
    tl.store(base + 3, c_dot0)
    tl.store(base + 4, c_loop1)
    tl.store(base + 5, c_looplast)
    tl.store(base + 6, c_loopend)
    tl.store(base + 7, c_end)
    tl.store(base + 8, g_start)
    tl.store(base + 9, g_end)
    tl.store(base + 10, sm.to(tl.int64))
    tl.store(base + 11, cta.to(tl.int64))


COLS = ["c_start", "c_q", "c_loop0", "c_dot0", "c_loop1", "c_looplast", "c_loopend", "c_end",
        "g_start", "g_end", "smid", "cta"]


LOOP = {"on": True}  # False once a config's twin fails to compile with the loop's stamps


def twin_launch(q, k, v, cfg, T):
    Z, HQ, L, D = q.shape
    HKV = k.shape[1]
    bm, bn = cfg["BLOCK_M"], cfg["BLOCK_N"]
    o = torch.full_like(q, float("nan"))
    dq = TensorDescriptor.from_tensor(q.view(-1, D), [bm, D])
    dk = TensorDescriptor.from_tensor(k.view(-1, D), [bn, D])
    dv = TensorDescriptor.from_tensor(v.view(-1, D), [bn, D])
    do = TensorDescriptor.from_tensor(o.view(-1, D), [bm, D])
    grid = (triton.cdiv(L, bm), Z * HQ)
    holder = {}

    def launch():
        holder["k"] = attn_phases[grid](dq, dk, dv, do, 1.0 / D ** 0.5, L, HQ // HKV, T, HEAD_DIM=D,
                                        BLOCK_M=bm, BLOCK_N=bn, HQ=HQ,
                                        LOOP_STAMPS=LOOP["on"], num_warps=cfg["num_warps"], num_stages=cfg["num_stages"])

    return launch, o, grid, holder


def cfg_tag(cfg):
    return f"{cfg['BLOCK_M']}x{cfg['BLOCK_N']}_w{cfg['num_warps']}_s{cfg['num_stages']}"


def main(outdir):
    os.makedirs(outdir, exist_ok=True)
    gs.FLUSH = torch.empty(256 * 1024 * 1024 // 4, device="cuda", dtype=torch.float32)
    pts = open(os.path.join(outdir, "attention_phases_points.csv"), "w", newline="")
    pw = csv.writer(pts)
    pw.writerow(["Z", "HQ", "HKV", "L", "D", "block_m", "block_n", "warps", "stages", "ctas",
                 "loop_stamps",
                 "plain_event_us", "twin_event_us", "twin_span_us", "twin_mhz_inkernel",
                 "nvml_sm_mhz_med", "nvml_sm_mhz_min", "nvml_sm_mhz_max", "rel_err"])
    cf = open(os.path.join(outdir, "attention_phases.csv"), "w", newline="")
    cw = csv.writer(cf)
    cw.writerow(["Z", "HQ", "HKV", "L", "D", "block_m", "block_n", "warps", "stages"] + COLS)
    seen = set()
    t0 = time.time()
    if POINTS:
        points = [(s, c) for c in su.CFGS for s in POINTS]
    else:
        points = [(s, c) for c in su.CFGS for s in SERIES] + [(s, su.CFGS[0]) for s in WIDTH]
    for (Z, HQ, HKV, L, D), cfg in points:
        q, k, v = su.make_inputs(Z, HQ, HKV, L, D, seed=L + HQ)
        heads, ref = su.reference(q, k, v, False)
        launch, o, grid, holder = su.triton_launch(q, k, v, cfg, False)
        launch()
        torch.cuda.synchronize()
        with gs.Sampler() as smp:
            plain_med, _ = gs.time_cold(launch, REPS)
        ctas = grid[0] * grid[1]
        T = torch.zeros((ctas, NCOL), device="cuda", dtype=torch.int64)
        tl_launch, o2, _, th = twin_launch(q, k, v, cfg, T)
        try:
            tl_launch()
            torch.cuda.synchronize()
        except Exception as e:  # noqa: BLE001
            print("twin with the loop's stamps failed, without them:", str(e)[:300], flush=True)
            LOOP["on"] = False
            tl_launch()
            torch.cuda.synchronize()
        err = max(su.check(o, heads, ref), su.check(o2, heads, ref))
        tag = cfg_tag(cfg)
        if tag not in seen:  # the stamped twin's TTGIR and SASS, once a config
            seen.add(tag)
            kk = th["k"]
            with open(os.path.join(outdir, f"attn_phases_{tag}.ttgir"), "w") as f:
                f.write(kk.asm["ttgir"])
            try:
                with open(os.path.join(outdir, f"attn_phases_{tag}.sass"), "w") as f:
                    f.write(kk.asm["sass"])
            except Exception as e:  # noqa: BLE001
                print("no sass:", e)
        runs = []
        evs = []
        with gs.Sampler() as smp2:
            for _ in range(REPS):
                torch.cuda._sleep(100_000)
                gs.FLUSH.zero_()
                e0 = torch.cuda.Event(enable_timing=True)
                e1 = torch.cuda.Event(enable_timing=True)
                e0.record()
                tl_launch()
                e1.record()
                torch.cuda.synchronize()
                evs.append(e0.elapsed_time(e1) * 1000.0)
                t = T.cpu()
                runs.append(((t[:, 9].max() - t[:, 8].min()).item(), t.clone()))
        runs.sort(key=lambda r: r[0])
        span, t = runs[len(runs) // 2]
        cyc = (t[:, 7] - t[:, 0]).double()
        ns = (t[:, 9] - t[:, 8]).double()
        mhz = float((cyc / ns * 1000.0).median())
        st = smp.stats()
        st2 = smp2.stats()
        pw.writerow([Z, HQ, HKV, L, D, cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["num_warps"],
                     cfg["num_stages"], ctas, int(LOOP["on"]), round(plain_med, 3), round(statistics.median(evs), 3),
                     round(span / 1000.0, 3), round(mhz, 1), st["nvml_sm_mhz_med"],
                     min(st["nvml_sm_mhz_min"], st2["nvml_sm_mhz_min"]),
                     max(st["nvml_sm_mhz_max"], st2["nvml_sm_mhz_max"]), "%.1e" % err])
        pts.flush()
        for i in range(ctas):
            cw.writerow([Z, HQ, HKV, L, D, cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["num_warps"],
                         cfg["num_stages"]] + [int(x) for x in t[i].tolist()])
        cf.flush()
        # a one-line summary: the medians of each phase over the first wave (the CTAs that
        # start before any CTA ends) and over the rest
        first_end = int(t[:, 9].min())
        fw = t[t[:, 8] < first_end]
        lw = t[t[:, 8] >= first_end]

        def med(x, a, b):
            return int((x[:, b] - x[:, a]).double().median()) if len(x) else -1

        print(f"{tag} Z{Z} HQ{HQ} HKV{HKV} L{L}: {ctas} CTAs plain {plain_med:.1f} us twin "
              f"{statistics.median(evs):.1f} us {mhz:.0f} MHz err {err:.1e} | first wave "
              f"({len(fw)}) q {med(fw, 0, 1)} pro {med(fw, 1, 2)} k0 {med(fw, 2, 3)} "
              f"step0 {med(fw, 2, 4)} end {med(fw, 6, 7)} cta {med(fw, 0, 7)} | later ({len(lw)}) "
              f"q {med(lw, 0, 1)} pro {med(lw, 1, 2)} k0 {med(lw, 2, 3)} step0 {med(lw, 2, 4)} "
              f"end {med(lw, 6, 7)} cta {med(lw, 0, 7)} [{time.time() - t0:.0f} s]", flush=True)
        del q, k, v, o, o2, T
        torch.cuda.empty_cache()
    pts.close()
    cf.close()


if __name__ == "__main__":
    main(sys.argv[1])
