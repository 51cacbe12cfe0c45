#!/usr/bin/env python3
"""The hold-out scan behind the survival curve's onset (analytical/llc_survival.h, issue 18).

  tools/analytical_onset_scan.py [SIMFA MANIFEST]

The analytical model charges a re-used operand's re-fetch by its LRU stack distance d against the
effective LLC: survival 1 up to ONSET x C_eff, falling linearly to 0 over WIDTH x C_eff. WIDTH
(0.4) is tma_chase.csv's near-hit transition; ONSET is the one number checked against kernels.
This script re-computes the model's DRAM reads for every point of validation/h200/gemm_ncu.csv
and attention/ncu_attention_raw.csv at several onsets and prints the MAPE on two halves of the
data: the fit half (GEMM shapes at even positions of the suite's shape list, every
configuration of a shape in the same half; attention points of even ncu order) and the held-out
half. The bookkeeping is analytical/gemm_model.cpp's and fa3_model.cpp's, re-written here for
the scan; given a simfa binary and manifest (configs/h200.toml) it first checks that at the
built-in onset it reproduces `simfa analyze` on every point (within 1e-4).

A second table scans the GEMM drift constant k* (analytical/gemm_model.cpp, out_of_step_share:
the share of the way from the lockstep reads to the out-of-step bound that two CTAs per SM take,
averaged over the CTAs of the waves; k* is the barrier, in k-steps, of the sharers' escape rate, which the
DRAM's load lowers) on
the same fit / held-out halves and on gemm_ncu_cliff.csv, which neither scan fits; MAPE /
largest error (points off by more than 25%).
"""
import csv
import json
import math
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
H200 = ROOT / "validation" / "h200"
SMS, SMEM, C_EFF = 132, 233472, 60 * 2**20 / 2   # configs/h200.toml: 132 SMs, 228 KiB, 60 MiB / 2
ONSET, WIDTH = 0.95, 0.4                         # analytical/llc_survival.h
L2_RATE, WINDOW, DRIFT = 34.8, 0.15, 76          # analytical/gemm_model.cpp: out_of_step_share
MMA_RATE = 4096                                  # configs/h200.toml: mma_flops_per_cycle_per_sm
DRAM_PER_SM_CYCLE = 4.8e12 / (132 * 1.98e9)      # configs/h200.toml: dram_bandwidth / (sm_count x clock)


