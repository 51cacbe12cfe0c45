#!/usr/bin/env python3
"""What the write flush before each timed launch costs the H200's GEMMs, by category, from data
already committed: gemm_suite.csv's in-kernel span (after a 256 MiB write flush, as do_bench's)
against gemm_ncu.csv's gpu_time_us of the same launch (ncu's --cache-control all: an L2 flushed
and invalidated, nothing dirty). With two `tools/validate.py --csv` runs of gemm_suite, the
manifest's start (DIRTY) and `memory.l2.start_dirty = 0` (CLEAN), the model's difference beside it.

    python3 tools/write_flush_cost.py [--data validation/h200] [DIRTY.csv CLEAN.csv]

Launches whose ncu SM clock is more than 3% from the span's are left out. ncu's own time runs
~0.7 us over the span on the tiny launches, whose L2 holds nothing dirty to write back: read the
categories against each other, not as absolute costs (docs/calibration.md §43)."""
import argparse
import csv
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def key(row):
    return tuple(row[k] for k in ("M", "N", "K", "block_m", "block_n"))


def label(row):
    return (f"{row['M']}x{row['N']}x{row['K']} {row['block_m']}x{row['block_n']}x{row['block_k']} "
            f"s{row['stages']} w{row['warps']} g{row['group_m']}")


def spans(path):
    """{point label: predicted span} of a validate.py --csv run's gemm_suite static_span rows."""
    with open(path, newline="") as f:
        return {r["point"]: float(r["predicted"]) for r in csv.DictReader(f)
                if r["suite"] == "gemm_suite" and r["metric"] == "static_span"}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(ROOT / "validation" / "h200"))
    ap.add_argument("runs", nargs="*", help="DIRTY.csv CLEAN.csv (validate.py --csv of gemm_suite)")
    args = ap.parse_args(argv)
    if len(args.runs) not in (0, 2):
        ap.error("give both runs, DIRTY.csv and CLEAN.csv, or neither")
    data = Path(args.data)
    with open(data / "gemm_ncu.csv", newline="") as f:
        ncu = {}
        for r in csv.DictReader(f):
            ncu.setdefault(key(r), r)   # the first profile of a launch
    dirty, clean = (spans(p) for p in args.runs) if args.runs else ({}, {})
    by_category = {}
    with open(data / "gemm_suite.csv", newline="") as f:
        for r in csv.DictReader(f):
            n = ncu.get(key(r))
            if n is None or abs(float(n["gpc_mhz"]) / float(r["inkernel_sm_mhz"]) - 1) > 0.03:
                continue
            span = float(r["span_us"])
            added = span - float(n["gpu_time_us"])
            p = label(r)
            model = dirty[p] - clean[p] if p in dirty and p in clean else None
            by_category.setdefault(r["category"], []).append((added, span, model))
    if not by_category:
        sys.exit(f"{data}: no launch in both gemm_suite.csv and gemm_ncu.csv")
    print("| category | launches | H200: span - ncu time, median (us, % of span) | model: dirty - clean start |")
    print("| --- | ---: | ---: | ---: |")
    for category in sorted(by_category):
        rows = by_category[category]
        h200 = (f"{statistics.median(a for a, _, _ in rows):+.2f} "
                f"({100 * statistics.median(a / s for a, s, _ in rows):+.1f}%)")
        model = [(m, s) for _, s, m in rows if m is not None]
        model_text = (f"{statistics.median(m for m, _ in model):+.2f} "
                      f"({100 * statistics.median(m / s for m, s in model):+.1f}%)") if model else "-"
        print(f"| {category} | {len(rows)} | {h200} | {model_text} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
