"""Issue 10's attention set and softmax microbenchmarks on the H200.

Run on the device machine (tools/device/run_issue10.sh does):
  python3 attention_suite.py micro OUTDIR     softmax / register-arithmetic microbenchmarks
  python3 attention_suite.py suite OUTDIR     Triton TMA attention (3 tile configs) and cuDNN SDPA
  python3 attention_suite.py variants OUTDIR  the attention loop with one stage left out
  python3 attention_suite.py ncu OUTDIR SPEC... one launch per point, for ncu (tools/device/run_issue10.sh)
  python3 attention_suite.py list             the shapes, no GPU

Every compiled Triton kernel's TTGIR goes to OUTDIR/ttgir/<name>.ttgir (and its SASS beside it);
each CSV row names the file its kernel came from.

micro: `softmax_micro` loads a Q and a K tile by TMA, makes the BLOCK_M x BLOCK_N fp32 tile
S = Q K^T with one tl.dot (so S has the WGMMA accumulator layout, as in attention), then runs
ITERS iterations of one MODE on S, S carried from one iteration to the next so nothing is
hoisted: `empty` (the loop alone), `mulf`, `addf`, `fma` (x * c + d), `exp2`, `maxred`
(x - rowmax(x)), `sumred` (x * rowsum(x)), `trunc` (x.to(f16).to(f32)), `select` (where(x > c,
x, d)), and `softmax` (the attention loop's online softmax with the dots left out: the row max,
exp2, row sum, the rescale of the BLOCK_M x HEAD_DIM accumulator, P to f16, S taken from P).
Each op is applied REPEAT times an iteration. Cycles per iteration = clock64 span / ITERS, one
CTA (1 SM), median over reps, with num_warps 4 (one WarpGroup) and 8 (two).

suite: `attn_fwd` is Triton's tutorial forward attention with host TMA descriptors (the kernel
of validation/h200/attention_triton.csv, tools/device/triton_kernels.py), extended with GQA
(KV head = Q head // GROUP) and causal masking the way the tutorial does it (the blocks left of
the diagonal unmasked, the diagonal block masked). cuDNN: torch SDPA with the CUDNN_ATTENTION
backend only (enable_gqa for GQA); the kernel name is taken from one profiled launch. Timing:
cold L2 (256 MiB written before each launch), CUDA events, median of REPS; NVML SM clock and
power sampled during each point. Correctness: against torch's math SDPA in fp32 on the same
inputs (rel_err). Never changes clocks or GPU settings.
"""
import csv
import os
import statistics
import sys
import time
import traceback

# (Z, HQ, HKV, L, D): Llama-3 8B and 70B GQA at batch 1, MHA with D = 64 and 128, batch > 1.
SHAPES = [
    (1, 32, 8, 512, 128), (1, 32, 8, 1024, 128), (1, 32, 8, 2048, 128), (1, 32, 8, 4096, 128),
    (1, 32, 8, 8192, 128), (1, 32, 8, 16384, 128),
    (1, 64, 8, 1024, 128), (1, 64, 8, 4096, 128), (1, 64, 8, 16384, 128),
    (4, 16, 16, 1024, 64), (4, 16, 16, 4096, 64), (1, 32, 32, 8192, 64),
    (8, 32, 8, 2048, 128), (4, 32, 32, 1024, 128), (2, 32, 32, 4096, 64),
]
CFGS = [dict(BLOCK_M=128, BLOCK_N=64, num_warps=8, num_stages=3),
        dict(BLOCK_M=128, BLOCK_N=128, num_warps=8, num_stages=2),
        dict(BLOCK_M=128, BLOCK_N=64, num_warps=4, num_stages=3)]
MICRO_MODES = ["empty", "mulf", "addf", "fma", "exp2", "maxred", "sumred", "trunc", "select",
               "softmax"]
