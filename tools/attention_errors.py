#!/usr/bin/env python3
"""attention_triton's errors by tile and length, from a `tools/validate.py --csv` file.

    python3 tools/attention_errors.py CSV [--metric static_span] [--points] [--split]

Prints, for each tile (128x64 w8, 128x128 w8, 128x64 w4) and each group of lengths (the one-wave
512-token launches, 1024 tokens, 2048 and more), the points, their mean signed error, their MAPE
and what the model lacks a launch (measured - predicted, SM cycles at each point's clock; the
median of the group): docs/calibration.md §28's tables by one command. --points lists every
point. --split takes each non-causal D = 128 series (one CTA an SM on every tile) apart into a
KV step and a CTA's fixed cost F, measured and predicted, from its 2048- and 4096-token launches
(waves = ceil(CTAs / SMs) of F + (L / block_n) x step cycles), and the first wave's F from its
512-token launch with that step (calibration.md §28)."""
import argparse
import csv
import math
import re
import statistics
import sys

LABEL = re.compile(r"Z(\d+) HQ(\d+) HKV(\d+) L(\d+) D(\d+)( causal)? (\d+)x(\d+) w(\d+)")
GROUPS = ("512", "1024", ">= 2048")
SMS = 132  # the H200's SMs, as configs/h200.toml


def length_group(n):
    return GROUPS[0] if n <= 512 else GROUPS[1] if n <= 1024 else GROUPS[2]


def parse(rows, metric):
    """The attention_triton points of `metric`: dicts with the label's fields, the error and the
    cycles the model lacks."""
    points = []
    for r in rows:
        if r["suite"] != "attention_triton" or r["metric"] != metric:
            continue
        m = LABEL.fullmatch(r["point"])
        if not m:
            raise ValueError(f"unexpected label {r['point']!r}")
        z, hq, hkv, n, d = (int(m.group(i)) for i in range(1, 6))
        mhz = float(r["clock_mhz"])
        points.append({"point": r["point"], "Z": z, "HQ": hq, "HKV": hkv, "L": n, "D": d,
                       "causal": bool(m.group(6)), "block_m": int(m.group(7)),
                       "block_n": int(m.group(8)), "tile": f"{m.group(7)}x{m.group(8)} w{m.group(9)}",
                       "error": float(r["error_pct"]),
                       "measured": float(r["measured"]) * mhz, "predicted": float(r["predicted"]) * mhz})
    return points


def groups(points):
    """{(tile, length group): (points, mean signed error, MAPE, median cycles lacking)}."""
    by = {}
    for p in points:
        by.setdefault((p["tile"], length_group(p["L"])), []).append(p)
    return {k: (len(v), statistics.mean(p["error"] for p in v),
                statistics.mean(abs(p["error"]) for p in v),
                statistics.median(p["measured"] - p["predicted"] for p in v))
            for k, v in sorted(by.items(), key=lambda kv: (kv[0][0], GROUPS.index(kv[0][1])))}


def split(points):
    """{(series, "measured" | "predicted"): (step, F, first wave's F)} for each non-causal D = 128
    series with 512-, 2048- and 4096-token launches."""
    series = {}
    for p in points:
        if not p["causal"] and p["D"] == 128:
            series.setdefault((p["Z"], p["HQ"], p["HKV"], p["tile"]), {})[p["L"]] = p
    out = {}
    for key, by_len in sorted(series.items()):
        if not all(n in by_len for n in (512, 2048, 4096)):
            continue
        for who in ("measured", "predicted"):
            per_wave = {}
            for n in (512, 2048, 4096):
                p = by_len[n]
                ctas = p["Z"] * p["HQ"] * math.ceil(n / p["block_m"])
                per_wave[n] = (p[who] / math.ceil(ctas / SMS), n // p["block_n"])
            (a, na), (b, nb) = per_wave[2048], per_wave[4096]
            step = (b - a) / (nb - na)
            out[(key, who)] = (step, a - na * step, per_wave[512][0] - per_wave[512][1] * step)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("--metric", default="static_span", help="static_span (ncu's duration) or static_event")
    ap.add_argument("--points", action="store_true", help="list every point")
    ap.add_argument("--split", action="store_true", help="a KV step and a CTA's fixed cost, apart")
    args = ap.parse_args()
    with open(args.csv, newline="") as f:
        try:
            points = parse(csv.DictReader(f), args.metric)
        except ValueError as e:
            sys.exit(f"{args.csv}: {e}")
    if not points:
        sys.exit(f"{args.csv}: no attention_triton {args.metric} points")
    print("| tile | tokens | points | mean | MAPE | lacks (median, cycles) |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for (tile, group), (n, mean, mape, lacks) in groups(points).items():
        print(f"| {tile} | {group} | {n} | {mean:+.1f}% | {mape:.1f}% | {lacks:.0f} |")
    errs = [abs(p["error"]) for p in points]
    print(f"\n{args.metric}: {len(points)} points, MAPE {statistics.mean(errs):.1f}% (max {max(errs):.1f}%)")
    if args.split:
        print("\n| series | step: H200 | model | F a CTA: H200 | model | first wave's F: H200 | model |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
        parts = split(points)
        for key in dict.fromkeys(k for k, _ in parts):
            (ms, mf, m1), (ps, pf, p1) = parts[(key, "measured")], parts[(key, "predicted")]
            z, hq, hkv, tile = key
            print(f"| {z}x{hq}x{hkv} {tile} | {ms:.0f} | {ps:.0f} | {mf:.0f} | {pf:.0f} | {m1:.0f} | {p1:.0f} |")
    if args.points:
        for p in sorted(points, key=lambda p: (p["tile"], p["L"], p["point"])):
            print(f"{p['point']:45s} {p['error']:+6.1f}% {p['measured'] - p['predicted']:+8.0f} cycles")


if __name__ == "__main__":
    main()