def cdiv(a, b):
    return -(-a // b)


def near_copy_share(readers):
    """LLC capacity a byte takes when `readers` SMs read its line: its copies / 2 (llc_survival.h)."""
    return 1 - 2.0 ** -(readers + 1)


def mean_survival(onset, d0, d1):
    """Mean of the ramp over a stack distance running linearly from d0 to d1 bytes."""
    end = onset + WIDTH
    lo, hi = sorted((d0 / C_EFF, d1 / C_EFF))
    if hi <= onset:
        return 1.0
    if lo >= end:
        return 0.0
    if hi - lo < 1e-12:
        return (end - lo) / WIDTH

    def area(x):
        if x <= onset:
            return x
        if x >= end:
            return onset + WIDTH / 2
        t = x - onset
        return onset + t - t * t / (2 * WIDTH)
    return (area(hi) - area(lo)) / (hi - lo)


def gemm_reads(onset, m, n, k, bm, bn, bk, stages, e=2, ce=2, drift=DRIFT, parts=False):
    """Row-major raster (the suite's GROUP_M = 1), CTAs per SM by shared memory. With parts, a dict
    of the pieces (lockstep reads, out-of-step bound, the share escaped, waves) besides the reads."""
    smem = max(stages * (bm + bn) * bk * e + 8 * stages, bm * bn * ce)
    cps = max(1, SMEM // (smem + 1024))
    p = SMS * cps
    mt, nt = cdiv(m, bm), cdiv(n, bn)
    ap, bp = bm * k * e, bn * k * e
    aclip, bclip = (mt * bm - m) * k * e, (nt * bn - n) * k * e

    def split(a, b):
        r0, r1 = a // nt, (b - 1) // nt
        rows = r1 - r0 + 1
        if rows == 1:
            cols, last_col = (b - 1) % nt - a % nt + 1, (b - 1) % nt == nt - 1
        elif rows == 2 and (b - 1) % nt + 1 < a % nt:
            cols, last_col = (b - 1) % nt + 1 + nt - a % nt, True
        else:
            cols, last_col = nt, True
        return (rows * ap - (aclip if r1 == mt - 1 else 0), cols * bp - (bclip if last_col else 0), rows, cols)

    def panels(a, b):
        pa, pb, _, _ = split(a, b)
        return pa + pb

    def capacity(a, b):   # the panels by the LLC capacity their copies take
        pa, pb, rows, cols = split(a, b)
        return pa * near_copy_share((b - a) / rows) + pb * near_copy_share((b - a) / cols)
    total, prev = 0.0, None
    for a in range(0, mt * nt, p):
        b = min(a + p, mt * nt)
        f, fc = panels(a, b), capacity(a, b)
        if prev is None:
            total += f
        else:
            pa, pb, pf, pc, pt = prev
            shared = pf + f - panels(pa, b)
            fresh = panels(0, b) - panels(0, pb)
            older = max(0.0, f - shared - fresh)
            total += (fresh + shared * (1 - mean_survival(onset, pc + pt, fc + pt))
                      + older * (1 - mean_survival(onset, 2 * pc + pt, pc + fc + pt)))
        prev = (a, b, f, fc, (b - a) * bm * bn * ce)
    # Out of step: the staggered bound (a B panel re-used only across all of B and one A panel and
    # a tile row of C tiles), and the share of the way toward it that two CTAs per SM drift: the
    # memory-paced share of a k-step (MMA cycles against the TMA bytes at the L2's rate per SM) and
    # the DRAM's load at the reads of the CTAs escaped so far set the sharers' escape rate per wave
    # over the barrier k*, averaged over the CTAs.
    ctas = mt * nt
    waves = cdiv(ctas, p)
    t_mma, t_tma = 2 * bm * bn * bk / MMA_RATE, (bm + bn) * bk * e / L2_RATE
    paced = max(0.0, 1 - t_mma / t_tma)
    if cps < 2 or waves < 2 or paced <= 0:
        return dict(reads=total, lockstep=total, staggered=None, share=0.0, waves=waves, per_wave=p,
                    ctas=ctas, k_steps=cdiv(k, bk), ctas_per_sm=cps) if parts else total
    a_all, b_all = mt * ap - aclip, nt * bp - bclip
    dist = b_all + ap + nt * bm * bn * ce
    staggered = a_all + b_all + (mt - 1) * b_all * (1 - mean_survival(onset, dist, dist))
    barrier_sq = (drift / (paced * cdiv(k, bk))) ** 2
    load_per_byte = 1 / (ctas * cdiv(k, bk) * max(t_mma, t_tma) * DRAM_PER_SM_CYCLE)
    extra = max(0.0, staggered - total)
    hazard = escaped = share = 0.0
    for w in range(1, waves):
        load = min(1.0, (total + escaped * extra) * load_per_byte)
        hazard += WINDOW * math.exp(-(1 - load) * barrier_sq)
        escaped = 1 - math.exp(-hazard)
        share += (p if w < waves - 1 else ctas - (waves - 1) * p) * escaped
    if parts:
        return dict(reads=total + share / ctas * extra, lockstep=total, staggered=staggered,
                    share=share / ctas, waves=waves, per_wave=p, ctas=ctas, k_steps=cdiv(k, bk),
                    ctas_per_sm=cps)
    return total + share / ctas * extra


def attention_reads(onset, z, hq, hkv, length, d, causal, bm, bn, e=2, points=8):
    """One CTA per SM, Q tile fastest then head: the fa3 model with seqlen_q = seqlen_k."""
    nm, nn = cdiv(length, bm), cdiv(length, bn)
    c, nkv = (hq // hkv) * nm, z * hkv
    t = nkv * c
    kvh, q = 2 * length * d * e, z * hq * length * d * e
    tiles = min(SMS, t) * bm * d * e * (near_copy_share(1) + 1)   # Q tiles one CTA reads, O tiles written
    kvd = kvh * near_copy_share(min(c, SMS))
    if causal:   # streamed share of K/V rows: tile m sees (m+1) bm keys, in whole bn tiles, clipped
        rows = sum(min(length, cdiv((i + 1) * bm, bn) * bn) for i in range(nm))
        rho = rows / (nm * length)
        lo, hi = max(0.0, 2 * rho - 1), min(1.0, 2 * rho)
        shares = [lo + (hi - lo) * (i + 0.5) / points for i in range(points)]
    else:
        shares = [1.0]
    total, prev = q + nkv * kvh, None
    for a in range(0, t, SMS):
        heads = (min(a + SMS, t) - 1) // c - a // c + 1
        if prev is not None and a % c:
            total += kvh * sum(s * (1 - mean_survival(onset, prev * s * kvd + tiles, heads * s * kvd + tiles))
                               for s in shares) / len(shares)
        prev = heads
    return total


ATTENTION_TILES = {"cudnn": (128, 128), "triton": (128, 64)}   # as tools/validate.py's analytical_ncu


def points():
    """(kind, fit half?, label, measured, f(onset) -> predicted, simfa spec)."""
    out, shapes = [], []
    rows = list(csv.DictReader(open(H200 / "gemm_ncu.csv")))
    for r in rows:
        if (r["M"], r["N"], r["K"]) not in shapes:
            shapes.append((r["M"], r["N"], r["K"]))
    for r in rows:
        m, n, k, bm, bn, bk, st = (int(r[c]) for c in ("M", "N", "K", "block_m", "block_n", "block_k", "stages"))
        spec = f"gemm:m={m},n={n},k={k},block_m={bm},block_n={bn},block_k={bk},stages={st},raster=row_major"
        out.append(("gemm", shapes.index((r["M"], r["N"], r["K"])) % 2 == 0, spec, float(r["dram__bytes_read.sum"]),
                    lambda o, a=(m, n, k, bm, bn, bk, st), **kw: gemm_reads(o, *a, **kw), spec))
    for r in csv.DictReader(open(H200 / "gemm_ncu_cliff.csv")):
        m, n, k, bm, bn, bk, st = (int(r[c]) for c in ("M", "N", "K", "block_m", "block_n", "block_k", "stages"))
        spec = f"gemm:m={m},n={n},k={k},block_m={bm},block_n={bn},block_k={bk},stages={st},raster=row_major"
        out.append(("gemm", None, spec, float(r["dram__bytes_read.sum"]),
                    lambda o, a=(m, n, k, bm, bn, bk, st), **kw: gemm_reads(o, *a, **kw), spec))
    shape = {int(r["order"]): r for r in csv.DictReader(open(H200 / "attention" / "ncu_points.csv"))}
    for r in csv.DictReader(open(H200 / "attention" / "ncu_attention_raw.csv")):
        if not r["ID"]:
            continue
        s = shape[int(r["ID"])]
        z, hq, hkv, length, d, causal = (int(s[c]) for c in ("Z", "HQ", "HKV", "L", "D", "causal"))
        bm, bn = ATTENTION_TILES[s["impl"]]
        spec = (f"fa3:batch={z},heads={hq},kv_heads={hkv},seqlen={length},head_dim={d},block_m={bm},"
                f"block_n={bn},causal={'true' if causal else 'false'}")
        out.append(("attention", int(r["ID"]) % 2 == 0, f"{s['impl']} {spec}",
                    float(r["dram__bytes_read.sum"].replace(",", "")),
                    lambda o, a=(z, hq, hkv, length, d, causal, bm, bn): attention_reads(o, *a), spec))
    return out


def main(argv):
    pts = points()
    if len(argv) == 2:
        simfa, manifest = argv
        worst = 0.0
        for _, _, label, _, predict, spec in pts:
            p = subprocess.run([simfa, "analyze", manifest, "--workload", spec, "--json"], capture_output=True,
                               text=True, check=True)
            got = json.loads(p.stdout)["result"]["dram_read_bytes"]
            worst = max(worst, abs(predict(ONSET) - got) / got)
        print(f"re-computation against `simfa analyze` at onset {ONSET}: largest relative difference {worst:.1e}")
        if worst > 1e-4:
            print("error: the scan no longer reproduces the model", file=sys.stderr)
            return 1
    print("| onset (x C_eff) | GEMM fit | GEMM held out | attention fit | attention held out | fit, pooled |")
    print("|---:|---:|---:|---:|---:|---:|")
    for onset in (0.8, 0.85, 0.9, 0.95, 1.0, 1.05, 1.1, 1.2):
        cells, pooled = {}, []
        for kind in ("gemm", "attention"):
            for fit in (True, False):
                errs = [abs(f(onset) - meas) / meas * 100 for kk, ff, _, meas, f, _ in pts if kk == kind and ff == fit]
                cells[(kind, fit)] = f"{sum(errs) / len(errs):.2f}% / {max(errs):.0f}%"
                if fit:
                    pooled += errs
        print(f"| {onset:.2f} | {cells[('gemm', True)]} | {cells[('gemm', False)]} | {cells[('attention', True)]} | "
              f"{cells[('attention', False)]} | {sum(pooled) / len(pooled):.2f}% |")
    print()
    print("| drift k* (k-steps) | GEMM fit | GEMM held out | GEMM cliff set | GEMM, all |")
    print("|---:|---:|---:|---:|---:|")
    gemm = [(ff, meas, f) for kk, ff, _, meas, f, _ in pts if kk == "gemm"]
    for drift in (60, 64, 68, 72, DRIFT, 80, 84, 88, 96, 10**9):
        cells = []
        for sel in (lambda ff: ff is True, lambda ff: ff is False, lambda ff: ff is None, lambda ff: True):
            errs = [abs(f(ONSET, drift=drift) - meas) / meas * 100 for ff, meas, f in gemm if sel(ff)]
            cells.append(f"{sum(errs) / len(errs):.2f}% / {max(errs):.0f}% ({sum(x > 25 for x in errs)})")
        label = "no drift" if drift == 10**9 else f"{drift}"
        print(f"| {label} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
