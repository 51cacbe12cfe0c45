#!/usr/bin/env python3
"""Evaluates `simfa rank` against the measured config spaces of validation/h200/rank/.

  tools/rank_eval.py [--simfa build/release/bin/simfa] [--manifest configs/h200.toml]
                     [--rankers features,hybrid,simulate] [--shortlist 8] [--markdown]

For each of the 16 measured shapes it runs `simfa rank ... --ranker R --csv` and reads the
order. Per ranker, over the shapes:
  * regret = 1 - t_oracle / t_chosen, on measured times (t_chosen: the measured time of the
    ranker's first config; t_oracle: the shape's fastest measured config);
  * top-1: the ranker's first config is the measured best; top-5: the measured best is among
    its first five; best-of-5 regret: the regret if one measured the ranker's first five.
Beside them:
  * fixed: the one config of the best mean normalized throughput (t_oracle / t) over the OTHER
    shapes, applied to the held-out one (leave-one-shape-out);
  * random: the expected regret of a uniformly random valid config.
The features ranker has five fitted constants (ranking/gemm_ranking.h, RankConstants). The
`features LOSO` row refits them on a grid for each held-out shape on the other 15 and scores
the held-out one; it uses this script's copy of the time model (model() below), which is
checked against simfa's own features_us at the default constants before anything is scored.
Ground truth: pass 1 of rank_space.csv, and rank_space_queued.csv for 512^3 and 1024^3
(validation/h200/rank/README.md says why). Standard library only.
"""
import argparse
import collections
import csv
import itertools
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "validation", "h200", "rank")


def load_measured():
    meas = collections.defaultdict(dict)
    queued = [r for r in csv.DictReader(open(os.path.join(DATA, "rank_space_queued.csv")))
              if r["pass_no"] == "1"]
    qshapes = {(int(r["M"]), int(r["N"]), int(r["K"])) for r in queued}
    main = [r for r in csv.DictReader(open(os.path.join(DATA, "rank_space.csv")))
            if r["pass_no"] == "1" and (int(r["M"]), int(r["N"]), int(r["K"])) not in qshapes]
    for r in main + queued:
        sh = (int(r["M"]), int(r["N"]), int(r["K"]))
        cfg = (int(r["block_m"]), int(r["block_n"]), int(r["block_k"]), int(r["stages"]),
               int(r["warps"]))
        meas[sh][cfg] = float(r["dobench_us"])
    return dict(meas)


def run_rank(simfa, manifest, shape, ranker, shortlist):
    with tempfile.NamedTemporaryFile(suffix=".csv") as f:
        cmd = [simfa, "rank", manifest, "--workload", "gemm:m=%d,n=%d,k=%d" % shape, "--ranker",
               ranker, "--shortlist", str(shortlist), "--top", "0", "--csv", f.name]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        rows = list(csv.DictReader(open(f.name)))
    return rows


def cfg_of(row):
    return tuple(int(row[k]) for k in ("block_m", "block_n", "block_k", "stages", "warps"))


def metrics(order, d):
    best = min(d.values())
    oracle = min(d, key=d.get)
    chosen = order[0]
    top5 = order[:5]
    return dict(regret=1 - best / d[chosen], top1=chosen == oracle, top5=oracle in top5,
                best5=1 - best / min(d[c] for c in top5))


# --- this script's copy of ranking/gemm_ranking.cpp's time model (for the LOSO refit) ---
GPU = dict(sms=132, clock=1980e6, l2=60 * 2**20, parts=2, dram=4.8e12, mma=4096, smem=233472,
           regs=65536, ctas=32, wgs=16)
DEFAULTS = dict(bsm=64.0, l2bw=16e12, lat_l2=384.0, lat_dram=800.0, cmin=250.0, citer=40.0,
                w8eff=0.77, p=3.0, spill=4.0, dram_eff=0.9)
FITTED = dict(l2bw=[13.4e12, 16e12, 20e12], cmin=[250.0, 330.0, 400.0], citer=[0.0, 40.0, 80.0],
              w8eff=[0.77, 0.9], p=[2.0, 3.0, 4.0, 6.0])


