#!/usr/bin/env python3
"""Two WarpGroups' offset in the 8-warp softmax microbenchmark: tools/device/softmax_phase.py
--delays's stamps (validation/h100/softmax_phase/softmax_free_delay.csv.gz) by launch, and the
resting points they settle at (docs/calibration.md §37).

    python3 tools/softmax_offsets.py validation/h100/softmax_phase/softmax_free_delay.csv.gz

For each launch (tile, delay, repetition), over its settled steps (32 to 200 by default): `step`,
the median cycles from one of warp 0's step tops to the next; `lag`, the median of warp 4's top
(WarpGroup 1) after warp 0's; `phase`, lag / step modulo 1 (0: in phase, 0.5: half a step apart);
`drift`, the median lag of the last quarter of those steps minus that of the first quarter (0:
the offset stays). Then, per tile, the launches grouped by their phase rounded to 0.05 (1.00 is
0): how many, and the range of their steps. Standard library only.
"""
import argparse
import csv
import gzip
import statistics
import sys
from collections import defaultdict


def load(path):
    """{(block_m, block_n, delay, rep): {step: {warp: stamp}}}"""
    launches = defaultdict(lambda: defaultdict(dict))
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        for r in csv.DictReader(f):
            key = tuple(int(r[k]) for k in ("block_m", "block_n", "delay", "rep"))
            launches[key][int(r["step"])][int(r["warp"])] = int(r["stamp"])
    return launches


def settle(steps, first, last):
    """One launch's step, lag, phase and drift over its steps first..last (both included)."""
    span = [i for i in range(first, last + 1) if i in steps and i + 1 in steps]
    if not span:
        raise ValueError(f"no settled steps between {first} and {last}")
    step = statistics.median(steps[i + 1][0] - steps[i][0] for i in span)
    lags = [steps[i][4] - steps[i][0] for i in span]
    quarter = max(len(lags) // 4, 1)
    return dict(step=step, lag=statistics.median(lags), phase=(statistics.median(lags) / step) % 1,
                drift=statistics.median(lags[-quarter:]) - statistics.median(lags[:quarter]))


def settle_all(launches, first=32, last=200):
    """{launch: settle(...)} in launch order; a launch without settled steps is named."""
    settled = {}
    for key, steps in sorted(launches.items()):
        try:
            settled[key] = settle(steps, first, last)
        except ValueError as e:
            raise ValueError(f"launch (block_m, block_n, delay, rep) = {key}: {e}") from None
    return settled


def resting_points(settled):
    """{(block_m, block_n): {phase rounded to 0.05: [steps of the launches that rest there]}}"""
    points = defaultdict(lambda: defaultdict(list))
    for (bm, bn, _, _), s in settled.items():
        points[bm, bn][round(s["phase"] * 20) / 20 % 1].append(s["step"])
    return points


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("--first", type=int, default=32, help="first settled step (default 32)")
    ap.add_argument("--last", type=int, default=200, help="last settled step (default 200)")
    a = ap.parse_args()
    try:
        settled = settle_all(load(a.csv), a.first, a.last)
    except KeyError as e:
        sys.exit(f"{a.csv}: no column {e} (tools/device/softmax_phase.py --delays writes them)")
    except (OSError, ValueError) as e:
        sys.exit(f"{a.csv}: {e}")
    print("| tile | delay | rep | step | lag | phase | drift |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for (bm, bn, delay, rep), s in settled.items():
        print(f"| {bm}x{bn} | {delay} | {rep} | {s['step']:.0f} | {s['lag']:.0f} | "
              f"{s['phase']:.2f} | {s['drift']:.0f} |")
    print()
    print("| tile | phase | launches | step |")
    print("| --- | ---: | ---: | --- |")
    for (bm, bn), phases in sorted(resting_points(settled).items()):
        for phase, steps in sorted(phases.items()):
            print(f"| {bm}x{bn} | {phase:.2f} | {len(steps)} | {min(steps):.0f}-{max(steps):.0f} |")


if __name__ == "__main__":
    main()
