#!/usr/bin/env python3
"""tma_loaded's rings taken apart by stage, from a `tools/validate.py --csv` file.

    python3 tools/ring_steps.py CSV [--mode own] [--max-stages 4]

For each CTA count n of the mode's rings (n CTAs, s stages of one 16 KiB box each), a box's
latency L(s) = cycles a box x s, measured and predicted, and the step a stage adds to it: the
least-squares slope of L over s = 1 .. --max-stages (past 4 stages the H200's one-thread loop,
322 cycles a box, sets the ring, not the memory). `n x 16 KiB / step` is the rate at which the
step would serve every CTA's box; docs/calibration.md §40 reads the H200's as the DRAM's (4.5
TB/s) from 8 to 132 CTAs, where the model's step is a fraction of it."""
import argparse
import csv
import re
import sys

BOX_BYTES = 16384  # one 128-row x 64-column fp16 box (tma_loaded.csv)
LABEL = re.compile(r"(\w+), (\d+) CTAs?, (\d+) stages?")


def rings(rows, mode):
    """{n: {s: (measured, predicted)}} of the tma_loaded box points of `mode`."""
    out = {}
    for r in rows:
        if r["suite"] != "tma_loaded" or r["metric"] != "box":
            continue
        m = LABEL.fullmatch(r["point"])
        if not m:
            raise ValueError(f"unexpected tma_loaded label {r['point']!r}")
        if m.group(1) != mode:
            continue
        n, s = int(m.group(2)), int(m.group(3))
        out.setdefault(n, {})[s] = (float(r["measured"]), float(r["predicted"]))
    return out


def slope(points):
    """Least-squares slope of y over x; None with fewer than two distinct x."""
    if len({x for x, _ in points}) < 2:
        return None
    mx = sum(x for x, _ in points) / len(points)
    my = sum(y for _, y in points) / len(points)
    return (sum((x - mx) * (y - my) for x, y in points) /
            sum((x - mx) ** 2 for x, _ in points))


def table(by_n, max_stages):
    """Markdown rows: n, L(1) and the step, measured and predicted, and each step's rate."""
    lines = ["| CTAs | L(1) measured | predicted | step measured | predicted | "
             "n x box / step measured (B a cycle) | predicted |",
             "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for n in sorted(by_n):
        stages = {s: v for s, v in by_n[n].items() if s <= max_stages}
        lat = {s: (m * s, p * s) for s, (m, p) in stages.items()}
        steps = [slope([(s, v[i]) for s, v in lat.items()]) for i in (0, 1)]
        first = lat.get(1, (None, None))

        def cell(v, fmt="{:.0f}"):
            return "-" if v is None else fmt.format(v)

        def rate(step):
            return "-" if step is None or step <= 0 else f"{n * BOX_BYTES / step:.0f}"
        lines.append(f"| {n} | {cell(first[0])} | {cell(first[1])} | {cell(steps[0])} | "
                     f"{cell(steps[1])} | {rate(steps[0])} | {rate(steps[1])} |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", help="a tools/validate.py --csv file holding the tma_loaded suite")
    ap.add_argument("--mode", default="own", help="the rings' mode (own, own_warm, same)")
    ap.add_argument("--max-stages", type=int, default=4,
                    help="the deepest ring the step is fitted over (default 4)")
    args = ap.parse_args(argv)
    try:
        with open(args.csv, newline="") as f:
            rows = list(csv.DictReader(f))
        if rows and not {"suite", "metric", "point", "measured", "predicted"} <= rows[0].keys():
            raise ValueError("not a tools/validate.py --csv file (no suite, metric, point, "
                             "measured and predicted columns)")
        by_n = rings(rows, args.mode)
    except (OSError, ValueError) as e:
        print(f"ring_steps: {args.csv}: {e}", file=sys.stderr)
        return 2
    if not by_n:
        print(f"ring_steps: {args.csv}: no tma_loaded '{args.mode}' points", file=sys.stderr)
        return 2
    print(table(by_n, args.max_stages))
    return 0


if __name__ == "__main__":
    sys.exit(main())
