#!/usr/bin/env python3
"""The share of read sectors the L2 request coalescer merges in the GEMM set, the H200's against
the model's: gemm_ncu.csv's 1 - lrc__lrc2xbar_sectors_op_read / lrc__xbar2gpc_sectors_op_read (the
sectors the LRC sends on to the L2 over those it returns to the SMs) beside the model's
memory.coalescer merged / requests, read from the stats a `tools/validate.py ... gemm_ncu --cache
DIR` run kept. Grouped by kind of launch: rows that start inside a line (K x 2 bytes not a multiple
of 128), one wave (at most 132 CTAs) and several (docs/calibration.md §45).

    python3 tools/validate.py build/release/bin/simfa configs/h200.toml gemm_ncu --max-cost 5 \\
        --cache /tmp/ncache
    python3 tools/lrc_merges.py /tmp/ncache [--data validation/h200] [--points]"""
import argparse
import json
import re
import statistics
import sys
from pathlib import Path

from validate import GemmConfig, ValidationError, read_csv

ROOT = Path(__file__).resolve().parent.parent
RETURNED = "lrc__xbar2gpc_sectors_op_read.sum"
FORWARDED = "lrc__lrc2xbar_sectors_op_read.sum"
SMS = 132
SHAPE = re.compile(r"gemm_bm(\d+)_bn(\d+)_bk\d+.*?M=(\d+);N=(\d+);K=(\d+)")


def model_merges(cache):
    """{(M, N, K, block_m, block_n): merged share} of every GEMM's stats in `cache`."""
    merges = {}
    for path in sorted(Path(cache).glob("*.json")):
        try:
            stats = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as e:
            raise ValidationError(f"{path}: not a stats file ({e})") from None
        m = SHAPE.search(json.dumps(stats.get("workload", "")))
        coalescer = stats.get("memory", {}).get("coalescer")
        if not m or not coalescer or not coalescer.get("requests"):
            continue
        bm, bn, mm, nn, kk = map(int, m.groups())
        merges[(mm, nn, kk, bm, bn)] = coalescer["merged"] / coalescer["requests"]
    return merges


def kind(m, n, k, bm, bn):
    if k * 2 % 128:
        return "rows inside a line"
    return "one wave" if GemmConfig(m, n, k, bm, bn).tiles <= SMS else "several waves"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cache", help="a tools/validate.py --cache directory of a gemm_ncu run")
    ap.add_argument("--data", default=str(ROOT / "validation" / "h200"))
    ap.add_argument("--points", action="store_true", help="every launch, not only the groups")
    args = ap.parse_args(argv)
    if not Path(args.cache).is_dir():
        raise ValidationError(f"{args.cache}: no such directory")
    model = model_merges(args.cache)
    rows = read_csv(Path(args.data) / "gemm_ncu.csv",
                    required=("M", "N", "K", "block_m", "block_n", RETURNED, FORWARDED))
    points, seen = [], set()
    for row in rows:
        key = tuple(row.int(c) for c in ("M", "N", "K", "block_m", "block_n"))
        if key in seen or key not in model or row.num(RETURNED) <= 0:
            continue
        seen.add(key)
        points.append((key, 1 - row.num(FORWARDED) / row.num(RETURNED), model[key]))
    if not points:
        raise ValidationError(f"{args.cache}: no stats of a gemm_ncu launch there")
    if args.points:
        print("| launch | kind | H200 merged | model merged |\n| --- | --- | ---: | ---: |")
        for (m, n, k, bm, bn), h, s in sorted(points, key=lambda p: p[1] - p[2]):
            print(f"| {m}x{n}x{k} {bm}x{bn} | {kind(m, n, k, bm, bn)} | {100 * h:.1f}% | {100 * s:.1f}% |")
        print()
    print("| kind | launches | H200 merged (mean) | model merged (mean) |\n| --- | ---: | ---: | ---: |")
    for name in ("one wave", "several waves", "rows inside a line"):
        group = [(h, s) for key, h, s in points if kind(*key) == name]
        if group:
            print(f"| {name} | {len(group)} | {100 * statistics.mean(h for h, _ in group):.1f}% | "
                  f"{100 * statistics.mean(s for _, s in group):.1f}% |")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except ValidationError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(1)
