#!/usr/bin/env python3
"""What a "cold L2" holds after a write flush (simfa issue 17, docs/calibration.md §42).

Timed cold-L2 runs empty the L2 in one of two ways: gemm_suite.py, attention_suite.py,
triton_bench.py (do_bench's own way) and tma_loaded.cu write a 256 MiB buffer; membench.cu,
dram_stride.cu and tma_load.cu read one. A write flush leaves the L2 holding the buffer's dirty
lines, which the next kernel's misses write back to DRAM; a read flush leaves clean ones. This
script measures the difference on a plain DRAM read (torch's sum of the first N MiB of a 1 GiB
fp32 tensor, one reduce kernel):

  timed   after each flush (write: zero_ of 256 MiB; read: the sum of another 256 MiB; none: the
          same read twice, so that the data is L2-resident up to the L2's size), CUDA events
          around the sum, median of REPS; N from 8 MiB to 512 MiB
  --ncu   one sum after each flush, inside an NVTX range `measure`, for ncu to profile with
          --cache-control none (the flush's lines stay): dram__bytes_write.sum is then the dirty
          bytes the sum's misses evicted

    python3 dirty_l2.py OUT.csv            # timed
    ncu --cache-control none --clock-control none --nvtx --nvtx-include measure/ \\
        --metrics dram__bytes_read.sum,dram__bytes_write.sum --csv \\
        python3 dirty_l2.py --ncu ORDER.csv > NCU.csv

ORDER.csv lists the (flush, MiB) of each profiled launch in order. Never changes a GPU setting."""
import csv
import statistics
import sys

import torch

MIB = 1 << 20
SIZES = (8, 16, 32, 48, 64, 96, 128, 512)
FLUSHES = ("write", "read", "none")
REPS = 15


def main():
    ncu = sys.argv[1] == "--ncu"
    out = sys.argv[2] if ncu else sys.argv[1]
    data = torch.ones(256 * MIB, dtype=torch.float32, device="cuda")  # 1 GiB
    flush_w = torch.empty(256 * MIB, dtype=torch.uint8, device="cuda")
    flush_r = torch.ones(64 * MIB, dtype=torch.float32, device="cuda")  # 256 MiB
    sink = torch.empty((), dtype=torch.float32, device="cuda")

    def flush(kind, part):
        if kind == "write":
            flush_w.zero_()
        elif kind == "read":
            torch.sum(flush_r, 0, out=sink)
        else:
            torch.sum(part, 0, out=sink)

    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    rows = []
    for kind in FLUSHES:
        for mib in SIZES:
            part = data[: mib * MIB // 4]
            times = []
            for _ in range(1 if ncu else REPS):
                flush(kind, part)
                torch.cuda._sleep(200_000)  # the GPU runs ahead of the host: no launch gap
                if ncu:
                    torch.cuda.nvtx.range_push("measure")
                start.record()
                torch.sum(part, 0, out=sink)
                end.record()
                if ncu:
                    torch.cuda.nvtx.range_pop()
                end.synchronize()
                times.append(start.elapsed_time(end) * 1000)
            rows.append({"flush": kind, "mib": mib, "event_us_med": round(statistics.median(times), 2),
                         "event_us_min": round(min(times), 2), "reps": len(times)})
            print(rows[-1], flush=True)
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()
