"""Issue 12: the full config space of the Triton TMA GEMM measured on the H200.

The kernel is triton_kernels.gemm_tma_kernel (the validation set's kernel: A [M,K] row-major,
B stored [N,K], host-side TMA descriptors, one output tile per program, non-persistent) with
GROUP_M=1, the row-major raster. The space: BLOCK_M, BLOCK_N in {64,128,256}, BLOCK_K in
{32,64,128}, num_stages 2..5, num_warps 4/8 (216 points).

  python3 rank_space.py run OUT [--shapes all|quick] [--configs all|quick] [--budget S]
  python3 rank_space.py queued OUT [--reps N] [--budget S]      the small shapes again (below)
  python3 rank_space.py worker IDX NWORKERS CONFIGS JSONL     (internal: compile a slice)

Method:
  * compile: NWORKERS processes (one per CPU core, less two) each launch their slice of the
    space once on a 512^3 problem: that compiles (Triton's disk cache, shared with the main
    process) and loads the module. Every shape below has M, N, K multiples of 16, so Triton's
    specialization (ints by divisibility by 16) is the same and the main process reuses each
    compiled kernel across shapes. What Triton rejects (the exception, e.g. OutOfResources for
    shared memory) is recorded with the compiled kernel's n_regs, n_spills, shared bytes.
    The TTGIR of every compiled config is kept (ttgir.tgz).
  * per shape: fresh random fp16 inputs, fp32 torch reference; per valid config, in a shuffled
    order (seeded): NaN-poisoned output, one launch, rel_err = ||C - A B^T|| / ||A B^T||;
    then triton.testing.do_bench(warmup=W ms, rep=R ms, return_mode="median"), which zeroes a
    256 MB buffer before every timed call (cold L2); also the min and the 20th/80th percentile.
    NVML SM clock and power are sampled every 10 ms during each do_bench.
  * a repeat pass at the end re-times each shape's 5 fastest configs (the noise of the ranking).
  * `queued`: do_bench times a kernel of a few microseconds with the GPU often idle, waiting for
    the host's launch, so its events then time the launch too (512^3 and 1024^3 came out
    bimodal: 7 us and 20-25 us modes). This mode re-times QUEUED_SHAPES with the loop of
    gemm_suite.py's time_cold: torch.cuda._sleep (~50 us of queued GPU work, so the GPU runs
    ahead of the host), a 256 MiB buffer zeroed (cold L2), event, ONE launch, event; --reps
    reps per config (median, min, p20, p80), written to rank_space_queued.csv.
  * the script keeps its own budget (--budget, seconds of wall time) and writes each row as it
    is measured. It never changes a GPU setting; it only reads clocks.
"""
import csv
import io
import json
import os
import random
import statistics
import subprocess
import sys
import tarfile
import time
import traceback

BMS = (64, 128, 256)
BKS = (32, 64, 128)
STAGES = (2, 3, 4, 5)
WARPS = (4, 8)


def space():
    return [dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=1, num_stages=s, num_warps=w)
            for bm in BMS for bn in BMS for bk in BKS for s in STAGES for w in WARPS]


def name(c):
    return (f"bm{c['BLOCK_M']}_bn{c['BLOCK_N']}_bk{c['BLOCK_K']}_s{c['num_stages']}"
            f"_w{c['num_warps']}")


