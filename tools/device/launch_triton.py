"""Launch overhead of a trivial Triton kernel (issue 17, item 5): what do_bench and CUDA events
add to the in-kernel span.

  python3 launch_triton.py OUT.csv      (appends rows to the CSV launch_overhead writes)

The kernel: each program reads %globaltimer at its start, stores its program id, reads
%globaltimer again and stores both stamps (4 warps). Per grid (1 and 132):
  * triton.testing.do_bench(return_mode="median" and "min"): 256 MB cache clear before each call;
  * the cold loop of gemm_suite.py (torch.cuda._sleep, zero_ of 256 MiB, event, ONE launch, event),
    200 reps, each with its own stamp buffer: event time, span (last end - first start), and
    event - span per rep (median, min);
  * the same loop without the flush (only the _sleep ahead).
"""
import csv
import os
import statistics
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def _gt():
    return tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64,
                                     is_pure=False, pack=1)


@triton.jit
def stamp_kernel(T, X):
    g0 = _gt()
    pid = tl.program_id(0)
    tl.store(X + pid, pid)
    g1 = _gt()
    tl.store(T + pid.to(tl.int64) * 2, g0)
    tl.store(T + pid.to(tl.int64) * 2 + 1, g1)


def main():
    out = sys.argv[1]
    flush = torch.empty(256 * 2**20, dtype=torch.uint8, device="cuda")
    X = torch.zeros(4096, dtype=torch.int32, device="cuda")
    rows = []
    for grid in (1, 132):
        T0 = torch.zeros((grid, 2), dtype=torch.int64, device="cuda")

        def fn():
            stamp_kernel[(grid, )](T0, X, num_warps=4)

        fn()
        torch.cuda.synchronize()
        db_med = triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median") * 1000.0
        db_min = triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="min") * 1000.0
        rows.append(dict(method="triton_do_bench", kernel="triton_stamp", grid=grid, block=128,
                         spin_cycles=0, preceded_by="do_bench_cache_clear", reps="",
                         event_us_med=round(db_med, 3), event_us_min=round(db_min, 3),
                         note="triton.testing.do_bench median / min (ms->us)"))
        print(f"triton do_bench grid {grid}: median {db_med:.3f} us, min {db_min:.3f} us",
              flush=True)
        for pre in ("flush256MiB", "sleep50us"):
            reps = 200
            Ts = [torch.zeros((grid, 2), dtype=torch.int64, device="cuda") for _ in range(reps)]
            s = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
            e = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
            for i in range(reps):
                torch.cuda._sleep(100_000)
                if pre == "flush256MiB":
                    flush.zero_()
                s[i].record()
                stamp_kernel[(grid, )](Ts[i], X, num_warps=4)
                e[i].record()
            torch.cuda.synchronize()
            ev, sp, df = [], [], []
            for i in range(reps):
                t = Ts[i].cpu()
                us = s[i].elapsed_time(e[i]) * 1000.0
                span = (t[:, 1].max() - t[:, 0].min()).item() / 1000.0
                ev.append(us)
                sp.append(span)
                df.append(us - span)
            rows.append(dict(method="triton_events", kernel="triton_stamp", grid=grid, block=128,
                             spin_cycles=0, preceded_by=pre, reps=reps,
                             event_us_med=round(statistics.median(ev), 3),
                             event_us_min=round(min(ev), 3),
                             span_us_med=round(statistics.median(sp), 3),
                             span_us_min=round(min(sp), 3),
                             event_minus_span_us_med=round(statistics.median(df), 3),
                             event_minus_span_us_min=round(min(df), 3),
                             note="torch.cuda.Event around one Triton launch"))
            print(f"triton events grid {grid} pre {pre}: event {statistics.median(ev):.3f} us "
                  f"span {statistics.median(sp):.3f} us event-span {statistics.median(df):.3f} us",
                  flush=True)
    cols = ["method", "kernel", "grid", "block", "spin_cycles", "preceded_by", "reps",
            "event_us_med", "event_us_min", "span_us_med", "span_us_min",
            "event_minus_span_us_med", "event_minus_span_us_min", "inkernel_sm_mhz", "note"]
    new = not os.path.exists(out)
    with open(out, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        if new:
            w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, "") for k in cols})


if __name__ == "__main__":
    main()
