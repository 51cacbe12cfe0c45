"""Issue 17's GEMM suite on the H200: Triton TMA GEMM, 3 tile configs x >= 40 shapes.

Run on the device machine (tools/device/run_issue17.sh does), with the IR dump on:
  TRITON_ALWAYS_COMPILE=1 TRITON_KERNEL_DUMP=1 TRITON_DUMP_DIR=DIR python3 gemm_suite.py suite OUTDIR
  python3 gemm_suite.py ncu POINTS_JSON_OUT M,N,K,CFG [M,N,K,CFG ...]   one launch each (for ncu)
  python3 gemm_suite.py hot M,N,K,CFG LAUNCHES                          LAUNCHES+1 back-to-back
  python3 gemm_suite.py list                                            the shapes, no GPU
  python3 gemm_suite.py specs [GROUP]                                   all points as ncu specs
CFG is the index into triton_kernels.SUITE_CFGS (0: 128x128x64 s3 w4, 1: 128x256x64 s3 w8,
2: 64x128x64 s4 w4; all GROUP_M=1, the row-major raster).

Method, per (shape, config) point:
  * correctness: fresh random fp16 inputs per shape, NaN-poisoned output, ||C - A B^T|| / ||A B^T||
    against the fp32 torch product, for the kernel and its timed twin (rel_err, the larger;
    inf when an element stayed NaN);
  * the GPU idles SUITE_REST_S (0.2 s) before the point's timing starts;
  * cold L2, CUDA events, `reps` reps interleaving the kernel and its timed twin: torch.cuda._sleep
    (~50 us queued, so the GPU runs ahead of the host), a 256 MiB buffer is written (zero_,
    evicts the 60 MiB L2), event, ONE launch of gemm_tma_kernel, event; then the same for
    gemm_tma_timed_kernel (same body + %clock64/%globaltimer/%smid per CTA) with its own stamp
    buffer. event_us / event_us_min: median / min of the kernel's event times; span_us: median
    of the twin's spans (last CTA end - first CTA start, %globaltimer, 32 ns tick);
    inkernel_sm_mhz: median over reps of the median over CTAs of clock64 cycles / globaltimer
    ns; twin_event_us and twin_event_minus_span_us: the twin's own event time and event - span
    of the same launch (medians);
  * triton.testing.do_bench(return_mode="median") after the loop, which clears a 256 MB buffer
    before each call (dobench_us);
  * NVML: SM clock and power sampled every 10 ms in a thread over the loop and do_bench.
  * SUITE_PASSES=2 runs the suite again in the reverse order (gemm_suite_pass2.csv): the spread
    that the thermal/power history of the neighbouring points causes.
"""
import csv
import json
import os
import statistics
import sys
import threading
import time
import traceback

SHAPES = {
    "tiny": [(128, 128, 256), (128, 128, 1024), (256, 256, 512), (512, 512, 512),
             (1024, 1024, 1024), (256, 512, 2048)],
    "skinny": [(128, 4096, 4096), (4096, 128, 4096), (128, 8192, 8192), (8192, 128, 8192),
               (128, 16384, 4096), (16384, 128, 4096), (128, 12288, 8192), (12288, 128, 8192)],
    "longk": [(128, 128, 16384), (128, 128, 32768), (256, 256, 32768), (1024, 1024, 16384),
              (1024, 1024, 32768), (2048, 2048, 16384), (4096, 4096, 16384)],
    "square": [(2048, 2048, 2048), (3072, 3072, 3072), (4096, 4096, 4096), (5120, 5120, 5120),
               (6144, 6144, 6144), (8192, 8192, 8192)],
    "odd": [(1000, 1000, 1000), (1544, 1544, 1544), (3000, 2000, 1504), (640, 5120, 5120),
            (5120, 640, 5120), (4096, 1024, 4096), (1000, 4000, 3000), (2504, 2504, 704),
            (200, 7000, 3000), (6000, 3000, 1000)],
    "llm": [(4096, 14336, 4096), (4096, 4096, 14336), (8192, 1024, 8192), (16384, 1024, 1024),
            (8192, 8192, 2048), (4096, 4096, 512), (4096, 4096, 1024), (1024, 28672, 4096)],
}

