#!/usr/bin/env python3
"""Triton attention's KV steps, every step of every CTA: tools/device/attention_steps.py's
%clock64 stamps (validation/h100/attention_d64/attention_steps.csv.gz) as medians, SM cycles
(docs/calibration.md §33).

    python3 tools/attention_steps.py validation/h100/attention_d64/attention_steps.csv.gz

A CTA's steps 1 to n-2 (the first and the last left out): `step` from one loop top to the next,
`wgmma` from the top to QK^T's result (the stamp follows the step's `WARPGROUP.DEPBAR.LE gsb0,
0x0`, which waits for QK^T and the previous P V together), `rest` from there to the next top (the
softmax and P V's issue). `per_sm` is the most CTAs that ran at once on an SM; `in_turn` the share
of a CTA's step tops that fall 0.3 to 0.7 of the way through the step of another CTA running on
the same SM at the same time (two CTAs in turn: near 1; in phase: near 0). Standard library only.

    python3 tools/attention_steps.py CSV --simfa BIN [--manifest M] [--mhz F] [--keys K=V,...]

prints the model's steps beside each point's: the static TTGIR route on the suite's TTGIR of the
tile (validation/h200/attention/ttgir/) with --timeline on SMs 0-7; on WarpGroup 0's records a
step's top is the end of the TMA copies issued after the first WGMMA that follows a run of BUBBLEs
(P V's issue; the silicon's loop top follows P V and those copies), or that WGMMA's issue where
none follows; `wgmma` runs to the end of the next `wait:wgmma` (QK^T's result).
"""
import argparse
import csv
import gzip
import statistics
from collections import defaultdict

import attention_phases  # model_timeline

IN_TURN = (0.3, 0.7)


def load(path):
    """{(block_n, warps, stages, Z, HQ, HKV, L, D): {cta: dict(smid, start, end, tops, dots)}}"""
    points = defaultdict(dict)
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        for r in csv.DictReader(f):
            key = tuple(int(r[k]) for k in ("block_n", "warps", "stages", "Z", "HQ", "HKV", "L", "D"))
            c = points[key].setdefault(int(r["cta"]), dict(smid=int(r["smid"]), start=int(r["c_start"]),
                                                           end=int(r["c_end"]), steps={}))
            c["steps"][int(r["step"])] = (int(r["top"]), int(r["dot"]))
    for ctas in points.values():
        for c in ctas.values():
            order = sorted(c.pop("steps").items())
            c["tops"] = [t for _, (t, _) in order]
            c["dots"] = [d for _, (_, d) in order]
    return points


def split(tops, dots):
    """Each inner step's (step, wgmma, rest): steps 1 to n-2 of one CTA."""
    return [(tops[i + 1] - tops[i], dots[i] - tops[i], tops[i + 1] - dots[i])
            for i in range(1, len(tops) - 1)]


def in_turn_share(ctas):
    """The share of step tops that fall IN_TURN of the way through a co-resident CTA's step, and
    the most CTAs an SM ran at once."""
    by_sm = defaultdict(list)
    for c in ctas:
        by_sm[c["smid"]].append(c)
    hits = total = 0
    per_sm = 1
    for group in by_sm.values():
        for a in group:
            others = [b for b in group if b is not a and b["start"] < a["end"] and a["start"] < b["end"]]
            per_sm = max(per_sm, 1 + sum(1 for b in others if b["start"] <= a["start"]))
            for b in others:
                t = a["tops"]
                for top in b["tops"][2:-2]:
                    for i in range(len(t) - 1):
                        if t[i] <= top < t[i + 1]:
                            total += 1
                            hits += IN_TURN[0] <= (top - t[i]) / (t[i + 1] - t[i]) < IN_TURN[1]
                            break
    return (hits / total if total else None), per_sm


def model_steps(args, key):
    """The model's (step, wgmma, rest) of WarpGroup 0 of every CTA on SMs 0-7."""
    return timeline_steps(attention_phases.model_timeline(args, key))


def timeline_steps(events):
    """(step, wgmma, rest) of every inner step of every WarpGroup 0 in a simfa timeline."""
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e.get("ph") == "M" and "tid" in e}
    by = defaultdict(list)
    for e in events:
        if e.get("ph") == "X" and names.get((e["pid"], e["tid"]), "").endswith("WG 0"):
            by[(e["pid"], e["tid"])].append(e)
    out = []
    for t in by.values():
        t.sort(key=lambda e: e["ts"])
        tops, dots = [], []
        after_bubble = False
        for e in t:
            if e["name"] == "wgmma" and after_bubble:
                tops.append(e["ts"])
            elif e["name"] == "tma_issue" and len(dots) < len(tops):
                tops[-1] = e["ts"] + e["dur"]  # the copies that follow P V's issue end the step
            elif e["name"] == "wait:wgmma" and len(dots) < len(tops):
                dots.append(e["ts"] + e["dur"])
            if e["name"] in ("wgmma", "bubble"):
                after_bubble = e["name"] == "bubble"
        out += split(tops[:len(dots)], dots)
    return out


def med(xs):
    return round(statistics.median(xs)) if xs else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv")
    ap.add_argument("--simfa", help="a simfa binary: print the model's steps of each point too")
    ap.add_argument("--manifest", default="configs/h200.toml")
    ap.add_argument("--mhz", type=float, default=1780.0, help="the model's SM clock (default 1780)")
    ap.add_argument("--keys", default="", help="ttgir workload keys for the model, K=V,...")
    args = ap.parse_args()
    cols = ["per_sm", "in_turn", "step", "wgmma", "rest"]
    print("| tile | Z x HQ x HKV x L x D | source | " + " | ".join(cols) + " |")
    print("| --- | --- | --- | " + " | ".join("---:" for _ in cols) + " |")
    for key, ctas in load(args.csv).items():
        bn, w, s, Z, HQ, HKV, L, D = key
        label = f"| 128x{bn} w{w} s{s} | {Z}x{HQ}x{HKV}x{L}x{D} |"
        steps = [x for c in ctas.values() for x in split(c["tops"], c["dots"])]
        share, per_sm = in_turn_share(list(ctas.values()))
        print(f"{label} H100 | {per_sm} | {'' if share is None else f'{share:.2f}'} | "
              + " | ".join(str(med([x[i] for x in steps])) for i in range(3)) + " |")
        if args.simfa:
            m = model_steps(args, key)
            print(f"{label} model | | | " + " | ".join(str(med([x[i] for x in m])) for i in range(3)) + " |")


if __name__ == "__main__":
    main()
