#!/usr/bin/env python3
"""Two runs of tools/validate.py point by point: the --csv of a run before a change against the
--csv of the run after it (the same suites, on two builds or two manifests). The before/after
tables a timing-model change's note needs (docs/validation.md, "Before and after a change").

    python3 tools/validate.py build/release/bin/simfa configs/h200.toml gemm_suite --csv before.csv
    (change the model, rebuild)
    python3 tools/validate.py build/release/bin/simfa configs/h200.toml gemm_suite --csv after.csv
    python3 tools/validation_diff.py before.csv after.csv --group '\\d+x\\d+x64'

Prints, for each suite and metric, the MAPE and largest |error| of each run over the points both
runs have (and how many only one has); the points whose error moved most; and with --group REGEX,
the points grouped by the first match of REGEX in their label (a GEMM's tile above; points with
no match are group "-"), each group's count, mean signed error and MAPE before and after. A point
is its suite, metric, label and source line, so two runs of different data files never match.
Standard library only.
"""
import argparse
import csv
import re
import sys
from collections import defaultdict

KEY = ("suite", "metric", "point", "source")


def load(path):
    """{(suite, metric, point, source): signed error in %} of one validate.py --csv file."""
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        missing = [k for k in KEY + ("error_pct",) if k not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path}: not a validate.py --csv file (no column {', '.join(missing)})")
        errors = {}
        for line, row in enumerate(reader, start=2):
            try:
                errors[tuple(row[k] for k in KEY)] = float(row["error_pct"])
            except ValueError:
                raise ValueError(f"{path}:{line}: error_pct '{row['error_pct']}' is not a number") from None
    return errors


def mape(values):
    return sum(abs(v) for v in values) / len(values)


def by_metric(before, after):
    """[(suite, metric, points in both, only before, only after, MAPE and max before, after)]"""
    metrics = sorted({k[:2] for k in before} | {k[:2] for k in after})
    rows = []
    for m in metrics:
        b = {k: v for k, v in before.items() if k[:2] == m}
        a = {k: v for k, v in after.items() if k[:2] == m}
        both = sorted(b.keys() & a.keys())
        rows.append({
            "suite": m[0], "metric": m[1], "points": len(both),
            "only_before": len(b.keys() - a.keys()), "only_after": len(a.keys() - b.keys()),
            "mape_before": mape([b[k] for k in both]) if both else None,
            "mape_after": mape([a[k] for k in both]) if both else None,
            "max_before": max((abs(b[k]) for k in both), default=None),
            "max_after": max((abs(a[k]) for k in both), default=None),
        })
    return rows


def moved(before, after, count):
    """The `count` points in both runs whose |error| changed most: [(key, before, after)]."""
    both = before.keys() & after.keys()
    order = sorted(both, key=lambda k: (-abs(abs(after[k]) - abs(before[k])), k))
    return [(k, before[k], after[k]) for k in order[:count]]


def groups(before, after, pattern):
    """{(suite, metric, group): (n, mean signed before, after, MAPE before, after)} over the points
    in both runs, grouped by the first match of `pattern` in the label ("-": none)."""
    regex = re.compile(pattern)
    members = defaultdict(list)
    for k in before.keys() & after.keys():
        match = regex.search(k[2])
        members[(k[0], k[1], match.group(0) if match else "-")].append(k)
    return {g: (len(ks), sum(before[k] for k in ks) / len(ks), sum(after[k] for k in ks) / len(ks),
                mape([before[k] for k in ks]), mape([after[k] for k in ks]))
            for g, ks in sorted(members.items())}


def pct(value):
    return "-" if value is None else f"{value:.1f}%"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("before", help="validate.py --csv of the run before the change")
    parser.add_argument("after", help="validate.py --csv of the run after it")
    parser.add_argument("--group", metavar="REGEX", help="also group the points by REGEX's first match in the label")
    parser.add_argument("--top", type=int, default=10, help="how many most-moved points to list (default 10)")
    args = parser.parse_args(argv)
    try:
        before, after = load(args.before), load(args.after)
    except (OSError, ValueError) as e:
        print(f"validation_diff: {e}", file=sys.stderr)
        return 2

    print("| suite | metric | points | MAPE before | MAPE after | max before | max after | only before / after |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in by_metric(before, after):
        print(f"| {r['suite']} | {r['metric']} | {r['points']} | {pct(r['mape_before'])} | {pct(r['mape_after'])} "
              f"| {pct(r['max_before'])} | {pct(r['max_after'])} | {r['only_before']} / {r['only_after']} |")
    if args.top > 0:
        print(f"\nThe {args.top} points whose |error| moved most:\n")
        print("| suite.metric | point | source | before | after |")
        print("| --- | --- | --- | ---: | ---: |")
        for k, b, a in moved(before, after, args.top):
            print(f"| {k[0]}.{k[1]} | {k[2]} | {k[3]} | {b:+.1f}% | {a:+.1f}% |")
    if args.group:
        print(f"\nBy the label's match of {args.group}:\n")
        print("| suite.metric | group | points | mean before | mean after | MAPE before | MAPE after |")
        print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
        for (suite, metric, g), (n, mb, ma, ab, aa) in groups(before, after, args.group).items():
            print(f"| {suite}.{metric} | {g} | {n} | {mb:+.1f}% | {ma:+.1f}% | {ab:.1f}% | {aa:.1f}% |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
