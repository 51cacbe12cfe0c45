"""Short summary of a run_all.sh result directory (printed last by run_all.sh).

  python3 summarize.py DIR      DIR holds pointer_chase.csv, bandwidth.csv, gemm_*.csv, ...
Standard library only, so it also runs here on the fetched results.
"""
import csv
import json
import os
import statistics
import sys


def rows(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return list(csv.DictReader(f))


def chase_summary(d):
    rs = rows(os.path.join(d, "pointer_chase.csv"))
    if not rs:
        print("pointer_chase: missing")
        return {}
    warm = [(int(r["working_set_bytes"]), float(r["cycles_per_load"]), float(r["ns_per_load"]),
             float(r["sm_clock_mhz"])) for r in rs if r["mode"] == "warm"]
    cold = [(int(r["working_set_bytes"]), float(r["cycles_per_load"]), float(r["ns_per_load"]),
             float(r["sm_clock_mhz"])) for r in rs if r["mode"] == "cold"]
    floor = min(c for _, c, _, _ in warm)
    plateau = statistics.median(c for _, c, _, _ in cold) if cold else float("nan")
    big = statistics.median(c for ws, c, _, _ in warm if ws >= 128 << 20)
    lo = next((ws for ws, c, _, _ in warm if c > floor + 0.1 * (big - floor)), None)
    hi = next((ws for ws, c, _, _ in warm if c > floor + 0.9 * (big - floor)), None)
    print("pointer chase (cycles/load, ns/load, MHz):")
    for (ws, c, n, m) in warm:
        cc = next((x for x in cold if x[0] == ws), None)
        print(f"  {ws >> 20:4d} MB warm {c:7.1f} cyc {n:6.1f} ns @{m:5.0f}"
              + (f" | cold {cc[1]:7.1f} cyc {cc[2]:6.1f} ns" if cc else ""))
    s = dict(l2_floor_cycles=floor, warm_256MB_cycles=big, cold_plateau_cycles=plateau,
             transition_start_MB=(lo or 0) >> 20, transition_end_MB=(hi or 0) >> 20)
    print("  summary:", s)
    return s


def main():
    d = sys.argv[1]
    env = os.path.join(d, "env.txt")
    if os.path.exists(env):
        for line in open(env):
            if line.split("=")[0] in ("name", "multiProcessorCount", "l2CacheSize",
                                      "persistingL2CacheMaxSize", "cudaDriverVersion"):
                print(line.strip())
    chase_summary(d)
    tc = rows(os.path.join(d, "tma_chase.csv"))
    if tc:
        print("bulk-copy chase (cycles/load):")
        by = {}
        for r in tc:
            by.setdefault(int(r["working_set_bytes"]) >> 20, {})[(r["mode"], r["bytes_per_copy"])] = \
                float(r["cycles_per_load"])
        for ws, v in sorted(by.items()):
            print(f"  {ws:4d} MB " + " ".join(f"{m}/{b}B {c:7.1f}" for (m, b), c in sorted(v.items())))
    bw = rows(os.path.join(d, "bandwidth.csv"))
    if bw:
        print("bandwidth (GB/s, median):")
        for r in bw:
            print(f"  {r['kind']:14s} {r['shape']:14s} st={r['stages']:>2s} {float(r['GBps']):8.1f}"
                  f" @{r['sm_clock_mhz']} MHz err={r['errors']}")
    for r in rows(os.path.join(d, "bandwidth_torch.csv")):
        print(f"  torch_copy_d2d {r['GBps_read_plus_write']} GB/s (read+write)")
    for name in ("gemm_ksweep_single_cta.csv", "gemm_triton.csv"):
        rs = rows(os.path.join(d, name))
        print(f"{name}:")
        for r in rs:
            print(f"  {r['M']}x{r['N']}x{r['K']}: {r['time_us']} us ({r['tflops']} TF/s), "
                  f"cuBLAS {r.get('cublas_time_us')} us, clk {r['sm_clock_mhz']} MHz "
                  f"({r.get('sm_clock_source')}), cta_cycles_med {r.get('cta_cycles_med')}, err {r['rel_err']}")
    rs = rows(os.path.join(d, "attention_triton.csv"))
    print("attention_triton.csv:")
    for r in rs:
        print(f"  Z{r['Z']} H{r['H']} N{r['N_CTX']} {r['block']} w{r['warps']} s{r['stages']}: "
              f"{r['time_us']} us ({r['tflops']} TF/s), SDPA {r['torch_sdpa_time_us']} us, "
              f"clk {r['sm_clock_mhz']} MHz, err {r['rel_err']}")
    for r in rows(os.path.join(d, "clock_probe.csv")):
        print(f"clock probe {r['M']}x{r['N']}x{r['K']} x{r['launches']}: in-kernel first/med/last "
              f"{r['inkernel_mhz_first']}/{r['inkernel_mhz_med']}/{r['inkernel_mhz_last']} MHz, NVML "
              f"{r['nvml_sm_mhz_min']}-{r['nvml_sm_mhz_max']} med {r['nvml_sm_mhz_med']}, "
              f"{r['nvml_power_w_max']} W max, {r['us_per_launch']} us/launch")
    ts = os.path.join(d, "trace", "trace_summary.json")
    if os.path.exists(ts):
        js = json.load(open(ts))
        print("trace steps:", js.get("steps"))
        for k, v in js.items():
            if isinstance(v, dict) and "files" in v:
                print(f"  {k}: files={v['files']} events={v.get('events')} names={len(v.get('names', {}))}")
    smi = os.path.join(d, "smi_samples.csv")
    if os.path.exists(smi):
        sm = []
        for line in open(smi).read().splitlines()[1:]:
            p = [x.strip() for x in line.split(",")]
            try:
                sm.append(float(p[1].split()[0]))
            except (IndexError, ValueError):
                pass
        if sm:
            print(f"nvidia-smi SM clock over the run: min {min(sm):.0f} median "
                  f"{statistics.median(sm):.0f} max {max(sm):.0f} MHz ({len(sm)} samples)")


if __name__ == "__main__":
    main()