COLUMNS = ["M", "N", "K", "block_m", "block_n", "block_k", "stages", "warps", "group_m", "grid",
           "category", "event_us", "event_us_min", "dobench_us", "span_us", "inkernel_sm_mhz",
           "nvml_sm_mhz_med", "nvml_sm_mhz_min", "power_w_max", "reps", "rel_err",
           # extra columns
           "config", "tflops_event", "span_us_min", "span_us_max", "inkernel_sm_mhz_min_cta",
           "inkernel_sm_mhz_max_cta", "cta_cycles_med", "cta_cycles_min", "cta_cycles_max",
           "sms_used", "nvml_sm_mhz_max", "nvml_mem_mhz", "nvml_samples", "power_w_med",
           "twin_event_us", "twin_event_minus_span_us", "inkernel_sm_mhz_min_rep",
           "inkernel_sm_mhz_max_rep", "pass_no", "order_index", "t_start_unix", "t_end_unix"]


def category_of(M, N, K):
    for cat, shapes in SHAPES.items():
        if (M, N, K) in shapes:
            return cat
    return "extra"


if len(sys.argv) > 1 and sys.argv[1] == "specs":  # ncu point specs, GROUP points a line
    group = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    specs = [f"{M},{N},{K},{ci}" for ci in range(3) for shapes in SHAPES.values()
             for (M, N, K) in shapes]
    for i in range(0, len(specs), group):
        print(" ".join(specs[i:i + group]))
    sys.exit(0)

if len(sys.argv) > 1 and sys.argv[1] == "list":
    n = 0
    for cat, shapes in SHAPES.items():
        for s in shapes:
            assert all(x % 8 == 0 for x in s), s
            print(cat, "%dx%dx%d" % s)
            n += 1
    print(n, "shapes x 3 configs =", 3 * n, "points")
    sys.exit(0)

import torch  # noqa: E402
import triton  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import triton_kernels as tk  # noqa: E402

try:
    import pynvml
    pynvml.nvmlInit()
    NVML = pynvml.nvmlDeviceGetHandleByIndex(0)
except Exception:  # pragma: no cover - device only
    NVML = None

FLUSH = None
# SUITE_FLUSH=read empties the L2 by reading the 256 MiB buffer instead of writing it: the L2 then
# holds clean lines, where zero_ leaves dirty ones that the kernel's misses write back
# (docs/calibration.md §42, tools/device/dirty_l2.py).
FLUSH_MODE = os.environ.get("SUITE_FLUSH", "write")
FLUSH_SINK = None


def flush_l2():
    if FLUSH_MODE == "read":
        torch.sum(FLUSH.view(torch.float32), 0, out=FLUSH_SINK)
    else:
        FLUSH.zero_()  # write 256 MiB: evicts the L2
REST_S = float(os.environ.get("SUITE_REST_S", "0.2"))


class Sampler:
    """NVML SM clock / memory clock / power every `period` s while active."""

    def __init__(self, period=0.01):
        self.period = period
        self.samples = []
        self._stop = threading.Event()
        self._t = None

    def __enter__(self):
        if NVML is not None:
            self._t = threading.Thread(target=self._run, daemon=True)
            self._t.start()
        return self

    def _run(self):
        while not self._stop.is_set():
            try:
                sm = pynvml.nvmlDeviceGetClockInfo(NVML, pynvml.NVML_CLOCK_SM)
                mem = pynvml.nvmlDeviceGetClockInfo(NVML, pynvml.NVML_CLOCK_MEM)
                pw = pynvml.nvmlDeviceGetPowerUsage(NVML) / 1000.0
                self.samples.append((sm, mem, pw))
            except Exception:
                pass
            time.sleep(self.period)

    def __exit__(self, *a):
        self._stop.set()
        if self._t:
            self._t.join()

    def stats(self):
        if not self.samples:
            return dict(nvml_sm_mhz_med=0, nvml_sm_mhz_min=0, nvml_sm_mhz_max=0, nvml_mem_mhz=0,
                        power_w_max=0, power_w_med=0, nvml_samples=0)
        sm = [s[0] for s in self.samples]
        pw = [s[2] for s in self.samples]
        return dict(nvml_sm_mhz_med=statistics.median(sm), nvml_sm_mhz_min=min(sm),
                    nvml_sm_mhz_max=max(sm),
                    nvml_mem_mhz=statistics.median([s[1] for s in self.samples]),
                    power_w_max=round(max(pw), 1), power_w_med=round(statistics.median(pw), 1),
                    nvml_samples=len(sm))


