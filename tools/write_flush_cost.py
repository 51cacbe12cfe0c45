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
import statistics
import sys
from pathlib import Path

from validate import ValidationError, gemm_config, read_csv

ROOT = Path(__file__).resolve().parent.parent


def spans(path):
    """{point label: predicted span} of a validate.py --csv run's gemm_suite static_span rows."""
    return {r.text("point"): r.num("predicted") for r in read_csv(path, ("suite", "metric", "point", "predicted"))
            if r.text("suite") == "gemm_suite" and r.text("metric") == "static_span"}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(ROOT / "validation" / "h200"))
    ap.add_argument("runs", nargs="*", help="DIRTY.csv CLEAN.csv (validate.py --csv of gemm_suite)")
    args = ap.parse_args(argv)
    if len(args.runs) not in (0, 2):
        ap.error("give both runs, DIRTY.csv and CLEAN.csv, or neither")
    data = Path(args.data)
    try:
        ncu = {}
        for r in read_csv(data / "gemm_ncu.csv", ("M", "N", "K", "gpu_time_us", "gpc_mhz")):
            ncu.setdefault(gemm_config(r).label, r)   # the first profile of a launch
        dirty, clean = (spans(p) for p in args.runs) if args.runs else ({}, {})
        by_category = {}
        for r in read_csv(data / "gemm_suite.csv", ("M", "N", "K", "category", "span_us", "inkernel_sm_mhz")):
            p = gemm_config(r).label
            n = ncu.get(p)
            if n is None or abs(n.num("gpc_mhz") / r.num("inkernel_sm_mhz") - 1) > 0.03:
                continue
            span = r.num("span_us")
            model = dirty[p] - clean[p] if p in dirty and p in clean else None
            by_category.setdefault(r.text("category"), []).append((span - n.num("gpu_time_us"), span, model))
    except ValidationError as e:
        sys.exit(f"error: {e}")
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
