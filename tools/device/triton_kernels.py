"""Triton TMA kernels measured on the H200 for simfa issue 7 (and their launchers).

Kept in one module so that the benchmark (triton_bench.py) and the Proton trace driver
(triton_trace.py) compile byte-identical kernel sources: Triton's dump/override directory
hash depends on the kernel source, its constexprs and its specialization.

gemm_tma_kernel: C[M,N] = A[M,K] @ B[N,K]^T, fp16 in, fp32 accumulate, fp16 out, host-side
  tensor descriptors (TMA loads and TMA store), one output tile per program, grouped
  ordering (GROUP_M=8), plain `for` K-loop software-pipelined by num_stages (no warp
  specialization). Measured config: 128x128x64, 3 stages, 4 warps.
gemm_tma_timed_kernel: the same body plus %clock64/%globaltimer/%smid reads at program start
  and end (per-CTA cycles; effective SM clock). Only for clocks, never for the TTGIR fixture.
attn_fwd_tma: forward attention (non-causal), head_dim 128, fp16, Q/K/V/O through host-side
  tensor descriptors over the [Z*H*N_CTX, HEAD_DIM] views, online softmax in fp32.
"""
import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

GEMM_CFG = dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, num_warps=4, num_stages=3)


@triton.jit
def gemm_tma_kernel(a_desc, b_desc, c_desc, M, N, K,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                    GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = tl.minimum(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + (pid % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_m = pid_m * BLOCK_M
    offs_n = pid_n * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = a_desc.load([offs_m, k * BLOCK_K])
        b = b_desc.load([offs_n, k * BLOCK_K])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([offs_m, offs_n], acc.to(tl.float16))


@triton.jit
def _clock64():
    return tl.inline_asm_elementwise("mov.u64 $0, %clock64;", "=l", [], dtype=tl.int64,
                                     is_pure=False, pack=1)


@triton.jit
def _globaltimer():
    return tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64,
                                     is_pure=False, pack=1)


@triton.jit
def _smid():
    return tl.inline_asm_elementwise("mov.u32 $0, %smid;", "=r", [], dtype=tl.int32,
                                     is_pure=False, pack=1)


@triton.jit
def suite_tile(pid, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    """gemm_tma_kernel's tile of program `pid` (Triton's grouped order), for its stamped twins:
    (offs_m, offs_n). The suite kernels keep their own copy, so that their TTGIR stays the one
    validation/h200/ttgir/ holds."""
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = tl.minimum(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + (pid % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    return pid_m * BLOCK_M, pid_n * BLOCK_N


def median_cold_launch(launch, T, flush, reps, first, last):
    """`reps` cold-L2 launches (100 us of sleep, then `flush` zeroed: a write through the L2), each
    stamping its CTAs into T; returns (span, T's copy) of the launch whose span,
    T[:, last].max() - T[:, first].min(), is the median, and the sorted spans."""
    runs = []
    for _ in range(reps):
        torch.cuda._sleep(100_000)
        flush.zero_()
        launch()
        torch.cuda.synchronize()
        t = T.cpu()
        runs.append(((t[:, last].max() - t[:, first].min()).item(), t.clone()))
    runs.sort(key=lambda r: r[0])
    span, t = runs[len(runs) // 2]
    return span, t, [r[0] for r in runs]


@triton.jit
def gemm_tma_timed_kernel(a_desc, b_desc, c_desc, M, N, K, T,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                          GROUP_M: tl.constexpr):
    c0 = _clock64()
    g0 = _globaltimer()
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = tl.minimum(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + (pid % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_m = pid_m * BLOCK_M
    offs_n = pid_n * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = a_desc.load([offs_m, k * BLOCK_K])
        b = b_desc.load([offs_n, k * BLOCK_K])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([offs_m, offs_n], acc.to(tl.float16))
    c1 = _clock64()
    g1 = _globaltimer()
    sm = _smid()
    base = T + pid.to(tl.int64) * 5
    tl.store(base + 0, c0)
    tl.store(base + 1, c1)
    tl.store(base + 2, g0)
    tl.store(base + 3, g1)
    tl.store(base + 4, sm.to(tl.int64))


def gemm_descs(a, b, c, cfg=GEMM_CFG):
    bm, bn, bk = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"]
    return (TensorDescriptor.from_tensor(a, [bm, bk]), TensorDescriptor.from_tensor(b, [bn, bk]),
            TensorDescriptor.from_tensor(c, [bm, bn]))


def gemm_grid(M, N, cfg=GEMM_CFG):
    return (triton.cdiv(M, cfg["BLOCK_M"]) * triton.cdiv(N, cfg["BLOCK_N"]), )


def make_gemm_launch(M, N, K, cfg=GEMM_CFG, timed=False, seed=0):
    """Returns (launch(), a, b, c, T) with fresh random fp16 inputs; B is [N, K] (K-major)."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn((M, K), device="cuda", dtype=torch.float16, generator=g)
    b = torch.randn((N, K), device="cuda", dtype=torch.float16, generator=g)
    c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)  # poisoned
    ad, bd, cd = gemm_descs(a, b, c, cfg)
    grid = gemm_grid(M, N, cfg)
    kw = dict(BLOCK_M=cfg["BLOCK_M"], BLOCK_N=cfg["BLOCK_N"], BLOCK_K=cfg["BLOCK_K"],
              GROUP_M=cfg["GROUP_M"], num_warps=cfg["num_warps"], num_stages=cfg["num_stages"])
    T = None
    if timed:
        T = torch.zeros((grid[0], 5), device="cuda", dtype=torch.int64)

        def launch():
            gemm_tma_timed_kernel[grid](ad, bd, cd, M, N, K, T, **kw)
    else:

        def launch():
            gemm_tma_kernel[grid](ad, bd, cd, M, N, K, **kw)

    return launch, a, b, c, T


ATTN_CFGS = [
    dict(BLOCK_M=128, BLOCK_N=64, num_warps=8, num_stages=3),
    dict(BLOCK_M=128, BLOCK_N=128, num_warps=8, num_stages=2),
]


@triton.jit
def attn_fwd_tma(desc_q, desc_k, desc_v, desc_o, sm_scale, N_CTX,
                 HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    row0 = off_hz * N_CTX
    q_row = row0 + start_m * BLOCK_M
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504  # log2(e): exp2 below
    q = desc_q.load([q_row, 0])
    for start_n in range(0, N_CTX, BLOCK_N):
        k = desc_k.load([row0 + start_n, 0])
        qk = tl.dot(q, k.T)
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        p = tl.math.exp2(qk * qk_scale - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = desc_v.load([row0 + start_n, 0])
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_ij
    acc = acc / l_i[:, None]
    desc_o.store([q_row, 0], acc.to(tl.float16))


def make_attn_launch(Z, H, N_CTX, D=128, cfg=ATTN_CFGS[0], seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    q = torch.randn((Z, H, N_CTX, D), device="cuda", dtype=torch.float16, generator=g)
    k = torch.randn((Z, H, N_CTX, D), device="cuda", dtype=torch.float16, generator=g)
    v = torch.randn((Z, H, N_CTX, D), device="cuda", dtype=torch.float16, generator=g)
    o = torch.full((Z, H, N_CTX, D), float("nan"), device="cuda", dtype=torch.float16)
    bm, bn = cfg["BLOCK_M"], cfg["BLOCK_N"]
    rows = Z * H * N_CTX
    dq = TensorDescriptor.from_tensor(q.view(rows, D), [bm, D])
    dk = TensorDescriptor.from_tensor(k.view(rows, D), [bn, D])
    dv = TensorDescriptor.from_tensor(v.view(rows, D), [bn, D])
    do = TensorDescriptor.from_tensor(o.view(rows, D), [bm, D])
    sm_scale = 1.0 / (D ** 0.5)
    grid = (triton.cdiv(N_CTX, bm), Z * H)

    def launch():
        attn_fwd_tma[grid](dq, dk, dv, do, sm_scale, N_CTX, HEAD_DIM=D, BLOCK_M=bm, BLOCK_N=bn,
                           num_warps=cfg["num_warps"], num_stages=cfg["num_stages"])

    return launch, q, k, v, o, sm_scale


# Issue 17's GEMM suite: the same two kernels (gemm_tma_kernel, gemm_tma_timed_kernel; their
# source above is unchanged, so the GROUP_M=8 dumps keep their bytes) run with GROUP_M=1, which
# reduces the grouped ordering to the row-major raster pid_m = pid // num_pid_n,
# pid_n = pid % num_pid_n (group_size_m = min(num_pid_m - pid_m, 1) = 1). GROUP_M is a
# constexpr, so the TTGIR of each config is its own dump.
SUITE_CFGS = [
    dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=1, num_warps=4, num_stages=3),
    dict(BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=1, num_warps=8, num_stages=3),
    dict(BLOCK_M=64, BLOCK_N=128, BLOCK_K=64, GROUP_M=1, num_warps=4, num_stages=4),
]


def cfg_name(cfg):
    return (f"bm{cfg['BLOCK_M']}_bn{cfg['BLOCK_N']}_bk{cfg['BLOCK_K']}_s{cfg['num_stages']}"
            f"_w{cfg['num_warps']}_g{cfg['GROUP_M']}")


def seeded_operands(M, N, K):
    """The GEMM suite's inputs of one shape, A [M,K] and B [N,K] fp16, drawn from a generator seeded
    by the shape, so that every probe of that shape multiplies the same matrices."""
    g = torch.Generator(device="cuda").manual_seed(M + 7 * N + 13 * K)
    a = torch.randn((M, K), device="cuda", dtype=torch.float16, generator=g)
    b = torch.randn((N, K), device="cuda", dtype=torch.float16, generator=g)
    return a, b


def make_gemm_launch_on(a, b, cfg, timed=False):
    """Like make_gemm_launch, on given inputs (A [M,K], B [N,K]); returns (launch, c, T)."""
    M, K = a.shape
    N = b.shape[0]
    c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)  # poisoned
    ad, bd, cd = gemm_descs(a, b, c, cfg)
    grid = gemm_grid(M, N, cfg)
    kw = dict(BLOCK_M=cfg["BLOCK_M"], BLOCK_N=cfg["BLOCK_N"], BLOCK_K=cfg["BLOCK_K"],
              GROUP_M=cfg["GROUP_M"], num_warps=cfg["num_warps"], num_stages=cfg["num_stages"])
    T = None
    if timed:
        T = torch.zeros((grid[0], 5), device="cuda", dtype=torch.int64)

        def launch():
            gemm_tma_timed_kernel[grid](ad, bd, cd, M, N, K, T, **kw)
    else:

        def launch():
            gemm_tma_kernel[grid](ad, bd, cd, M, N, K, **kw)

    return launch, c, T


def make_gemm_twin_with(a, b, cfg, c, T):
    """The timed twin on given inputs, output c and stamp buffer T ([grid, 5] int64)."""
    M, K = a.shape
    N = b.shape[0]
    ad, bd, cd = gemm_descs(a, b, c, cfg)
    grid = gemm_grid(M, N, cfg)
    kw = dict(BLOCK_M=cfg["BLOCK_M"], BLOCK_N=cfg["BLOCK_N"], BLOCK_K=cfg["BLOCK_K"],
              GROUP_M=cfg["GROUP_M"], num_warps=cfg["num_warps"], num_stages=cfg["num_stages"])

    def launch():
        gemm_tma_timed_kernel[grid](ad, bd, cd, M, N, K, T, **kw)

    return launch
