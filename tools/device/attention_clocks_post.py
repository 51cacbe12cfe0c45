#!/usr/bin/env python3
"""Joins attention_suite.py's clock_points.csv (the launches, in order) with ncu's raw page of the
same run (ncu_clocks_raw.csv, one row per profiled kernel, in the same order) into one row per
attention point: the median over its launches of ncu's SM clock, L2 clock and kernel duration.

    python3 tools/device/attention_clocks_post.py clock_points.csv ncu_clocks_raw.csv OUT.csv
"""
import csv
import statistics
import sys

KEY = ("impl", "Z", "HQ", "HKV", "L", "D", "causal", "block_m", "block_n", "warps", "stages")
METRICS = {"gpu__time_duration.sum": ("ncu_duration_us", 1e-3),
           "sm__cycles_elapsed.avg.per_second": ("ncu_sm_mhz", 1e-6),
           "lts__cycles_elapsed.avg.per_second": ("ncu_lts_mhz", 1e-6)}


def number(text):
    return float(text.replace(",", ""))


def main(points_path, raw_path, out_path):
    points = list(csv.DictReader(open(points_path)))
    raw = list(csv.DictReader(open(raw_path)))
    kernels = [r for r in raw if r["ID"]]  # the row after the header holds the units
    if len(kernels) != len(points):
        sys.exit(f"{raw_path}: {len(kernels)} kernels profiled, {points_path} has {len(points)} launches")
    samples = {}
    for p, k in zip(points, kernels):
        if (p["impl"] == "cudnn") != ("cudnn" in k["Kernel Name"]):
            sys.exit(f"{raw_path}: kernel {k['ID']} ({k['Kernel Name']}) is not launch {p['order']} ({p['impl']})")
        per_point = samples.setdefault(tuple(p[c] for c in KEY), {m: [] for m in METRICS})
        for metric in METRICS:
            per_point[metric].append(number(k[metric]))
    with open(out_path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(list(KEY) + [name for name, _ in METRICS.values()] + ["launches"])
        for key, per_point in samples.items():
            values = [round(statistics.median(per_point[m]) * scale, 3)
                      for m, (_, scale) in METRICS.items()]
            w.writerow(list(key) + values + [len(per_point["gpu__time_duration.sum"])])


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