# regime -> shapes (all multiples of 16: one Triton specialization for all)
SHAPES = [
    ("small", (512, 512, 512)),
    ("small", (1024, 1024, 1024)),
    ("skinny", (128, 8192, 8192)),
    ("skinny", (16384, 128, 4096)),
    ("shortk", (4096, 4096, 512)),
    ("shortk", (8192, 4096, 256)),
    ("longk", (1024, 1024, 16384)),
    ("longk", (256, 256, 32768)),
    ("wave", (2304, 1920, 4096)),
    ("wave", (1536, 2816, 8192)),
    ("medium", (2048, 2048, 2048)),
    ("odd", (2992, 2000, 1504)),
    ("large", (4096, 4096, 4096)),
    ("llm", (4096, 14336, 4096)),
    ("throttled", (8192, 8192, 8192)),
    ("llm", (8192, 1024, 8192)),
]
QUEUED_SHAPES = [("small", (512, 512, 512)), ("small", (1024, 1024, 1024))]
QUICK_SHAPES = [("small", (512, 512, 512)), ("large", (4096, 4096, 4096))]
QUICK_CFGS = ["bm128_bn128_bk64_s3_w4", "bm128_bn256_bk64_s3_w8", "bm64_bn128_bk64_s4_w4",
              "bm64_bn64_bk32_s2_w8", "bm128_bn128_bk128_s4_w8", "bm256_bn256_bk64_s2_w4",
              "bm256_bn256_bk128_s5_w8", "bm256_bn128_bk64_s4_w8", "bm64_bn256_bk128_s3_w4",
              "bm128_bn64_bk32_s5_w4"]

COMPILE_COLS = ["config", "block_m", "block_n", "block_k", "stages", "warps", "status", "n_regs",
                "n_spills", "shared_bytes", "compile_s", "error"]
COLS = ["category", "M", "N", "K", "config", "block_m", "block_n", "block_k", "stages", "warps",
        "grid", "dobench_us", "dobench_min_us", "dobench_p20_us", "dobench_p80_us", "rel_err",
        "nvml_sm_mhz_med", "nvml_sm_mhz_min", "power_w_med", "power_w_max", "nvml_samples",
        "pass_no", "order_index", "t_unix"]


def worker(idx, nw, cfgs_sel, out_jsonl):
    import torch
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import triton_kernels as tk
    cfgs = [c for c in space() if cfgs_sel is None or name(c) in cfgs_sel]
    mine = cfgs[idx::nw]
    M = N = K = 512
    a = torch.randn((M, K), device="cuda", dtype=torch.float16)
    b = torch.randn((N, K), device="cuda", dtype=torch.float16)
    with open(out_jsonl, "w") as f:
        for c in mine:
            rec = dict(config=name(c), block_m=c["BLOCK_M"], block_n=c["BLOCK_N"],
                       block_k=c["BLOCK_K"], stages=c["num_stages"], warps=c["num_warps"])
            t0 = time.time()
            try:
                cc = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
                ad, bd, cd = tk.gemm_descs(a, b, cc, c)
                grid = tk.gemm_grid(M, N, c)
                k = tk.gemm_tma_kernel[grid](ad, bd, cd, M, N, K, BLOCK_M=c["BLOCK_M"],
                                             BLOCK_N=c["BLOCK_N"], BLOCK_K=c["BLOCK_K"],
                                             GROUP_M=1, num_warps=c["num_warps"],
                                             num_stages=c["num_stages"])
                torch.cuda.synchronize()
                rec.update(status="ok", n_regs=getattr(k, "n_regs", ""),
                           n_spills=getattr(k, "n_spills", ""),
                           shared_bytes=k.metadata.shared, error="")
                try:
                    rec["ttgir"] = k.asm["ttgir"]
                except Exception:
                    pass
            except Exception as e:  # Triton's own rejection (shared memory etc.)
                msg = f"{type(e).__name__}: {e}".replace("\n", " ")[:300]
                rec.update(status="rejected", n_regs="", n_spills="", shared_bytes="", error=msg)
            rec["compile_s"] = round(time.time() - t0, 2)
            f.write(json.dumps(rec) + "\n")
            f.flush()


SAMPLER_COLUMNS = ("nvml_sm_mhz_med", "nvml_sm_mhz_min", "power_w_med", "power_w_max",
                   "nvml_samples")