MICRO_TILES = [dict(BLOCK_M=64, BLOCK_N=64, num_warps=4), dict(BLOCK_M=128, BLOCK_N=64, num_warps=8),
               dict(BLOCK_M=128, BLOCK_N=128, num_warps=8), dict(BLOCK_M=128, BLOCK_N=64, num_warps=4)]
MICRO_ITERS = 1024
MICRO_REPEAT = 8
REPS = 20

if len(sys.argv) > 1 and sys.argv[1] == "list":
    for s in SHAPES:
        print("Z=%d HQ=%d HKV=%d L=%d D=%d" % s)
    print(len(SHAPES), "shapes x 2 (causal) x", len(CFGS), "Triton configs + cuDNN")
    sys.exit(0)

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton.tools.tensor_descriptor import TensorDescriptor  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gemm_suite as gs  # noqa: E402  (Sampler, time_cold, rel_err)


@triton.jit
def _clock64():
    return tl.inline_asm_elementwise("mov.u64 $0, %clock64;", "=l", [], dtype=tl.int64,
                                     is_pure=False, pack=1)


@triton.jit
def _softmax_step(qk, m_i, l_i, acc, qk_scale):
    m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
    p = tl.math.exp2(qk * qk_scale - m_ij[:, None])
    alpha = tl.math.exp2(m_i - m_ij)
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = acc * alpha[:, None]
    return p, m_ij, l_i, acc


@triton.jit
def attn_fwd(desc_q, desc_k, desc_v, desc_o, sm_scale, N_CTX, GROUP,
             HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
             HQ, CAUSAL: tl.constexpr):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // HQ
    off_kv = off_z * (HQ // GROUP) + (off_hz % HQ) // GROUP
    q_row = off_hz * N_CTX + start_m * BLOCK_M
    kv_row = off_kv * N_CTX
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504  # log2(e): exp2 below
    q = desc_q.load([q_row, 0])
    hi = (start_m * BLOCK_M) if CAUSAL else N_CTX
    for start_n in range(0, hi, BLOCK_N):
        k = desc_k.load([kv_row + start_n, 0])
        qk = tl.dot(q, k.T)
        p, m_i, l_i, acc = _softmax_step(qk, m_i, l_i, acc, qk_scale)
        v = desc_v.load([kv_row + start_n, 0])
        acc = tl.dot(p.to(tl.float16), v, acc)
    if CAUSAL:  # the diagonal blocks, masked
        offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
        for start_n in range(start_m * BLOCK_M, (start_m + 1) * BLOCK_M, BLOCK_N):
            k = desc_k.load([kv_row + start_n, 0])
            qk = tl.dot(q, k.T)
            offs_n = start_n + tl.arange(0, BLOCK_N)
            qk = tl.where(offs_m[:, None] >= offs_n[None, :], qk, -1.0e6)
            p, m_i, l_i, acc = _softmax_step(qk, m_i, l_i, acc, qk_scale)
            v = desc_v.load([kv_row + start_n, 0])
            acc = tl.dot(p.to(tl.float16), v, acc)
    acc = acc / l_i[:, None]
    desc_o.store([q_row, 0], acc.to(tl.float16))


@triton.jit
def attn_variant(desc_q, desc_k, desc_v, desc_o, sm_scale, N_CTX,
                 HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                 MODE: tl.constexpr):
    """attn_fwd (MHA, non-causal) with one stage left out, to place the time inside the loop:
    `full`; `nosoftmax` (P = S: no max, exp2, sum or rescale); `noexp` (the softmax without its
    exp2); `nopv` (no P x V dot: the softmax's P summed into the accumulator's first columns
    instead)."""
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    q_row = off_hz * N_CTX + start_m * BLOCK_M
    kv_row = off_hz * N_CTX
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    q = desc_q.load([q_row, 0])
    for start_n in range(0, N_CTX, BLOCK_N):
        k = desc_k.load([kv_row + start_n, 0])
        qk = tl.dot(q, k.T)
        if MODE == "nosoftmax":
            p = qk
        elif MODE == "noexp":
            m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            p = qk * qk_scale - m_ij[:, None]
            alpha = m_i - m_ij
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None]
            m_i = m_ij
        else:
            p, m_i, l_i, acc = _softmax_step(qk, m_i, l_i, acc, qk_scale)
        if MODE == "nopv":
            l_i += tl.sum(p, 1)
        else:
            v = desc_v.load([kv_row + start_n, 0])
            acc = tl.dot(p.to(tl.float16), v, acc)
    acc = acc / l_i[:, None]
    desc_o.store([q_row, 0], acc.to(tl.float16))


