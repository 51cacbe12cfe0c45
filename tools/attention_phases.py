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

    python3 tools/attention_phases.py CSV --simfa BIN [--manifest M] [--mhz F] [--keys K=V,...]

prints the model's phases beside the silicon's: each point of CSV through the static TTGIR route
(the suite's TTGIR of its tile, validation/h200/attention/ttgir/) with --timeline on SMs 0-7, the
same phases read off WarpGroup 0's records (q: to Q's mbarrier wait's end, pro: to the next
wait, k0: to the first WGMMA, end: from the end of the longest wait after the last WGMMA (the last
P V's result) to EXIT, gap: the SM's previous
EXIT to the start, which holds the model's store drain).
"""
import json
import os
import subprocess
import tempfile
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


def model_timeline(args, key):
    """The trace events of the model's timeline of one point (SMs 0-7): the static TTGIR route on
    the suite's TTGIR of the point's tile at --mhz, with --keys."""
    bn, w, s, Z, HQ, HKV, L, D = key
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ttgir = os.path.join(here, "validation", "h200", "attention", "ttgir",
                         f"attn_fwd_128x{bn}_w{w}_s{s}_d{D}_c0_g{1 if HQ > HKV else 0}.ttgir")
    qr, kvr = Z * HQ * L, Z * HKV * L
    a = (f"desc_q.shape={qr}x{D};desc_k.shape={kvr}x{D};desc_v.shape={kvr}x{D};"
         f"desc_o.shape={qr}x{D};N_CTX={L};HQ={HQ}" + (f";GROUP={HQ // HKV}" if HQ > HKV else ""))
    spec = f"ttgir:file={ttgir},grid={L // 128}x{Z * HQ},args={a}" + (f",{args.keys}" if args.keys else "")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "t.json")
        subprocess.run([args.simfa, "run", args.manifest, "-q", "-w", spec, "--set",
                        f"gpu.clock_mhz={args.mhz}", "--timeline", out, "--timeline-sms",
                        "0,1,2,3,4,5,6,7"], check=True)
        with open(out) as f:
            data = json.load(f)
    return data["traceEvents"] if isinstance(data, dict) else data


def model_rows(args, key):
    """The model's phases of one point, as phases() gives the silicon's (no step columns)."""
    ev = model_timeline(args, key)
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e.get("ph") == "M" and "tid" in e}
    by = defaultdict(list)
    for e in ev:
        if e.get("ph") == "X" and names.get((e["pid"], e["tid"]), "").endswith("WG 0"):
            by[(e["pid"], e["tid"])].append(e)
    per_sm = defaultdict(list)
    for (sm, _), t in by.items():
        t.sort(key=lambda e: e["ts"])
        mbs = [e for e in t if e["name"] == "wait:mb"]
        last_dot = max(i for i, e in enumerate(t) if e["name"] == "wgmma")
        # the last P V's result: the longest wait after the last WGMMA's issue
        last_wait = max((e for e in t[last_dot:] if e["name"].startswith("wait:")),
                        key=lambda e: e["dur"])
        first_dot = next(e for e in t if e["name"] == "wgmma")
        q_end = mbs[0]["ts"] + mbs[0]["dur"]
        per_sm[sm].append(dict(start=t[0]["ts"], exit=t[-1]["ts"], q=q_end - t[0]["ts"],
                               pro=mbs[1]["ts"] - q_end, k0=first_dot["ts"] - mbs[1]["ts"],
                               end=t[-1]["ts"] - last_wait["ts"] - last_wait["dur"],
                               cta=t[-1]["ts"] - t[0]["ts"]))
    out = []
    for rows in per_sm.values():
        rows.sort(key=lambda r: r["start"])
        for wave, r in enumerate(rows):
            r.update(wave=wave, gap=r["start"] - rows[wave - 1]["exit"] if wave else None,
                     step0=None, step=None, last=None)
            out.append(r)
    return out


def med(xs):
    xs = [x for x in xs if x is not None]
    return round(statistics.median(xs)) if xs else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv")
    ap.add_argument("--max-waves", type=int, default=3, help="waves shown apart; the rest pooled")
    ap.add_argument("--simfa", help="a simfa binary: print the model's phases of each point too")
    ap.add_argument("--manifest", default="configs/h200.toml")
    ap.add_argument("--mhz", type=float, default=1780.0, help="the model's SM clock (default 1780)")
    ap.add_argument("--keys", default="", help="ttgir workload keys for the model, K=V,...")
    args = ap.parse_args()
    print("| tile | Z x HQ x HKV x L x D | CTAs | wave (CTAs) | " + " | ".join(PHASES) + " |")
    print("| --- | --- | ---: | --- | " + " | ".join("---:" for _ in PHASES) + " |")
    for key, rows in load(args.csv).items():
        bn, w, s, Z, HQ, HKV, L, D = key
        sources = [("", phases(rows, bn))]
        if args.simfa:
            sources.append((" (model)", model_rows(args, key)))
        for what, ps in sources:
            groups = defaultdict(list)
            for p in ps:
                groups[min(p["wave"], args.max_waves)].append(p)
            for wave in sorted(groups):
                g = groups[wave]
                label = str(wave) if wave < args.max_waves else f">={wave}"
                vals = [med([p[k] for p in g]) for k in PHASES]
                print(f"| 128x{bn} w{w} s{s}{what} | {Z}x{HQ}x{HKV}x{L}x{D} | {len(rows)} | {label} ({len(g)}) | "
                      + " | ".join("" if v is None else str(v) for v in vals) + " |")


if __name__ == "__main__":
    main()
