#!/usr/bin/env python3
"""The SMs' busy cycles of cuDNN's attention kernel against the `fa3:` route's (docs/calibration.md
§23): Nsight Compute's sm__cycles_active (cycles an SM holds a warp, average, least and most over
the 132 SMs) of each validation/h200/opmix/ cuDNN point beside simfa's sm[i].active_cycles, and a
least-squares split of the average into a cost a KV step and a cost a tile, per head dim.

    python3 tools/sm_active.py build/release/bin/simfa configs/h200.toml
    python3 tools/sm_active.py BIN configs/h200.toml --keys exp_step_per_cycle=10.58

The kernel's span holds its schedule (which CTA ends last) and the launch; the average active
cycles hold only the work the SMs did, so a model that is right on the span and wrong on the
average is right for the wrong reason. Each point runs at ncu's SM clock of that launch
(sm__cycles_elapsed.avg.per_second). Standard library only.
"""
import argparse
import csv
import gzip
import json
import os
import re
import subprocess
import tempfile

POINTS = ("attn0", "attn1", "attn2", "s26_attn0", "s26_attn1", "s26_attn2")
SMS = 132
BLOCK = 128  # cuDNN's 128-row Q tile and 128-key KV tile


def ncu_point(opmix, name):
    with open(os.path.join(opmix, name + "_log.txt")) as f:
        spec = re.search(r"ncu point cudnn:([\d,]+)", f.read()).group(1)
    z, h, kv, n, d, causal = (int(x) for x in spec.split(","))
    with gzip.open(os.path.join(opmix, name + "_raw.csv.gz"), "rt") as f:
        rows = list(csv.reader(f))
    head, data = rows[0], rows[-1]
    value = lambda key: float(data[head.index(key)].replace(",", ""))
    mhz = value("sm__cycles_elapsed.avg.per_second") * 1000.0
    return {"shape": (z, h, kv, n, d, causal), "mhz": mhz,
            "span": value("gpu__time_duration.sum") * mhz,
            "active": [value("sm__cycles_active." + s) for s in ("avg", "min", "max")]}


def simulate(simfa, manifest, shape, mhz, keys):
    z, h, kv, n, d, causal = shape
    spec = (f"fa3:kernel=cudnn,batch={z},heads={h},kv_heads={kv},seqlen={n},head_dim={d},"
            f"causal={'true' if causal else 'false'}" + "".join("," + k for k in keys))
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "stats.json")
        subprocess.run([simfa, "run", manifest, "-w", spec, "--set", f"gpu.clock_mhz={mhz:.0f}",
                        "--stats", out, "-q"], check=True)
        with open(out) as f:
            stats = json.load(f)
    active = [v["active_cycles"] for k, v in stats.items() if k.startswith("sm[")]
    return {"span": stats["kernel"]["cycles"],
            "active": [sum(active) / len(active), min(active), max(active)]}


def work(shape):
    """KV steps and tiles an SM does on average (128 x 128 steps; causal: Q tile m attends m + 1)."""
    z, h, _, n, _, causal = shape
    m = -(-n // BLOCK)
    steps = z * h * (m * (m + 1) // 2 if causal else m * m)
    return steps / SMS, z * h * m / SMS


def fit(rows):
    """Least squares active = a x steps + b x tiles (no constant)."""
    sxx = sum(s * s for s, _, _ in rows)
    syy = sum(t * t for _, t, _ in rows)
    sxy = sum(s * t for s, t, _ in rows)
    sxa = sum(s * y for s, _, y in rows)
    sya = sum(t * y for _, t, y in rows)
    det = sxx * syy - sxy * sxy
    return (sxa * syy - sya * sxy) / det, (sya * sxx - sxa * sxy) / det


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("simfa")
    ap.add_argument("manifest")
    ap.add_argument("--opmix", default="validation/h200/opmix")
    ap.add_argument("--points", default=",".join(POINTS))
    ap.add_argument("--keys", default="", help="extra fa3: keys, comma-separated KEY=VALUE")
    args = ap.parse_args()
    keys = [k for k in args.keys.split(",") if k]
    print("| point | shape | MHz | H200 span | H200 active avg (min-max) | model span | "
          "model active avg (min-max) | avg error |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    by_dim = {}
    for name in args.points.split(","):
        h200 = ncu_point(args.opmix, name)
        model = simulate(args.simfa, args.manifest, h200["shape"], h200["mhz"], keys)
        z, h, kv, n, d, causal = h200["shape"]
        shape = f"{z}x{h}x{kv}x{n}x{d}{' causal' if causal else ''}"
        ha, ma = h200["active"], model["active"]
        print(f"| {name} | {shape} | {h200['mhz']:.0f} | {h200['span']:.0f} | "
              f"{ha[0]:.0f} ({ha[1]:.0f}-{ha[2]:.0f}) | {model['span']} | "
              f"{ma[0]:.0f} ({ma[1]}-{ma[2]}) | {100 * (ma[0] / ha[0] - 1):+.1f}% |")
        steps, tiles = work(h200["shape"])
        by_dim.setdefault(d, []).append((steps, tiles, ha[0], ma[0]))
    print()
    print("| head dim | points | H200: a KV step, a tile | model: a KV step, a tile |")
    print("| ---: | ---: | ---: | ---: |")
    for d, rows in sorted(by_dim.items()):
        if len(rows) < 2:
            continue
        ha, hb = fit([(s, t, y) for s, t, y, _ in rows])
        ma, mb = fit([(s, t, y) for s, t, _, y in rows])
        print(f"| {d} | {len(rows)} | {ha:.0f}, {hb:.0f} | {ma:.0f}, {mb:.0f} |")


if __name__ == "__main__":
    main()
