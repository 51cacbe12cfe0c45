"""Per-CTA start and end of Triton TMA GEMMs on the H200: where a many-CTA kernel's time goes
(the first wave against later ones, the gap between one CTA's end and the next CTA's start on
an SM). Issue 17: the model is too fast on grids of many short CTAs.

  python3 tools/device/cta_stamps.py OUT.csv M,N,K,CFG [M,N,K,CFG ...]

CFG indexes triton_kernels.SUITE_CFGS. Per point: fresh fp16 inputs, cold L2 (a 256 MiB write,
as gemm_suite.py), REPS launches of the timed twin (gemm_tma_timed_kernel: %clock64,
%globaltimer, %smid at the CTA's start and end); the launch whose span is the median is written,
one row per CTA: pid, smid, start and end (ns after the grid's first start, %globaltimer, 32 ns
ticks) and its SM cycles. The output is checked against torch.
"""
import csv
import sys

import torch

import triton_kernels as tk

REPS = 7


def main(out, specs):
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    with open(out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["M", "N", "K", "block_m", "block_n", "block_k", "stages", "warps", "rep_span_us",
                    "pid", "smid", "start_ns", "end_ns", "cycles"])
        for spec in specs:
            M, N, K, ci = (int(x) for x in spec.split(","))
            cfg = tk.SUITE_CFGS[ci]
            a, b = tk.seeded_operands(M, N, K)
            launch, c, T = tk.make_gemm_launch_on(a, b, cfg, timed=True)
            launch()  # compile
            span, t, spans = tk.median_cold_launch(launch, T, flush, REPS, 2, 3)
            ref = (a.float() @ b.float().T)
            err = ((c.float() - ref).norm() / ref.norm()).item()
            if not err < 1e-2:
                sys.exit(f"{spec}: relative error {err}")
            first = t[:, 2].min().item()
            for pid in range(t.shape[0]):
                w.writerow([M, N, K, cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"], cfg["num_stages"],
                            cfg["num_warps"], round(span / 1000.0, 3), pid, int(t[pid, 4]),
                            int(t[pid, 2] - first), int(t[pid, 3] - first), int(t[pid, 1] - t[pid, 0])])
            print(f"{spec}: {t.shape[0]} CTAs, span median {span / 1000:.1f} us "
                  f"(min {spans[0] / 1000:.1f}, max {spans[-1] / 1000:.1f}), rel err {err:.1e}",
                  flush=True)
            del a, b, c, T
            torch.cuda.empty_cache()


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
