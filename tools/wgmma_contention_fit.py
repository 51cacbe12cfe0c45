#!/usr/bin/env python3
"""The compute constants of configs/h200.toml from the WGMMA contention microbenchmarks.

Usage: tools/wgmma_contention_fit.py [validation/h200/attention]

Reads wgmma_contention.csv and wgmma_contention_fadd_fmul_cudnn.csv (tools/device/
wgmma_contention.py: WarpGroup 0 issues m64n128k16 WGMMAs, 1 or 2 other WarpGroups loop over one
register op) and prints (docs/calibration.md §18):

- each op's rate while the WGMMAs run, as a fraction of its rate alone: its elements less what it
  did alone after the WGMMAs ended, over the WGMMAs' span (rows whose op outlasts the WGMMAs);
  the means of the ex2 and fmax rows are [sm] sfu_rate_beside_wgmma and alu_rate_beside_wgmma;
- the least-squares line of [tensor_core] fp32_share and fp32_onset: the WGMMA's rate (law
  cycles / measured cycles a WGMMA) against the model's FP32 load, a BUBBLE's FP32 cycles over its
  length (FP32 alone: 1; the exp steps, MUFU-bound, at the MUFU's rate beside the WGMMAs).
"""
import csv
import math
import os
import statistics
import sys

FP32_LANES, SFU_LANES = 128, 16
FP32_PER_ELEMENT = {"ffma": 1, "fadd": 1, "fmul": 1, "mix": 2, "cudnn": 3}  # and one EX2: mix, cudnn


def main():
    data = sys.argv[1] if len(sys.argv) > 1 else "validation/h200/attention"
    rows = []
    for name in ("wgmma_contention.csv", "wgmma_contention_fadd_fmul_cudnn.csv"):
        with open(os.path.join(data, name)) as f:
            rows += list(csv.DictReader(f))
    alone = {(r["mma"], r["op"], r["alu_wgs"]): r for r in rows if r["mode"] == "alu"}
    wgmma_alone = {r["mma"]: float(r["cycles_per_wgmma"]) for r in rows if r["mode"] == "mma"}
    both = [r for r in rows if r["mode"] == "both"]

    ratios = {}
    for r in both:
        a = alone[(r["mma"], r["op"], r["alu_wgs"])]
        rate0 = float(a["alu_elements_per_cycle"])
        elements = rate0 * float(a["alu_cycles"])
        t_mma, t_alu = float(r["mma_cycles"]), float(r["alu_cycles"])
        if t_alu <= t_mma:
            continue  # the op ended first: the WGMMAs gave way (FP32), not the op
        ratio = (elements - rate0 * (t_alu - t_mma)) / t_mma / rate0
        ratios.setdefault(r["op"], []).append(ratio)
        print(f"{r['mma']} {r['op']:5} {r['alu_wgs']} WarpGroup(s): {ratio:.3f} of its rate")
    sfu = statistics.mean(ratios["ex2"])
    alu = statistics.mean(ratios["fmax"])
    print(f"sfu_rate_beside_wgmma = {sfu:.3f}, alu_rate_beside_wgmma = {alu:.3f}")

    def load(op, sfu_rate):
        per = FP32_PER_ELEMENT[op]
        if op in ("mix", "cudnn"):  # MUFU-bound: the BUBBLE lasts its SFU work
            return per / FP32_LANES * SFU_LANES * sfu_rate
        return 1.0

    points = [(load(r["op"], sfu), wgmma_alone[r["mma"]] / float(r["cycles_per_wgmma"]))
              for r in both if r["op"] in FP32_PER_ELEMENT]
    n = len(points)
    sx = sum(x for x, _ in points)
    sy = sum(y for _, y in points)
    sxx = sum(x * x for x, _ in points)
    sxy = sum(x * y for x, y in points)
    slope = (n * sxy - sx * sy) / (n * sxx - sx * sx)
    intercept = (sy - slope * sx) / n
    share = -1 / slope
    onset = (intercept - 1) * share
    rms = math.sqrt(sum((min(1, 1 - (x - onset) / share) - y) ** 2 for x, y in points) / n)
    print(f"fp32_share = {share:.3f}, fp32_onset = {onset:.3f} ({n} rows, rms {rms:.3f})")


if __name__ == "__main__":
    main()
