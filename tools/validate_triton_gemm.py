#!/usr/bin/env python3
"""Simulates the Triton TMA GEMMs measured on the H200 (validation/h200/gemm_triton.csv and
gemm_ksweep_single_cta.csv) by the TTGIR routes and prints a markdown table of simulated
against measured in-kernel time (the kernel's span measured with globaltimer, without launch
overhead), each simulation at the SM clock measured in that kernel.

  tools/validate_triton_gemm.py [SIMFA_BINARY] [MANIFEST]
"""
import csv
import json
import os
import subprocess
import sys
import tempfile

SIMFA = sys.argv[1] if len(sys.argv) > 1 else "build/release/bin/simfa"
MANIFEST = sys.argv[2] if len(sys.argv) > 2 else "configs/h200.toml"
TTGIR = "tests/data/ttgir/gemm_tma.ttgir"
TRACES = {(128, 128, 512): "validation/h200/traces/gemm_128x128x512.chrome_trace",
          (128, 128, 1024): "validation/h200/traces/gemm_128x128x1024.chrome_trace",
          (4096, 4096, 512): "validation/h200/traces/gemm_4096x4096x512.chrome_trace.gz"}


def simulate(workload, clock_mhz):
    with tempfile.NamedTemporaryFile(suffix=".json") as stats:
        subprocess.run([SIMFA, "run", MANIFEST, "-q", "--set", f"gpu.clock_mhz={clock_mhz}",
                        "--workload", workload, "--stats", stats.name], check=True)
        return json.load(open(stats.name))["kernel"]["time_us"]


def args(m, n, k):
    return (f"args=M={m};N={n};K={k};a_desc.shape={m}x{k};b_desc.shape={n}x{k};"
            f"c_desc.shape={m}x{n}")


def main():
    rows = []
    for name in ("validation/h200/gemm_ksweep_single_cta.csv", "validation/h200/gemm_triton.csv"):
        rows += list(csv.DictReader(open(name)))
    print("| M x N x K | clock (MHz) | measured (us) | static route (us) | error | "
          "trace route (us) | error |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    errors = {"static": [], "trace": []}
    for r in rows:
        m, n, k = int(r["M"]), int(r["N"]), int(r["K"])
        clock = float(r["inkernel_sm_mhz"])
        measured = float(r["inkernel_span_us"])
        grid = f"{-(-n // 128)}x{-(-m // 128)}"
        static = simulate(f"ttgir:file={TTGIR},grid={grid},{args(m, n, k)}", clock)
        errors["static"].append(abs(static - measured) / measured)
        cells = [f"{static:.1f}", f"{100 * (static - measured) / measured:+.1f}%"]
        if (m, n, k) in TRACES:
            traced = simulate(f"ttgir:trace={TRACES[(m, n, k)]},ttgir={TTGIR},{args(m, n, k)}", clock)
            errors["trace"].append(abs(traced - measured) / measured)
            cells += [f"{traced:.1f}", f"{100 * (traced - measured) / measured:+.1f}%"]
        else:
            cells += ["-", "-"]
        print(f"| {m} x {n} x {k} | {clock:.0f} | {measured:.1f} | " + " | ".join(cells) + " |")
    for route, e in errors.items():
        if e:
            print(f"\n{route} route: MAPE {100 * sum(e) / len(e):.1f}% over {len(e)} kernels")


if __name__ == "__main__":
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    main()