def time_cold(fn, reps):
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for i in range(reps):
        torch.cuda._sleep(100_000)  # ~50 us of GPU work queued ahead of the host
        flush_l2()
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()
    us = [s.elapsed_time(e) * 1000.0 for s, e in zip(starts, ends)]
    return statistics.median(us), min(us)


def rel_err(out, ref):
    out = out.float()
    if torch.isnan(out).any():
        return float("inf")
    return ((out - ref).norm() / ref.norm()).item()


def inkernel(T):
    t = T.cpu().double()
    cyc = t[:, 1] - t[:, 0]
    ns = t[:, 3] - t[:, 2]
    ok = ns > 0
    mhz = cyc[ok] / ns[ok] * 1000.0
    return dict(span_us=(t[:, 3].max() - t[:, 2].min()).item() / 1000.0,
                mhz=float(mhz.median()) if ok.any() else 0.0,
                mhz_min=float(mhz.min()) if ok.any() else 0.0,
                mhz_max=float(mhz.max()) if ok.any() else 0.0,
                cyc_med=float(cyc.median()), cyc_min=float(cyc.min()), cyc_max=float(cyc.max()),
                sms=int(torch.unique(t[:, 4]).numel()))


def reps_for(M, N, K):
    flops = 2.0 * M * N * K
    est_us = flops / 500e12 * 1e6  # ~500 TFLOP/s guess, only to pick reps
    if est_us < 100:
        return 40
    if est_us < 1000:
        return 25
    return 20