def variants(outdir):
    """attn_variant's four modes on two shapes and two tile configs, cold L2, CUDA events."""
    gs.FLUSH = torch.empty(256 * 1024 * 1024 // 4, device="cuda", dtype=torch.float32)
    rows = []
    for (Z, H, L, D) in [(1, 32, 4096, 128), (1, 32, 16384, 128), (4, 32, 1024, 128)]:
        q, k, v = make_inputs(Z, H, H, L, D, seed=L)
        o = torch.empty_like(q)
        for cfg in (CFGS[0], CFGS[2]):
            bm, bn = cfg["BLOCK_M"], cfg["BLOCK_N"]
            dq = TensorDescriptor.from_tensor(q.view(-1, D), [bm, D])
            dk = TensorDescriptor.from_tensor(k.view(-1, D), [bn, D])
            dv = TensorDescriptor.from_tensor(v.view(-1, D), [bn, D])
            do = TensorDescriptor.from_tensor(o.view(-1, D), [bm, D])
            grid = (triton.cdiv(L, bm), Z * H)
            for mode in ("full", "nosoftmax", "noexp", "nopv"):
                def launch():
                    return attn_variant[grid](dq, dk, dv, do, 1.0 / D ** 0.5, L, HEAD_DIM=D,
                                              BLOCK_M=bm, BLOCK_N=bn, MODE=mode,
                                              num_warps=cfg["num_warps"],
                                              num_stages=cfg["num_stages"])
                try:
                    kern = launch()
                    torch.cuda.synchronize()
                    name = save_ir(kern, "attn_variant_%s_%dx%d_w%d_s%d" % (
                        mode, bm, bn, cfg["num_warps"], cfg["num_stages"]), outdir)
                    with gs.Sampler() as smp:
                        med, mn = gs.time_cold(launch, REPS)
                    st = smp.stats()
                    rows.append(dict(mode=mode, Z=Z, H=H, L=L, D=D, block_m=bm, block_n=bn,
                                     warps=cfg["num_warps"], stages=cfg["num_stages"],
                                     grid="%dx%d" % grid, event_us=round(med, 3),
                                     event_us_min=round(mn, 3),
                                     nvml_sm_mhz_med=st["nvml_sm_mhz_med"], ttgir=name))
                    print("variant", mode, Z, H, L, D, bm, bn, cfg["num_warps"], med, "us",
                          st["nvml_sm_mhz_med"], "MHz", flush=True)
                except Exception:
                    traceback.print_exc()
        del q, k, v, o
        torch.cuda.empty_cache()
    with open(os.path.join(outdir, "attention_variants.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)


@triton.jit
def _micro_start(desc_q, desc_k, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr):
    # The softmax microbenchmarks' tile (one QK^T) and the online softmax's state before step 0.
    q = desc_q.load([0, 0])
    k = desc_k.load([0, 0])
    x = tl.dot(q, k.T)
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    return x, m_i, l_i, acc


@triton.jit
def softmax_micro(desc_q, desc_k, desc_o, T, ITERS, c, d,
                  HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  MODE: tl.constexpr, REPEAT: tl.constexpr):
    x, m_i, l_i, acc = _micro_start(desc_q, desc_k, HEAD_DIM, BLOCK_M)
    t0 = _clock64()
    for i in range(ITERS):
        if MODE == "softmax":
            p, m_i, l_i, acc = _softmax_step(x, m_i, l_i, acc, c)
            x = p.to(tl.float16).to(tl.float32)
        else:
            for r in tl.static_range(REPEAT):
                if MODE == "mulf":
                    x = x * c
                elif MODE == "addf":
                    x = x + c
                elif MODE == "fma":
                    x = x * c + d
                elif MODE == "exp2":
                    x = tl.math.exp2(-x)
                elif MODE == "maxred":
                    x = x - tl.max(x, 1)[:, None]
                elif MODE == "sumred":
                    x = x * tl.sum(x, 1)[:, None]
                elif MODE == "trunc":
                    x = x.to(tl.float16).to(tl.float32)
                elif MODE == "select":
                    x = tl.where(x > c, x, d)
    t1 = _clock64()
    out = acc + tl.sum(x, 1)[:, None] + l_i[:, None]
    desc_o.store([0, 0], out.to(tl.float16))
    tl.store(T + 0, t0)
    tl.store(T + 1, t1)


def save_ir(kernel, name, outdir):
    d = os.path.join(outdir, "ttgir")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, name + ".ttgir")
    if not os.path.exists(path):
        with open(path, "w") as fh:
            fh.write(kernel.asm["ttgir"])
        try:
            with open(os.path.join(d, name + ".sass"), "w") as fh:
                fh.write(kernel.asm["sass"])
        except Exception as e:  # SASS needs cuobjdump: keep going without it
            print("no sass for", name, e)
        meta = getattr(kernel, "metadata", None)
        with open(os.path.join(d, name + ".meta.txt"), "w") as fh:
            fh.write(f"n_regs {getattr(kernel, 'n_regs', '?')} n_spills "
                     f"{getattr(kernel, 'n_spills', '?')} shared {getattr(meta, 'shared', '?')}\n")
    return os.path.basename(path)


def micro(outdir):
    rows = []
    D = 128
    q = torch.randn((128, D), device="cuda", dtype=torch.float16) * 0.1
    k = torch.randn((128, D), device="cuda", dtype=torch.float16) * 0.1
    o = torch.empty((128, D), device="cuda", dtype=torch.float16)
    T = torch.zeros(2, device="cuda", dtype=torch.int64)
    for tile in MICRO_TILES:
        bm, bn, nw = tile["BLOCK_M"], tile["BLOCK_N"], tile["num_warps"]
        dq = TensorDescriptor.from_tensor(q, [bm, D])
        dk = TensorDescriptor.from_tensor(k, [bn, D])
        do = TensorDescriptor.from_tensor(o, [bm, D])
        for mode in MICRO_MODES:
            name = f"softmax_micro_{mode}_{bm}x{bn}_w{nw}"
            try:
                cyc = []
                kern = None
                for rep in range(6):
                    kern = softmax_micro[(1,)](dq, dk, do, T, MICRO_ITERS, 0.5, 0.25, HEAD_DIM=D,
                                               BLOCK_M=bm, BLOCK_N=bn, MODE=mode,
                                               REPEAT=MICRO_REPEAT, num_warps=nw, num_stages=1)
                    torch.cuda.synchronize()
                    t = T.cpu()
                    if rep:
                        cyc.append(int(t[1] - t[0]))
                ttgir = save_ir(kern, name, outdir)
                rows.append(dict(mode=mode, block_m=bm, block_n=bn, head_dim=D, warps=nw,
                                 iters=MICRO_ITERS, repeat=MICRO_REPEAT if mode != "softmax" else 1,
                                 cycles_med=statistics.median(cyc), cycles_min=min(cyc),
                                 cycles_max=max(cyc),
                                 cycles_per_iter=round(statistics.median(cyc) / MICRO_ITERS, 2),
                                 n_regs=getattr(kern, "n_regs", ""),
                                 n_spills=getattr(kern, "n_spills", ""), ttgir=ttgir))
                print(name, rows[-1]["cycles_per_iter"], "cycles/iter", flush=True)
            except Exception:
                traceback.print_exc()
                rows.append(dict(mode=mode, block_m=bm, block_n=bn, head_dim=D, warps=nw,
                                 iters=MICRO_ITERS, repeat=MICRO_REPEAT, cycles_med="failed"))
    path = os.path.join(outdir, "softmax_micro.csv")
    cols = ["mode", "block_m", "block_n", "head_dim", "warps", "iters", "repeat", "cycles_med",
            "cycles_min", "cycles_max", "cycles_per_iter", "n_regs", "n_spills", "ttgir"]
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=cols)
        w.writeheader()
        w.writerows(rows)


def make_inputs(Z, HQ, HKV, L, D, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    q = torch.randn((Z, HQ, L, D), device="cuda", dtype=torch.float16, generator=g)
    k = torch.randn((Z, HKV, L, D), device="cuda", dtype=torch.float16, generator=g)
    v = torch.randn((Z, HKV, L, D), device="cuda", dtype=torch.float16, generator=g)
    return q, k, v


def reference(q, k, v, causal):
    # fp32 math SDPA on at most 4 query heads (and their KV heads): enough to check every tile
    # config's indexing, small enough for 16K.
    HQ, HKV = q.shape[1], k.shape[1]
    heads = list(range(min(HQ, 4)))
    qs = q[:1, heads].float()
    ks = k[:1, [h // (HQ // HKV) for h in heads]].float()
    vs = v[:1, [h // (HQ // HKV) for h in heads]].float()
    ref = torch.nn.functional.scaled_dot_product_attention(qs, ks, vs, is_causal=bool(causal))
    return heads, ref


def triton_launch(q, k, v, cfg, causal):
    Z, HQ, L, D = q.shape
    HKV = k.shape[1]
    bm, bn = cfg["BLOCK_M"], cfg["BLOCK_N"]
    o = torch.full_like(q, float("nan"))
    dq = TensorDescriptor.from_tensor(q.view(-1, D), [bm, D])
    dk = TensorDescriptor.from_tensor(k.view(-1, D), [bn, D])
    dv = TensorDescriptor.from_tensor(v.view(-1, D), [bn, D])
    do = TensorDescriptor.from_tensor(o.view(-1, D), [bm, D])
    grid = (triton.cdiv(L, bm), Z * HQ)
    holder = {}

    def launch():
        holder["k"] = attn_fwd[grid](dq, dk, dv, do, 1.0 / D ** 0.5, L, HQ // HKV, HEAD_DIM=D,
                                     BLOCK_M=bm, BLOCK_N=bn, HQ=HQ, CAUSAL=bool(causal),
                                     num_warps=cfg["num_warps"], num_stages=cfg["num_stages"])

    return launch, o, grid, holder


def cudnn_launch(q, k, v, causal, expand_kv=False):
    """cuDNN's SDPA; with expand_kv, GQA's K and V repeated to every query head first (MHA)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    group = q.shape[1] // k.shape[1]
    if expand_kv:
        k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
    holder = {}

    def launch():
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            holder["o"] = torch.nn.functional.scaled_dot_product_attention(
                q, k, v, is_causal=bool(causal), enable_gqa=group > 1 and not expand_kv)

    return launch, holder


def kernel_names(fn):
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return ";".join(sorted({e.key for e in prof.key_averages() if e.device_type.name == "CUDA"}))


def check(o, heads, ref):
    return gs.rel_err(o[:1, heads], ref)


def suite(outdir):
    gs.FLUSH = torch.empty(256 * 1024 * 1024 // 4, device="cuda", dtype=torch.float32)
    cols = ["impl", "Z", "HQ", "HKV", "L", "D", "causal", "block_m", "block_n", "warps", "stages",
            "grid", "event_us", "event_us_min", "tflops", "reps", "rel_err", "nvml_sm_mhz_med",
            "nvml_sm_mhz_min", "nvml_sm_mhz_max", "power_w_max", "nvml_samples", "kernel",
            "ttgir", "n_regs", "n_spills"]
    path = os.path.join(outdir, "attention_suite.csv")
    fh = open(path, "w", newline="")
    w = csv.DictWriter(fh, fieldnames=cols)
    w.writeheader()
    t_begin = time.time()
    for si, (Z, HQ, HKV, L, D) in enumerate(SHAPES):
        q, k, v = make_inputs(Z, HQ, HKV, L, D, seed=si)
        for causal in (0, 1):
            heads, ref = reference(q, k, v, causal)
            flops = 4.0 * Z * HQ * L * L * D * (0.5 if causal else 1.0)
            base = dict(Z=Z, HQ=HQ, HKV=HKV, L=L, D=D, causal=causal)
            impls = [("triton", cfg) for cfg in CFGS] + [("cudnn", None)]
            for impl, cfg in impls:
                row = dict(base, impl=impl)
                try:
                    if impl == "triton":
                        launch, o, grid, holder = triton_launch(q, k, v, cfg, causal)
                        row.update(block_m=cfg["BLOCK_M"], block_n=cfg["BLOCK_N"],
                                   warps=cfg["num_warps"], stages=cfg["num_stages"],
                                   grid="%dx%d" % grid)
                        launch()
                        torch.cuda.synchronize()
                        row["rel_err"] = check(o, heads, ref)
                        kern = holder["k"]
                        row["ttgir"] = save_ir(kern, "attn_fwd_%dx%d_w%d_s%d_d%d_c%d_g%d" % (
                            cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["num_warps"], cfg["num_stages"],
                            D, causal, int(HQ != HKV)), outdir)
                        row["n_regs"] = getattr(kern, "n_regs", "")
                        row["n_spills"] = getattr(kern, "n_spills", "")
                        row["kernel"] = "attn_fwd"
                    else:
                        launch, holder = cudnn_launch(q, k, v, causal)
                        expanded = ""
                        try:
                            launch()
                            torch.cuda.synchronize()
                        except RuntimeError:  # no native GQA in this cuDNN: K, V expanded
                            launch, holder = cudnn_launch(q, k, v, causal, expand_kv=True)
                            launch()
                            torch.cuda.synchronize()
                            expanded = " (kv expanded)"
                        row["rel_err"] = check(holder["o"], heads, ref)
                        row["kernel"] = kernel_names(launch) + expanded
                    time.sleep(0.1)
                    with gs.Sampler() as smp:
                        med, mn = gs.time_cold(launch, REPS)
                    row.update(event_us=round(med, 3), event_us_min=round(mn, 3), reps=REPS,
                               tflops=round(flops / med / 1e6, 1))
                    st = smp.stats()
                    row.update(nvml_sm_mhz_med=st["nvml_sm_mhz_med"],
                               nvml_sm_mhz_min=st["nvml_sm_mhz_min"],
                               nvml_sm_mhz_max=st["nvml_sm_mhz_max"],
                               power_w_max=st["power_w_max"], nvml_samples=st["nvml_samples"])
                except Exception as e:
                    traceback.print_exc()
                    row["event_us"] = "failed: " + str(e).splitlines()[0][:120] if str(e) else "failed"
                w.writerow(row)
                fh.flush()
                print(impl, "Z%d HQ%d HKV%d L%d D%d c%d" % (Z, HQ, HKV, L, D, causal),
                      row.get("block_m", ""), row.get("block_n", ""), row.get("warps", ""),
                      row.get("event_us"), "us", row.get("tflops"), "TF/s",
                      "err %.1e" % row["rel_err"] if "rel_err" in row else "",
                      f"[{time.time() - t_begin:.0f} s]", flush=True)
        del q, k, v
        torch.cuda.empty_cache()
    fh.close()


def write_rows(path, rows):
    """The launches of an ncu step, one row each, in ncu's order."""
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)


def ncu_points(outdir, specs):
    """One launch per point for Nsight Compute (no timing, no reference check), in order; the
    points go to OUTDIR/ncu_points.csv. A spec is IMPL:Z,HQ,HKV,L,D,CAUSAL with IMPL `cudnn` or
    `triton` (the 128x64, 8-warp, 3-stage config), or cudnn:Z,HQ,HKV,LQ,LK,D,CAUSAL (cuDNN with
    seqlen_q LQ and seqlen_k LK; the rows' L is LQ). NCU_REPEAT=N launches each point N times."""
    rows = []
    repeat = int(os.environ.get("NCU_REPEAT", "1"))
    for spec in specs:
        impl, shape = spec.split(":")
        fields = [int(x) for x in shape.split(",")]
        if len(fields) == 7:
            Z, HQ, HKV, L, LK, D, causal = fields
            q, _, _ = make_inputs(Z, HQ, HKV, L, D, seed=L)
            _, k, v = make_inputs(Z, HQ, HKV, LK, D, seed=LK + 1)
        else:
            Z, HQ, HKV, L, D, causal = fields
            LK = L
            q, k, v = make_inputs(Z, HQ, HKV, L, D, seed=L)
        if impl == "triton":
            launch, o, grid, _ = triton_launch(q, k, v, CFGS[0], causal)
        else:
            launch, holder = cudnn_launch(q, k, v, causal)
        for rep in range(repeat):
            launch()
            torch.cuda.synchronize()
            rows.append(dict(order=len(rows), impl=impl, Z=Z, HQ=HQ, HKV=HKV, L=L, LK=LK, D=D,
                             causal=causal, rep=rep))
        print("ncu point", spec, flush=True)
        del q, k, v
        torch.cuda.empty_cache()
    write_rows(os.path.join(outdir, "ncu_points.csv"), rows)


def clock_points(outdir, reps):
    """Every point of the suite, in its order, launched REPS times with nothing else on the GPU,
    for Nsight Compute to give each launch's SM clock and duration (no timing here: the event
    times are the suite's). The launches go to OUTDIR/clock_points.csv, in ncu's order."""
    rows = []
    for si, (Z, HQ, HKV, L, D) in enumerate(SHAPES):
        q, k, v = make_inputs(Z, HQ, HKV, L, D, seed=si)
        for causal in (0, 1):
            for cfg in CFGS + [None]:
                if cfg is None:
                    launch, _ = cudnn_launch(q, k, v, causal)
                    tile = dict(impl="cudnn", block_m="", block_n="", warps="", stages="")
                else:
                    launch, _, _, _ = triton_launch(q, k, v, cfg, causal)
                    tile = dict(impl="triton", block_m=cfg["BLOCK_M"], block_n=cfg["BLOCK_N"],
                                warps=cfg["num_warps"], stages=cfg["num_stages"])
                for rep in range(reps):
                    launch()
                    torch.cuda.synchronize()
                    rows.append(dict(order=len(rows), **tile, Z=Z, HQ=HQ, HKV=HKV, L=L, D=D,
                                     causal=causal, rep=rep))
                print("clock point", tile["impl"], Z, HQ, HKV, L, D, causal, tile["block_n"],
                      tile["warps"], flush=True)
        del q, k, v
        torch.cuda.empty_cache()
    write_rows(os.path.join(outdir, "clock_points.csv"), rows)


def main():
    cmd, outdir = sys.argv[1], sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    if cmd == "micro":
        micro(outdir)
    elif cmd == "suite":
        suite(outdir)
    elif cmd == "variants":
        variants(outdir)
    elif cmd == "ncu":
        ncu_points(outdir, sys.argv[3:])
    elif cmd == "clocks":
        clock_points(outdir, int(sys.argv[3]) if len(sys.argv) > 3 else 2)
    else:
        sys.exit("usage: attention_suite.py micro OUT | suite OUT | variants OUT | ncu OUT SPEC... "
                 "| clocks OUT [REPS] | list")


if __name__ == "__main__":
    main()
