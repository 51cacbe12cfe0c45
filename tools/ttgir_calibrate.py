"""The GEMM calibration of the paper's section V-B3 for the TTGIR frontend (docs/ttgir.md).

  python3 tools/ttgir_calibrate.py [--simfa build/default/bin/simfa] [--config configs/h200.toml]
                                   [--measure cta_cycles|event] [--fit-max-k 4096]

For every row of validation/h200/gemm_ksweep_single_cta.csv (one 128x128 tile, K swept), it
simulates the committed TTGIR (tests/data/ttgir/gemm_tma.ttgir) by the static route at the row's
measured in-kernel clock, without bubbles, and fits the residual measured - simulated by
ordinary least squares on the number of BK = 64 iterations:

    residual = prologue_bubble + per_iteration_bubble * (K / 64)

The fit uses the rows with K <= --fit-max-k (the paper fits 512-4096 and holds out larger K);
it prints the intercept, the slope, R^2 of the fit, and each row's error without and with the
two constants. The measured cycles are the in-kernel cycles of the CTA (cta_cycles_med, the
`clock64` span of one CTA: the per-CTA time the bubbles are charged to) or, with
--measure event, the cudaEvent time times the clock (it includes the ~3.8 us launch overhead,
a per-kernel cost that per-CTA bubbles should not absorb).
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def simulate(simfa, config, k, clock_mhz, prologue=0, per_iteration=0):
    args = "M=128;N=128;K=%d;a_desc.shape=128x%d;b_desc.shape=128x%d;c_desc.shape=128x128" % (
        k, k, k)
    spec = ("ttgir:file=%s,grid=1,args=%s,prologue_bubble=%d,per_iteration_bubble=%d" %
            (os.path.join(ROOT, "tests/data/ttgir/gemm_tma.ttgir"), args, prologue, per_iteration))
    with tempfile.TemporaryDirectory() as tmp:
        stats = os.path.join(tmp, "stats.json")
        subprocess.run([simfa, "run", config, "--workload", spec, "--set",
                        "gpu.clock_mhz=%g" % clock_mhz, "--stats", stats],
                       check=True, stdout=subprocess.DEVNULL)
        with open(stats) as f:
            return json.load(f)["kernel"]["cycles"]


def ols(xs, ys):
    """(intercept, slope, R^2) of y = a + b x."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    b = sxy / sxx
    a = my - b * mx
    ss_res = sum((y - a - b * x) ** 2 for x, y in zip(xs, ys))
    ss_tot = sum((y - my) ** 2 for y in ys)
    return a, b, 1 - ss_res / ss_tot if ss_tot > 0 else 1.0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--simfa", default=os.path.join(ROOT, "build/default/bin/simfa"))
    p.add_argument("--config", default=os.path.join(ROOT, "configs/h200.toml"))
    p.add_argument("--csv", default=os.path.join(ROOT, "validation/h200/gemm_ksweep_single_cta.csv"))
    p.add_argument("--measure", choices=["cta_cycles", "event"], default="cta_cycles")
    p.add_argument("--fit-max-k", type=int, default=4096)
    a = p.parse_args()

    rows = []
    with open(a.csv) as f:
        for r in csv.DictReader(f):
            k, clock = int(r["K"]), float(r["sm_clock_mhz"])
            measured = (float(r["cta_cycles_med"]) if a.measure == "cta_cycles"
                        else float(r["time_us"]) * clock)
            rows.append(dict(k=k, clock=clock, measured=measured,
                             simulated=simulate(a.simfa, a.config, k, clock)))
    fit = [r for r in rows if r["k"] <= a.fit_max_k]
    if len(fit) < 2:
        sys.exit("need at least two rows with K <= %d" % a.fit_max_k)
    intercept, slope, r2 = ols([r["k"] / 64 for r in fit], [r["measured"] - r["simulated"] for r in fit])
    prologue, per_iteration = max(0, round(intercept)), max(0, round(slope))
    print("measure %s, config %s, fit on K <= %d (%d rows)" % (a.measure, a.config, a.fit_max_k,
                                                              len(fit)))
    print("intercept %.1f cycles, slope %.2f cycles per BK=64 iteration, R^2 %.5f" % (
        intercept, slope, r2))
    print("workload keys: prologue_bubble=%d,per_iteration_bubble=%d" % (prologue, per_iteration))
    print("%6s %8s %10s %10s %8s %10s %8s %s" % ("K", "clock", "measured", "simulated", "err%",
                                                 "calibrated", "err%", ""))
    for r in rows:
        cal = simulate(a.simfa, a.config, r["k"], r["clock"], prologue, per_iteration)
        print("%6d %8.0f %10.0f %10d %+8.2f %10d %+8.2f %s" % (
            r["k"], r["clock"], r["measured"], r["simulated"],
            100 * (r["simulated"] - r["measured"]) / r["measured"], cal,
            100 * (cal - r["measured"]) / r["measured"], "" if r["k"] <= a.fit_max_k else "held out"))


if __name__ == "__main__":
    main()