def bench_point(a, b, ref, cfg, category, writer, fh, pass_no=1, order_index=0):
    M, K = a.shape
    N = b.shape[0]
    t0 = time.time()
    launch, c, _ = tk.make_gemm_launch_on(a, b, cfg)
    launch()  # compile + correctness
    torch.cuda.synchronize()
    err = rel_err(c, ref)
    reps = reps_for(M, N, K)
    grid = tk.gemm_grid(M, N, cfg)[0]
    # the timed twin, one stamp buffer per rep, compiled before the timing
    twin, c2, T0 = tk.make_gemm_launch_on(a, b, cfg, timed=True)
    twin()
    torch.cuda.synchronize()
    err_twin = rel_err(c2, ref)
    Ts = [torch.zeros((grid, 5), device="cuda", dtype=torch.int64) for _ in range(reps)]
    twins = []
    for i in range(reps):
        # same descriptors, own stamp buffer: rebinds T only
        twins.append(tk.make_gemm_twin_with(a, b, cfg, c2, Ts[i]))
    time.sleep(REST_S)  # idle before the point: the power controller starts from rest
    ev = [[torch.cuda.Event(enable_timing=True) for _ in range(4)] for _ in range(reps)]
    with Sampler() as smp:
        # interleaved cold loop: untimed kernel, then its timed twin, each after its own flush
        for i in range(reps):
            torch.cuda._sleep(100_000)
            flush_l2()
            ev[i][0].record()
            launch()
            ev[i][1].record()
            torch.cuda._sleep(100_000)
            flush_l2()
            ev[i][2].record()
            twins[i]()
            ev[i][3].record()
        torch.cuda.synchronize()
        try:
            db = triton.testing.do_bench(launch, warmup=25, rep=100, return_mode="median") * 1000.0
        except Exception:
            traceback.print_exc()
            db = float("nan")
    us = [e[0].elapsed_time(e[1]) * 1000.0 for e in ev]
    tw = [e[2].elapsed_time(e[3]) * 1000.0 for e in ev]
    iks = [inkernel(T) for T in Ts]
    spans = [x["span_us"] for x in iks]
    mhzs = [x["mhz"] for x in iks]
    med, mn = statistics.median(us), min(us)
    ik = iks[spans.index(sorted(spans)[len(spans) // 2])]
    row = dict(M=M, N=N, K=K, block_m=cfg["BLOCK_M"], block_n=cfg["BLOCK_N"],
               block_k=cfg["BLOCK_K"], stages=cfg["num_stages"], warps=cfg["num_warps"],
               group_m=cfg["GROUP_M"], grid=grid, category=category,
               event_us=round(med, 3), event_us_min=round(mn, 3), dobench_us=round(db, 3),
               span_us=round(statistics.median(spans), 3),
               inkernel_sm_mhz=round(statistics.median(mhzs), 1),
               reps=reps, rel_err=f"{max(err, err_twin):.2e}", config=tk.cfg_name(cfg),
               tflops_event=round(2.0 * M * N * K / (med * 1e-6) / 1e12, 1),
               span_us_min=round(min(spans), 3), span_us_max=round(max(spans), 3),
               inkernel_sm_mhz_min_cta=round(ik["mhz_min"], 1),
               inkernel_sm_mhz_max_cta=round(ik["mhz_max"], 1), cta_cycles_med=ik["cyc_med"],
               cta_cycles_min=ik["cyc_min"], cta_cycles_max=ik["cyc_max"], sms_used=ik["sms"],
               twin_event_us=round(statistics.median(tw), 3),
               twin_event_minus_span_us=round(statistics.median(
                   t - x for t, x in zip(tw, spans)), 3),
               inkernel_sm_mhz_min_rep=round(min(mhzs), 1),
               inkernel_sm_mhz_max_rep=round(max(mhzs), 1),
               pass_no=pass_no, order_index=order_index,
               t_start_unix=round(t0, 3), t_end_unix=round(time.time(), 3))
    row.update(smp.stats())
    writer.writerow({k: row.get(k, "") for k in COLUMNS})
    fh.flush()
    print(f"p{pass_no} {category:6s} {M}x{N}x{K} {tk.cfg_name(cfg)}: event {med:.2f} (min {mn:.2f}) "
          f"do_bench {db:.2f} span {row['span_us']:.2f} twin {row['twin_event_us']:.2f} us, "
          f"{row['tflops_event']} TF/s, in-kernel {row['inkernel_sm_mhz']:.0f} MHz "
          f"({row['inkernel_sm_mhz_min_rep']:.0f}-{row['inkernel_sm_mhz_max_rep']:.0f}), NVML "
          f"{row['nvml_sm_mhz_med']} ({row['nvml_sm_mhz_min']}) MHz, {row['power_w_max']} W, "
          f"err {err:.1e}", flush=True)
    del c, c2, T0, Ts, twins


def suite(out):
    global FLUSH, FLUSH_SINK
    os.makedirs(out, exist_ok=True)
    FLUSH = torch.zeros(256 * 2**20, dtype=torch.uint8, device="cuda")
    FLUSH_SINK = torch.empty((), dtype=torch.float32, device="cuda")
    meta = dict(torch=torch.__version__, triton=triton.__version__, cuda=torch.version.cuda,
                gpu=torch.cuda.get_device_name(0), cfgs=tk.SUITE_CFGS, rest_s=REST_S, flush=FLUSH_MODE,
                props=str(torch.cuda.get_device_properties(0)))
    with open(os.path.join(out, "gemm_suite_meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    budget = float(os.environ.get("SUITE_BUDGET_S", "330"))
    passes = int(os.environ.get("SUITE_PASSES", "1"))
    t_begin = time.time()
    order = [(cat, s) for cat, shapes in SHAPES.items() for s in shapes]
    for pass_no in range(1, passes + 1):
        name = "gemm_suite.csv" if pass_no == 1 else f"gemm_suite_pass{pass_no}.csv"
        seq = order if pass_no % 2 == 1 else order[::-1]  # even passes: reverse order
        with open(os.path.join(out, name), "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=COLUMNS)
            w.writeheader()
            fh.flush()
            for idx, (cat, (M, N, K)) in enumerate(seq):
                if time.time() - t_begin > budget:
                    print(f"budget {budget} s spent: skipping p{pass_no} {cat} {M}x{N}x{K}",
                          flush=True)
                    continue
                try:
                    g = torch.Generator(device="cuda").manual_seed(M + 7 * N + 13 * K + pass_no)
                    a = torch.randn((M, K), device="cuda", dtype=torch.float16, generator=g)
                    b = torch.randn((N, K), device="cuda", dtype=torch.float16, generator=g)
                    ref = a.float() @ b.float().T
                except Exception:
                    traceback.print_exc()
                    continue
                for cfg in tk.SUITE_CFGS:
                    try:
                        bench_point(a, b, ref, cfg, cat, w, fh, pass_no, idx)
                    except Exception:
                        print(f"FAILED {M}x{N}x{K} {tk.cfg_name(cfg)}", flush=True)
                        traceback.print_exc()
                del a, b, ref
                torch.cuda.empty_cache()
        print(f"suite pass {pass_no} done at {time.time() - t_begin:.0f} s", flush=True)


def parse_point(s):
    M, N, K, ci = (int(x) for x in s.split(","))
    return M, N, K, ci


def ncu_points(points_json, specs):
    """One launch of gemm_tma_kernel per point, in order (ncu -k regex:^gemm_tma_kernel$)."""
    pts = []
    for s in specs:
        M, N, K, ci = parse_point(s)
        cfg = tk.SUITE_CFGS[ci]
        a, b = tk.seeded_operands(M, N, K)
        launch, c, _ = tk.make_gemm_launch_on(a, b, cfg)
        launch()
        torch.cuda.synchronize()
        ok = not torch.isnan(c).any().item()
        pts.append(dict(M=M, N=N, K=K, block_m=cfg["BLOCK_M"], block_n=cfg["BLOCK_N"],
                        block_k=cfg["BLOCK_K"], stages=cfg["num_stages"], warps=cfg["num_warps"],
                        group_m=cfg["GROUP_M"], grid=tk.gemm_grid(M, N, cfg)[0],
                        category=category_of(M, N, K), written=ok))
        print("ncu point", s, "grid", pts[-1]["grid"], "ok", ok, flush=True)
        del a, b, c
        torch.cuda.empty_cache()
    with open(points_json, "w") as f:
        json.dump(pts, f, indent=1)


def hot(spec, launches):
    M, N, K, ci = parse_point(spec)
    cfg = tk.SUITE_CFGS[ci]
    a = torch.randn((M, K), device="cuda", dtype=torch.float16)
    b = torch.randn((N, K), device="cuda", dtype=torch.float16)
    launch, c, _ = tk.make_gemm_launch_on(a, b, cfg)
    t0 = time.time()
    for _ in range(launches + 1):
        launch()
    torch.cuda.synchronize()
    print(f"hot {spec}: {launches + 1} launches in {time.time() - t0:.3f} s", flush=True)


def main():
    cmd = sys.argv[1]
    if cmd == "suite":
        suite(sys.argv[2])
    elif cmd == "ncu":
        ncu_points(sys.argv[2], sys.argv[3:])
    elif cmd == "hot":
        hot(sys.argv[2], int(sys.argv[3]))
    else:
        sys.exit("usage: gemm_suite.py suite OUT | ncu POINTS.json SPEC... | hot SPEC N | list")


if __name__ == "__main__":
    main()
