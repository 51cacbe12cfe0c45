#!/usr/bin/env python3
"""A Proton trace's CTAs by wave: when a CTA's first mbarrier wait ends and its first WGMMA
issues, in SM cycles from the CTA's first record (docs/calibration.md §21, the first wave's cold
start).

    python3 tools/first_wave.py validation/h200/traces/attn_1x4x512.chrome_trace.gz
    python3 tools/first_wave.py validation/h200/traces/gemm_4096x4096x512.chrome_trace.gz \
        --wave-ctas 264

The trace is tools/device/triton_trace.py's (warp 0 of each CTA; `ts`/`dur` are cycles / 1000);
CTAs start in index order, so CTA c is in wave c // --wave-ctas (the SMs times the CTAs one SM
holds; default 132). Medians over each wave's CTAs. Standard library only.
"""
import argparse
import gzip
import json
import re
import statistics


def ctas_of(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        data = json.load(f)
    events = data["traceEvents"] if isinstance(data, dict) else data
    by_cta = {}
    for e in events:
        if e.get("ph") != "X" or not str(e.get("tid", "")).startswith("warp 0 "):
            continue
        cta = int(re.search(r"CTA(\d+)", str(e["pid"])).group(1))
        by_cta.setdefault(cta, []).append((e["ts"] * 1000.0, e["dur"] * 1000.0, e["name"]))
    return by_cta


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--wave-ctas", type=int, default=132, help="CTAs of a wave (default 132)")
    args = ap.parse_args()
    waves = {}
    for cta, spans in sorted(ctas_of(args.trace).items()):
        spans.sort()
        start = spans[0][0]
        wait = next(s for s in spans if s[2].startswith("wait_bar"))
        mma = next(s for s in spans if s[2].startswith("wgmma_") and "wait" not in s[2])
        waves.setdefault(cta // args.wave_ctas, []).append(
            (wait[0] + wait[1] - start, wait[1], mma[0] - start))
    print("| wave | CTAs | first wait ends | its duration | first WGMMA |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    for w, rows in sorted(waves.items()):
        med = [statistics.median(r[i] for r in rows) for i in range(3)]
        print(f"| {w} | {len(rows)} | {med[0]:.0f} | {med[1]:.0f} | {med[2]:.0f} |")


if __name__ == "__main__":
    main()
