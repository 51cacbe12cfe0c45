#!/usr/bin/env python3
"""What the silicon's counters say about the GEMM drift of the analytical model (issue 18).

  tools/analytical_drift_table.py [NCU_CSV ...]

For every GEMM of the ncu CSVs (default: validation/h200/gemm_ncu.csv, gemm_ncu_cliff.csv and the
repeated runs repeat/issue17_run{1,3}_gemm_ncu.csv) with two or more CTAs per SM, two or more
waves and an out-of-step bound at least 1.3x the lockstep reads (where drift can show), one row:

- the lockstep reads R_lock and the out-of-step bound R_stag of analytical/gemm_model.cpp (as
  re-computed by tools/analytical_onset_scan.py, which matches `simfa analyze`);
- f, the share of the way from R_lock to R_stag that ncu's dram__bytes_read.sum took, against the
  model's psi (out_of_step_share), and the model's error;
- h, the constant escape rate a wave that gives f under the model's CTA weighting (a CTA of wave w
  has left step with probability 1 - exp(-w h); wave 0 in step, the last wave holding the rest):
  what the model's rate would have to be for this point alone;
- the LRC's merged share of read requests, 1 - lrc2xbar / xbar2gpc sectors: requests for the same
  sectors that arrive together, a counter of the same run independent of the DRAM's;
- ncu's gpu_time_us over gemm_suite.csv's event_us (the timing suite's 20-25 launches of the same
  kernel): how much slower the profiled launch ran than the kernel usually does.

Any CSV with gemm_ncu.csv's columns can be given (a re-measurement, say): M, N, K, block_m,
block_n, block_k, stages and dram__bytes_read.sum are needed, the LRC sectors and gpu_time_us
printed when present. Rows are printed in file order.
"""
import csv
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import analytical_onset_scan as scan  # noqa: E402

H200 = scan.H200
DEFAULT = [H200 / "gemm_ncu.csv", H200 / "gemm_ncu_cliff.csv",
           H200 / "repeat" / "issue17_run1_gemm_ncu.csv", H200 / "repeat" / "issue17_run3_gemm_ncu.csv"]


def weighted_share(h, waves, per_wave, ctas):
    """The CTA-weighted share escaped at a constant rate h a wave (gemm_model.cpp's weighting)."""
    total = 0.0
    for w in range(1, waves):
        n = per_wave if w < waves - 1 else ctas - (waves - 1) * per_wave
        total += n * -math.expm1(-w * h)
    return total / ctas


def constant_rate(f, waves, per_wave, ctas):
    """The h with weighted_share(h) = f, by bisection; inf when even h = 50 falls short."""
    if f <= 0:
        return 0.0
    lo, hi = 0.0, 50.0
    if weighted_share(hi, waves, per_wave, ctas) < f:
        return math.inf
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if weighted_share(mid, waves, per_wave, ctas) < f else (lo, mid)
    return (lo + hi) / 2


def main(argv):
    paths = [Path(a) for a in argv] or DEFAULT
    suite = {}
    for r in csv.DictReader(open(H200 / "gemm_suite.csv")):
        suite[tuple(r[c] for c in ("M", "N", "K", "block_m", "block_n", "block_k", "stages"))] = r
    print("| source | M x N x K | tile | W | k_t | ncu MB | lockstep MB | bound MB | f (ncu) | psi (model) "
          "| model error | h for f | LRC merged | ncu / suite time |")
    print("|:---|:---|:---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for path in paths:
        for r in csv.DictReader(open(path)):
            key = tuple(r[c] for c in ("M", "N", "K", "block_m", "block_n", "block_k", "stages"))
            m, n, k, bm, bn, bk, st = (int(x) for x in key)
            p = scan.gemm_reads(scan.ONSET, m, n, k, bm, bn, bk, st, parts=True)
            if p["staggered"] is None or p["staggered"] < 1.3 * p["lockstep"]:
                continue
            meas = float(r["dram__bytes_read.sum"])
            span = p["staggered"] - p["lockstep"]
            f = (meas - p["lockstep"]) / span
            h = constant_rate(f, p["waves"], p["per_wave"], p["ctas"])
            lrc = [r.get(f"lrc__{c}_sectors_op_read.sum") for c in ("lrc2xbar", "xbar2gpc")]
            merged = f"{100 * (1 - float(lrc[0]) / float(lrc[1])):.1f}%" if all(lrc) else "-"
            timing = suite.get(key)
            ratio = (f"{float(r['gpu_time_us']) / float(timing['event_us']):.2f}"
                     if timing and r.get("gpu_time_us") else "-")
            print(f"| {path.stem} | {m}x{n}x{k} | {bm}x{bn} | {p['waves']} | {p['k_steps']} | {meas / 1e6:.0f} | "
                  f"{p['lockstep'] / 1e6:.0f} | {p['staggered'] / 1e6:.0f} | {f:.3f} | {p['share']:.3f} | "
                  f"{100 * (p['reads'] / meas - 1):+.0f}% | {h:.3f} | {merged} | {ratio} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
