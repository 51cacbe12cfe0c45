#!/usr/bin/env python3
"""A Triton TMA GEMM's CTA, phase by phase: the H200's (a Proton trace of the instrumented kernel,
validation/h200/traces/) beside simfa's (a `simfa run --timeline` of the same kernel).

    python3 tools/gemm_phases.py validation/h200/traces/gemm_4096x4096x512.chrome_trace.gz \
        TIMELINE.json [--first-wave-ctas 264] [--device H100]

Phases of one CTA, SM cycles (medians over CTAs, the first wave and the later ones apart):
  to_loop   from the CTA's first TMA issue to the start of its first k-tile's WGMMAs (the
            prologue's copies and the wait for the first stage)
  period    from one k-tile's WGMMAs to the next k-tile's (the loop's turn)
  wait      a k-tile's mbarrier wait after the first one
  to_store  from the last k-tile's WGMMAs to the TMA store's issue (the last WGMMAs, the
            accumulator's conversion and its store to shared memory)
  cta       from the first TMA issue to the TMA store's issue

The Proton trace (tools/device/triton_trace.py; an H100's with --device H100) times warp 0 of
each CTA around each TTGIR op; its records cost cycles of their own (tens to 150 a record), so
its phases are upper bounds of the uninstrumented kernel's. The timeline's CTAs are the runs of one WarpGroup slot up to its
`exit`. Standard library only.
"""
import argparse
import collections
import gzip
import json
import statistics
import sys


def load_events(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        data = json.load(f)
    return data["traceEvents"] if isinstance(data, dict) else data


def proton_ctas(events):
    """Per CTA of the Proton trace: (first ts, [(kind, start, dur)]) of warp 0, in cycles."""
    by_cta = collections.defaultdict(list)
    for e in events:
        if e.get("ph") != "X" or not str(e.get("tid", "")).startswith("warp 0 "):
            continue
        name = e["name"]
        kind = ("wait" if name.startswith("wait_bar") else
                "wgmma" if name.startswith("wgmma_") and "wait" not in name else
                "store" if name.startswith("tma_store_") and "wait" not in name else
                "load" if name.startswith("tma_load") else "other")
        by_cta[e["pid"]].append((kind, e["ts"] * 1000.0, e["dur"] * 1000.0))
    ctas = []
    for pid, spans in by_cta.items():
        spans.sort(key=lambda s: s[1])
        cta = int(str(pid).rsplit("CTA", 1)[1])
        ctas.append((cta, spans))
    ctas.sort()
    return [spans for _, spans in ctas]


def timeline_ctas(events):
    """Per CTA of a simfa timeline: its [(kind, start, dur)] (one WarpGroup slot up to `exit`)."""
    by_slot = collections.defaultdict(list)
    for e in events:
        if e.get("ph") == "X":
            by_slot[(e["pid"], e["tid"])].append(e)
    ctas = []
    for spans in by_slot.values():
        spans.sort(key=lambda e: (e["ts"], e["name"] == "exit"))  # exit last in its cycle
        current, wgmmas_seen = [], False
        for e in spans:
            name = e["name"]
            if name == "wgmma":
                # a k-tile's WGMMAs are one span here, as the Proton trace's warp_group_dot
                if not (current and current[-1][0] == "wgmma" and wgmmas_seen):
                    current.append(("wgmma", float(e["ts"]), float(e["dur"])))
                wgmmas_seen = True
                continue
            if name == "wait:tensor_core":
                continue  # inside a k-tile's WGMMA issue
            wgmmas_seen = False
            kind = {"wait:mb": "wait", "tma_issue": "load"}.get(name, "other")
            current.append((kind, float(e["ts"]), float(e["dur"])))
            if name == "exit":
                # the CTA's last TMA issue is its store
                for i in range(len(current) - 1, -1, -1):
                    if current[i][0] == "load":
                        current[i] = ("store",) + current[i][1:]
                        break
                ctas.append(current)
                current = []
    ctas.sort(key=lambda spans: spans[0][1])
    return ctas


def phases(spans):
    loads = [s for s in spans if s[0] == "load"]
    wgmmas = [s[1] for s in spans if s[0] == "wgmma"]
    waits = [s[2] for s in spans if s[0] == "wait"]
    stores = [s[1] for s in spans if s[0] == "store"]
    if not loads or not wgmmas or not stores:
        return None
    start = loads[0][1]
    return {"to_loop": wgmmas[0] - start,
            "period": [b - a for a, b in zip(wgmmas, wgmmas[1:])],
            "wait": waits[1:],
            "to_store": stores[0] - wgmmas[-1],
            "cta": stores[0] - start}


def summary(ctas):
    rows = [p for p in map(phases, ctas) if p]
    if not rows:
        return None

    def med(key):
        values = [v for r in rows for v in (r[key] if isinstance(r[key], list) else [r[key]])]
        return statistics.median(values) if values else float("nan")
    return len(rows), {k: med(k) for k in ("to_loop", "period", "wait", "to_store", "cta")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("proton", help="the Proton chrome trace (.json or .json.gz)")
    ap.add_argument("timeline", help="simfa's --timeline JSON of the same kernel")
    ap.add_argument("--device", default="H200",
                    help="the GPU the trace was taken on, as the table names it (validation/h100/ "
                    "holds H100 traces)")
    ap.add_argument("--first-wave-ctas", type=int, default=264,
                    help="CTAs of the first wave (default 264: two on each of 132 SMs)")
    args = ap.parse_args()
    hw = proton_ctas(load_events(args.proton))
    sim = timeline_ctas(load_events(args.timeline))
    first_start = sim[0][0][1] if sim else 0
    sim_first = [c for c in sim if c[0][1] <= first_start + 64]
    sim_later = [c for c in sim if c[0][1] > first_start + 64]
    keys = ("to_loop", "period", "wait", "to_store", "cta")
    print("| CTAs | source | CTAs | " + " | ".join(keys) + " |")
    print("| --- | --- | ---: | " + " | ".join("---:" for _ in keys) + " |")
    for label, h, s in (("first wave", hw[:args.first_wave_ctas], sim_first),
                        ("later", hw[args.first_wave_ctas:], sim_later)):
        for source, ctas in ((f"{args.device} (Proton)", h), ("simfa", s)):
            result = summary(ctas)
            if result is None:
                print(f"| {label} | {source} | 0 |" + " |" * len(keys))
                continue
            n, m = result
            print(f"| {label} | {source} | {n} | " + " | ".join(f"{m[k]:.0f}" for k in keys) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