def cdiv(a, b):
    return -(-a // b)


def model(shape, c, k, g=GPU):
    M, N, K = shape
    bm, bn, bk, s, w = c
    tm, tn = cdiv(M, bm), cdiv(N, bn)
    tiles, kt = tm * tn, cdiv(K, bk)
    smem = max(s * (bm + bn) * bk * 2 + 8 * s, bm * bn * 2)
    if smem > g["smem"] - 1024:
        return None
    acc = bm * bn // (32 * w)
    spill = acc + 26 > 255
    regs = min(255, acc + 26)
    res = max(1, min(g["smem"] // (smem + 1024), g["regs"] // (cdiv(regs, 8) * 8 * 32 * w),
                     g["wgs"] // (w // 4), g["ctas"]))
    sms = g["sms"]
    active = min(sms, tiles)
    bytes_k = (bm + bn) * bk * 2
    llc = (tn * M * K + tm * N * K) * 2 + M * N * 2
    ideal = (M * K + N * K) * 2 + M * N * 2
    conc = min(tiles, sms * res)
    rows = min(tm, cdiv(conc, tn))
    panels = rows * bm * K * 2 + min(tn, conc) * bn * K * 2
    dram = ideal + ((tm / rows - 1) * N * K * 2 if panels > g["l2"] / g["parts"] and tm > rows
                    else 0)
    miss = min(1.0, dram / llc)
    bsm = min(k["bsm"], k["l2bw"] / (active * g["clock"]))
    tma = bytes_k / bsm
    lat = k["lat_l2"] + miss * (k["lat_dram"] - k["lat_l2"]) + tma
    wgmma = 2 * bm * bn * bk / g["mma"] / (k["w8eff"] if w > 4 else 1.0)
    p = k["p"]

    def ktile(r):
        t = sum(x ** p for x in (r * wgmma, k["cmin"], lat / (s - 1), r * tma)) ** (1 / p)
        t += r * k["citer"]
        return t * k["spill"] if spill else t

    def rnd(r):
        return lat + kt * ktile(r) + bm * bn * 2 / k["bsm"]

    per_sm = cdiv(tiles, sms)
    full, rest = divmod(per_sm, res)
    cycles = full * rnd(res) + (rnd(rest) if rest else 0)
    comp = cycles / g["clock"] * 1e6
    dram_us = dram / (g["dram"] * k["dram_eff"]) * 1e6
    return (comp ** p + dram_us ** p) ** (1 / p)


def model_order(shape, d, k):
    pred = {c: model(shape, c, k) for c in d}
    return sorted((c for c in d if pred[c] is not None), key=lambda c: (pred[c], ALL.index(c)))


ALL = [(bm, bn, bk, s, w) for bm in (64, 128, 256) for bn in (64, 128, 256) for bk in (32, 64, 128)
       for s in (2, 3, 4, 5) for w in (4, 8)]


def summarize(name, ms):
    n = len(ms)
    return dict(name=name, regret=sum(m["regret"] for m in ms) / n,
                worst=max(m["regret"] for m in ms), top1=sum(m["top1"] for m in ms),
                top5=sum(m["top5"] for m in ms), best5=sum(m["best5"] for m in ms) / n, n=n)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--simfa", default=os.path.join(ROOT, "build", "release", "bin", "simfa"))
    ap.add_argument("--manifest", default=os.path.join(ROOT, "configs", "h200.toml"))
    ap.add_argument("--rankers", default="features")
    ap.add_argument("--shortlist", type=int, default=8)
    ap.add_argument("--per-shape", action="store_true")
    ap.add_argument("--sim-max-gflop", type=float, default=0,
                    help="simulate/hybrid only on shapes of at most this many GFLOP (0: all); "
                         "the features ranker is also scored on that subset beside them")
    args = ap.parse_args()
    meas = load_measured()
    shapes = sorted(meas, key=lambda s: s[0] * s[1] * s[2])
    rows = []
    per_shape = collections.defaultdict(dict)
    def simulated_subset():
        if args.sim_max_gflop <= 0:
            return shapes
        return [s for s in shapes if 2 * s[0] * s[1] * s[2] / 1e9 <= args.sim_max_gflop]

    rankers = args.rankers.split(",")
    if any(r != "features" for r in rankers) and args.sim_max_gflop > 0 and "features" in rankers:
        rankers.append("features@subset")
    for ranker in rankers:
        ms = []
        todo = shapes if ranker == "features" else simulated_subset()
        for sh in todo:
            if ranker == "features@subset":
                ms.append(per_shape[sh]["features"][0])
                continue
            out = run_rank(args.simfa, args.manifest, sh, ranker, args.shortlist)
            order = [cfg_of(r) for r in out]
            missing = set(meas[sh]) ^ set(order)
            if missing:
                sys.exit(f"{sh}: simfa's valid set differs from the measured one: {sorted(missing)}")
            if ranker == "features":  # the script's model must be simfa's
                for r in out:
                    mine = model(sh, cfg_of(r), DEFAULTS)
                    if abs(mine / float(r["features_us"]) - 1) > 1e-4:
                        sys.exit(f"model() differs from simfa at {sh} {cfg_of(r)}: {mine} vs "
                                 f"{r['features_us']}")
            m = metrics(order, meas[sh])
            per_shape[sh][ranker] = (m, order[0])
            ms.append(m)
        rows.append(summarize(ranker if ranker != "features@subset"
                              else "features, on the simulated shapes", ms))
        print(f"{ranker}: {len(ms)} shapes scored", file=sys.stderr, flush=True)
    # leave-one-shape-out refit of the fitted constants
    keys = list(FITTED)
    combos = [dict(DEFAULTS, **dict(zip(keys, v))) for v in itertools.product(*FITTED.values())]
    table = [[metrics(model_order(sh, meas[sh], k), meas[sh]) for sh in shapes] for k in combos]
    lo = []
    for i, sh in enumerate(shapes):
        j = min(range(len(combos)),
                key=lambda j: sum(table[j][x]["regret"] for x in range(len(shapes)) if x != i))
        lo.append(table[j][i])
        per_shape[sh]["features LOSO"] = (table[j][i], None)
    rows.append(summarize("features, constants refit leave-one-shape-out", lo))
    j_all = min(range(len(combos)), key=lambda j: sum(m["regret"] for m in table[j]))
    fit_all = {kk: combos[j_all][kk] for kk in keys}
    # baselines
    fixed = []
    for i, sh in enumerate(shapes):
        others = [meas[x] for x in shapes if x != sh]
        common = set.intersection(*(set(d) for d in others))
        c = max(sorted(common), key=lambda c: sum(min(d.values()) / d[c] for d in others))
        d = meas[sh]
        m = metrics([c] + [x for x in d if x != c], d)
        fixed.append(m)
        per_shape[sh]["fixed"] = (m, c)
    rows.append(summarize("fixed best config (leave-one-shape-out)", fixed))
    rnd = []
    for sh in shapes:
        d = meas[sh]
        best = min(d.values())
        oracle = min(d, key=d.get)
        rnd.append(dict(regret=sum(1 - best / t for t in d.values()) / len(d),
                        top1=False, top5=False,
                        best5=sum(1 - best / t for t in d.values()) / len(d)))
        rnd[-1]["top1"] = 1 / len(d)
        rnd[-1]["top5"] = 5 / len(d)
        del oracle
    r = summarize("random valid config (expected)", rnd)
    rows.append(r)
    print(f"{len(shapes)} shapes, {sum(len(d) for d in meas.values())} measured points; "
          f"constants fitted on all shapes: {fit_all}")
    print("| ranker | mean regret | worst | top-1 | top-5 | best-of-5 regret |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(f"| {r['name']} | {100 * r['regret']:.1f}% | {100 * r['worst']:.1f}% | "
              f"{r['top1']:.3g}/{r['n']} | {r['top5']:.3g}/{r['n']} | {100 * r['best5']:.1f}% |")
    if args.per_shape:
        names = [r for r in rankers if r != "features@subset"] + ["features LOSO", "fixed"]
        print("\n| shape | measured best | " + " | ".join(names) + " |")
        print("| --- | --- | " + " | ".join("---" for _ in names) + " |")
        for sh in shapes:
            d = meas[sh]
            o = min(d, key=d.get)
            cells = []
            for nm in names:
                if nm not in per_shape[sh]:
                    cells.append("-")
                    continue
                m, c = per_shape[sh][nm]
                cells.append(f"{100 * m['regret']:.1f}%" + (f" {fmt(c)}" if c else ""))
            print(f"| {sh[0]}x{sh[1]}x{sh[2]} | {fmt(o)} {d[o]:.1f} us | " + " | ".join(cells) + " |")


def fmt(c):
    return "%dx%dx%d s%d w%d" % c


if __name__ == "__main__":
    main()
