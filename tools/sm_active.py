#!/usr/bin/env python3
"""The SMs' busy cycles of cuDNN's attention kernel against the `fa3:` route's (docs/calibration.md
§23): Nsight Compute's sm__cycles_active (cycles an SM holds a warp, average, least and most over
the 132 SMs) of each validation/h200/opmix/ cuDNN point beside simfa's sm[i].active_cycles, and a
least-squares split of the average into a cost a KV step and a cost a tile, per head dim.

    python3 tools/sm_active.py build/release/bin/simfa configs/h200.toml
    python3 tools/sm_active.py BIN configs/h200.toml --keys exp_step_per_cycle=10.58
    python3 tools/sm_active.py BIN configs/h200.toml --tilecost validation/h200/tilecost

The kernel's span holds its schedule (which CTA ends last) and the launch; the average active
cycles hold only the work the SMs did, so a model that is right on the span and wrong on the
average is right for the wrong reason. Each point runs at ncu's SM clock of that launch
(sm__cycles_elapsed.avg.per_second). Standard library only.

--tilecost DIR reads instead run_tilecost.sh's points (tilecost_raw.csv, tilecost_points.csv:
seqlen_q and seqlen_k apart, so that a tile count and a step count vary one at a time; each
point's launches averaged) and adds a fit with a constant, a CTA's cost (docs/calibration.md §25).
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
    if len(shape) == 6:
        z, h, kv, n, d, causal = shape
        shape = (z, h, kv, n, n, d, causal)
    z, h, kv, nq, nk, d, causal = shape
    # torch's is_causal is top-left aligned, FA3's mask bottom-right: the same where nq == nk.
    if causal and nq != nk:
        raise SystemExit(f"causal point with seqlen_q {nq} != seqlen_k {nk}: masks differ")
    spec = (f"fa3:kernel=cudnn,batch={z},heads={h},kv_heads={kv},seqlen_q={nq},seqlen_k={nk},"
            f"head_dim={d},causal={'true' if causal else 'false'}" + "".join("," + k for k in keys))
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
    """KV steps and tiles an SM does on average (128 x 128 steps; causal: Q tile m attends m + 1).
    A shape is (Z, HQ, HKV, L, D, CAUSAL) or (Z, HQ, HKV, LQ, LK, D, CAUSAL)."""
    if len(shape) == 6:
        z, h, kv, n, d, causal = shape
        shape = (z, h, kv, n, n, d, causal)
    z, h, _, nq, nk, _, causal = shape
    m, n = -(-nq // BLOCK), -(-nk // BLOCK)
    if causal:  # top-left aligned as torch's is_causal: Q tile i attends min(i + 1, n) KV tiles
        per_head = sum(min(i + 1, n) for i in range(m))
    else:
        per_head = m * n
    return z * h * per_head / SMS, z * h * m / SMS


def tilecost_points(folder):
    """run_tilecost.sh's launches, grouped by point: shape (Z, HQ, HKV, LQ, LK, D, CAUSAL), the
    mean SM clock (MHz), span and active cycles (avg, min, max) over the point's launches."""
    with open(os.path.join(folder, "tilecost_points.csv")) as f:
        order = list(csv.DictReader(f))
    with open(os.path.join(folder, "tilecost_raw.csv")) as f:
        rows = [r for r in csv.reader(f)]
    head, data = rows[0], rows[2:]
    if len(data) != len(order):
        raise SystemExit(f"{folder}: {len(data)} profiled launches, {len(order)} in the points")
    points = {}
    for p, r in zip(order, data):
        value = lambda key: float(r[head.index(key)].replace(",", ""))
        mhz = value("sm__cycles_elapsed.avg.per_second") * 1000.0
        shape = tuple(int(p[k]) for k in ("Z", "HQ", "HKV", "L", "LK", "D", "causal"))
        points.setdefault(shape, []).append(
            (mhz, value("gpu__time_duration.sum") * mhz,
             [value("sm__cycles_active." + s) for s in ("avg", "min", "max")]))
    out = []
    for shape, runs in points.items():
        n = len(runs)
        out.append({"shape": shape, "mhz": sum(r[0] for r in runs) / n,
                    "span": sum(r[1] for r in runs) / n,
                    "active": [sum(r[2][i] for r in runs) / n for i in range(3)],
                    "runs": [r[2][0] for r in runs]})
    return out


