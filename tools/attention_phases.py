#!/usr/bin/env python3
"""The Triton attention kernel's phases per CTA, by wave: tools/device/attention_phases.py's
%clock64 stamps (validation/h100/attention_phases/attention_phases.csv.gz) as medians, SM cycles
(docs/calibration.md §30).

    python3 tools/attention_phases.py validation/h100/attention_phases/attention_phases.csv.gz

Phases of a CTA: `q` its start to Q in shared memory (Q's TMA load and wait), `pro` Q's arrival to
the loop's top (the mbarrier inits and the prologue's K/V copies), `k0` the loop's top to the
first QK^T's issue (K0's wait), `step0` the first step, `step` a later one ((last top - second
top) / (steps - 2)), `last` the last step (loop's end - last top), `end` the epilogue (the last
P V's wait, the division, O's store and its wait), `cta` start to end, and `gap` the time from the
previous CTA's end on the same SM to this CTA's start (later waves only). The wave of a CTA is
its rank by start among the CTAs of its SM. Standard library only.
"""
import argparse
import csv
import gzip
import statistics
from collections import defaultdict

PHASES = ["q", "pro", "k0", "step0", "step", "last", "end", "cta", "gap"]


def load(path):
    points = defaultdict(list)
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        for r in csv.DictReader(f):
            key = (int(r["block_n"]), int(r["warps"]), int(r["stages"]), int(r["Z"]), int(r["HQ"]),
                   int(r["HKV"]), int(r["L"]), int(r["D"]))
            points[key].append({k: int(v) for k, v in r.items()})
    return points


def phases(rows, block_n):
    by_sm = defaultdict(list)
    for r in rows:
        by_sm[r["smid"]].append(r)
    out = []
    for sm_rows in by_sm.values():
        sm_rows.sort(key=lambda r: r["c_start"])
        prev = None
        for wave, r in enumerate(sm_rows):
            steps = r["L"] // block_n
            p = dict(wave=wave, q=r["c_q"] - r["c_start"], pro=r["c_loop0"] - r["c_q"],
                     k0=r["c_dot0"] - r["c_loop0"], step0=r["c_loop1"] - r["c_loop0"],
                     step=(r["c_looplast"] - r["c_loop1"]) / (steps - 2) if steps > 2 else None,
                     last=r["c_loopend"] - r["c_looplast"], end=r["c_end"] - r["c_loopend"],
                     cta=r["c_end"] - r["c_start"],
                     gap=r["c_start"] - prev["c_end"] if prev else None)
            out.append(p)
            prev = r
    return out


def med(xs):
    xs = [x for x in xs if x is not None]
    return round(statistics.median(xs)) if xs else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv")
    ap.add_argument("--max-waves", type=int, default=3, help="waves shown apart; the rest pooled")
    args = ap.parse_args()
    print("| tile | Z x HQ x HKV x L x D | CTAs | wave (CTAs) | " + " | ".join(PHASES) + " |")
    print("| --- | --- | ---: | --- | " + " | ".join("---:" for _ in PHASES) + " |")
    for key, rows in load(args.csv).items():
        bn, w, s, Z, HQ, HKV, L, D = key
        ps = phases(rows, bn)
        groups = defaultdict(list)
        for p in ps:
            groups[min(p["wave"], args.max_waves)].append(p)
        for wave in sorted(groups):
            g = groups[wave]
            label = str(wave) if wave < args.max_waves else f">={wave}"
            vals = [med([p[k] for p in g]) for k in PHASES]
            print(f"| 128x{bn} w{w} s{s} | {Z}x{HQ}x{HKV}x{L}x{D} | {len(rows)} | {label} ({len(g)}) | "
                  + " | ".join("" if v is None else str(v) for v in vals) + " |")


if __name__ == "__main__":
    main()