def run(out, shapes, cfgs_sel, budget, warmup_ms, rep_ms, queued_reps=0):
    t_begin = time.time()
    os.makedirs(out, exist_ok=True)
    here = os.path.dirname(os.path.abspath(__file__))
    ncpu = os.cpu_count() or 4
    nw = max(1, min(ncpu - 2, 14))
    cfg_arg = ",".join(cfgs_sel) if cfgs_sel else "all"
    procs = []
    for i in range(nw):
        p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "worker", str(i),
                              str(nw), cfg_arg, f"/tmp/rank_w{i}.jsonl"])
        procs.append(p)
    compile_deadline = t_begin + 0.45 * budget
    for p in procs:
        left = compile_deadline - time.time()
        try:
            p.wait(timeout=max(1.0, left))
        except subprocess.TimeoutExpired:
            print(f"worker pid {p.pid} past the compile deadline: killed", flush=True)
            p.kill()
            p.wait()
    recs = []
    for i in range(nw):
        try:
            with open(f"/tmp/rank_w{i}.jsonl") as f:
                recs += [json.loads(line) for line in f if line.strip()]
        except FileNotFoundError:
            pass
    seen = {r["config"] for r in recs}
    for c in space():
        if (cfgs_sel is None or name(c) in cfgs_sel) and name(c) not in seen:
            recs.append(dict(config=name(c), block_m=c["BLOCK_M"], block_n=c["BLOCK_N"],
                             block_k=c["BLOCK_K"], stages=c["num_stages"], warps=c["num_warps"],
                             status="not_compiled", error="compile deadline"))
    order = {name(c): i for i, c in enumerate(space())}
    recs.sort(key=lambda r: order[r["config"]])
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for r in recs:
            if r.get("ttgir"):
                data = r["ttgir"].encode()
                ti = tarfile.TarInfo(f"ttgir/gemm_{r['config']}_g1.ttgir")
                ti.size = len(data)
                tar.addfile(ti, io.BytesIO(data))
    with open(os.path.join(out, "ttgir.tgz"), "wb") as f:
        f.write(buf.getvalue())
    with open(os.path.join(out, "rank_compile.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=COMPILE_COLS)
        w.writeheader()
        for r in recs:
            w.writerow({k: r.get(k, "") for k in COMPILE_COLS})
    ok = [r for r in recs if r.get("status") == "ok"]
    print(f"compiled {len(ok)} ok, {len(recs) - len(ok)} not, in {time.time() - t_begin:.0f} s",
          flush=True)

    import torch
    import triton
    sys.path.insert(0, here)
    import triton_kernels as tk
    import gemm_suite as gs  # its NVML Sampler
    meta = dict(torch=torch.__version__, triton=triton.__version__, cuda=torch.version.cuda,
                gpu=torch.cuda.get_device_name(0), props=str(torch.cuda.get_device_properties(0)),
                warmup_ms=warmup_ms, rep_ms=rep_ms, workers=nw, shapes=shapes,
                date_utc=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    with open(os.path.join(out, "rank_meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    flush = torch.empty(256 * 2**20, dtype=torch.uint8, device="cuda")

    def time_queued(fn, reps):
        for _ in range(3):
            fn()
        ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(reps)]
        for s_, e_ in ev:
            torch.cuda._sleep(100_000)
            flush.zero_()
            s_.record()
            fn()
            e_.record()
        torch.cuda.synchronize()
        us = sorted(s_.elapsed_time(e_) for s_, e_ in ev)
        pick = lambda f: us[min(len(us) - 1, int(f * len(us)))]  # noqa: E731
        return [statistics.median(us), us[0], pick(0.2), pick(0.8)]

    cfgs = {name(c): c for c in space()}
    valid = [cfgs[r["config"]] for r in ok]
    fh = open(os.path.join(out, "rank_space_queued.csv" if queued_reps else "rank_space.csv"), "w",
              newline="")
    w = csv.DictWriter(fh, fieldnames=COLS)
    w.writeheader()
    best = {}

    def point(cat, a, b, ref, c, pass_no, oi):
        M, K = a.shape
        N = b.shape[0]
        launch, cc, _ = tk.make_gemm_launch_on(a, b, c)
        launch()
        torch.cuda.synchronize()
        out_ = cc.float()
        err = float("inf") if torch.isnan(out_).any() else (
            (out_ - ref).norm() / ref.norm()).item()
        with gs.Sampler() as smp:
            if queued_reps:
                q = time_queued(launch, queued_reps)
            else:
                q = triton.testing.do_bench(launch, warmup=warmup_ms, rep=rep_ms,
                                            quantiles=[0.5, 0.0, 0.2, 0.8])
        row = dict(category=cat, M=M, N=N, K=K, config=name(c), block_m=c["BLOCK_M"],
                   block_n=c["BLOCK_N"], block_k=c["BLOCK_K"], stages=c["num_stages"],
                   warps=c["num_warps"], grid=tk.gemm_grid(M, N, c)[0],
                   dobench_us=round(q[0] * 1000, 3), dobench_min_us=round(q[1] * 1000, 3),
                   dobench_p20_us=round(q[2] * 1000, 3), dobench_p80_us=round(q[3] * 1000, 3),
                   rel_err=f"{err:.2e}", pass_no=pass_no, order_index=oi,
                   t_unix=round(time.time(), 3))
        row.update({k: v for k, v in smp.stats().items() if k in SAMPLER_COLUMNS})
        w.writerow(row)
        fh.flush()
        del cc
        return row

    def inputs(M, N, K):
        a, b = tk.seeded_operands(M, N, K)
        return a, b, a.float() @ b.float().T

    rest_reserve = 0.06 * budget
    for si, (cat, (M, N, K)) in enumerate(shapes):
        if time.time() - t_begin > budget - rest_reserve:
            print(f"budget: skipping {cat} {M}x{N}x{K}", flush=True)
            continue
        a, b, ref = inputs(M, N, K)
        seq = list(valid)
        random.Random(1000 + si).shuffle(seq)
        ts = time.time()
        rows = []
        for oi, c in enumerate(seq):
            if time.time() - t_begin > budget - rest_reserve:
                print(f"budget: stopped {cat} {M}x{N}x{K} at {oi}", flush=True)
                break
            try:
                rows.append(point(cat, a, b, ref, c, 1, oi))
            except Exception as e:
                print(f"FAILED {M}x{N}x{K} {name(c)}: {type(e).__name__}: {e}", flush=True)
        rows.sort(key=lambda r: r["dobench_us"])
        best[(cat, M, N, K)] = [r["config"] for r in rows[:5]]
        if rows:
            r0 = rows[0]
            print(f"{cat:9s} {M}x{N}x{K}: {len(rows)} configs in {time.time() - ts:.1f} s, best "
                  f"{r0['config']} {r0['dobench_us']} us ({r0['nvml_sm_mhz_med']} MHz), worst "
                  f"{rows[-1]['config']} {rows[-1]['dobench_us']} us", flush=True)
        del a, b, ref
        torch.cuda.empty_cache()
    # repeat pass: each shape's five fastest, again
    for si, (cat, (M, N, K)) in enumerate(shapes):
        if (cat, M, N, K) not in best or time.time() - t_begin > budget:
            continue
        a, b, ref = inputs(M, N, K)
        for oi, cn in enumerate(best[(cat, M, N, K)]):
            if time.time() - t_begin > budget:
                break
            point(cat, a, b, ref, cfgs[cn], 2, oi)
        del a, b, ref
        torch.cuda.empty_cache()
    fh.close()
    print(f"done in {time.time() - t_begin:.0f} s", flush=True)


def main():
    if sys.argv[1] == "worker":
        sel = None if sys.argv[4] == "all" else set(sys.argv[4].split(","))
        worker(int(sys.argv[2]), int(sys.argv[3]), sel, sys.argv[5])
        return
    if sys.argv[1] not in ("run", "queued"):
        sys.exit(__doc__)
    out = sys.argv[2]
    args = sys.argv[3:]
    opt = dict(zip(args[::2], args[1::2]))
    if sys.argv[1] == "queued":
        run(out, QUEUED_SHAPES, None, float(opt.get("--budget", "120")), 0, 0,
            int(opt.get("--reps", "60")))
        return
    shapes = QUICK_SHAPES if opt.get("--shapes") == "quick" else SHAPES
    cfgs = QUICK_CFGS if opt.get("--configs") == "quick" else None
    run(out, shapes, cfgs, float(opt.get("--budget", "300")), float(opt.get("--warmup", "10")),
        float(opt.get("--rep", "40")))


if __name__ == "__main__":
    main()