def fit(rows):
    """Least squares active = a x steps + b x tiles (no constant)."""
    sxx = sum(s * s for s, _, _ in rows)
    syy = sum(t * t for _, t, _ in rows)
    sxy = sum(s * t for s, t, _ in rows)
    sxa = sum(s * y for s, _, y in rows)
    sya = sum(t * y for _, t, y in rows)
    det = sxx * syy - sxy * sxy
    return (sxa * syy - sya * sxy) / det, (sya * sxx - sxa * sxy) / det


def fit3(rows):
    """Least squares active = a x steps + b x tiles + c (c: an SM's cost once, its CTA's start)."""
    cols = [(s, t, 1.0) for s, t, _ in rows]
    n = [[sum(c[i] * c[j] for c in cols) for j in range(3)] for i in range(3)]
    v = [sum(c[i] * y for c, (_, _, y) in zip(cols, rows)) for i in range(3)]
    for i in range(3):  # Gauss-Jordan on the 3 x 3 normal equations
        piv = max(range(i, 3), key=lambda r: abs(n[r][i]))
        n[i], n[piv], v[i], v[piv] = n[piv], n[i], v[piv], v[i]
        for r in range(3):
            if r != i:
                f = n[r][i] / n[i][i]
                n[r] = [a - f * b for a, b in zip(n[r], n[i])]
                v[r] -= f * v[i]
    return tuple(v[i] / n[i][i] for i in range(3))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("simfa")
    ap.add_argument("manifest")
    ap.add_argument("--opmix", default="validation/h200/opmix")
    ap.add_argument("--points", default=",".join(POINTS))
    ap.add_argument("--keys", default="", help="extra fa3: keys, comma-separated KEY=VALUE")
    ap.add_argument("--tilecost", help="run_tilecost.sh's folder instead of the opmix points")
    args = ap.parse_args()
    keys = [k for k in args.keys.split(",") if k]
    if args.tilecost:
        points = tilecost_points(args.tilecost)
    else:
        points = [ncu_point(args.opmix, name) for name in args.points.split(",")]
    print("| shape | MHz | steps, tiles an SM | measured span | measured active avg (min-max) | model span | "
          "model active avg (min-max) | avg error |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    by_dim = {}
    for h200 in points:
        model = simulate(args.simfa, args.manifest, h200["shape"], h200["mhz"], keys)
        shape = h200["shape"] if len(h200["shape"]) == 7 else h200["shape"][:4] + h200["shape"][3:]
        z, h, kv, nq, nk, d, causal = shape
        name = f"{z}x{h}x{kv}x{nq}{'' if nq == nk else ':' + str(nk)}x{d}{' causal' if causal else ''}"
        ha, ma = h200["active"], model["active"]
        steps, tiles = work(shape)
        print(f"| {name} | {h200['mhz']:.0f} | {steps:.1f}, {tiles:.2f} | {h200['span']:.0f} | "
              f"{ha[0]:.0f} ({ha[1]:.0f}-{ha[2]:.0f}) | {model['span']} | "
              f"{ma[0]:.0f} ({ma[1]}-{ma[2]}) | {100 * (ma[0] / ha[0] - 1):+.1f}% |")
        by_dim.setdefault(d, []).append((steps, tiles, ha[0], ma[0]))
    print()
    print("| head dim | points | measured: a KV step, a tile | model: a KV step, a tile | "
          "measured: a step, a tile, an SM's constant | model: the same |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    for d, rows in sorted(by_dim.items()):
        if len(rows) < 2:
            continue
        ha, hb = fit([(s, t, y) for s, t, y, _ in rows])
        ma, mb = fit([(s, t, y) for s, t, _, y in rows])
        three = "| - | - |"
        if len(rows) >= 4:
            h3 = fit3([(s, t, y) for s, t, y, _ in rows])
            m3 = fit3([(s, t, y) for s, t, _, y in rows])
            three = "| " + ", ".join(f"{x:.0f}" for x in h3) + " | " + ", ".join(
                f"{x:.0f}" for x in m3) + " |"
        print(f"| {d} | {len(rows)} | {ha:.0f}, {hb:.0f} | {ma:.0f}, {mb:.0f} {three}")


if __name__ == "__main__":
    main()
