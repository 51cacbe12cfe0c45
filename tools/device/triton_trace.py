"""Proton instrumented traces of the Triton TMA kernels through an edited TTGIR (issue 7 recipe).

  python3 triton_trace.py OUTDIR [CASE ...]      CASE = gemm:M,N,K[:CFG] | attn:Z,H,N_CTX

CFG indexes triton_kernels.SUITE_CFGS (0: 128x128, 1: 128x256, 2: 64x128, GROUP_M=1); without it
a GEMM runs GEMM_CFG (128x128, GROUP_M=8). Each config compiles to its own hash; all are
instrumented.

Steps (each Triton step in its own process, since Triton reads its knobs from the environment):
  1. dump   : TRITON_ALWAYS_COMPILE=1 TRITON_KERNEL_DUMP=1 TRITON_DUMP_DIR=OUTDIR/dump0 runs each
              case once -> dump0/<hash>/<kernel>.ttgir (the hash depends on the kernel source,
              constexprs and specialization, not on the shape values used here).
  2. edit   : every op named in OPS gets `proton.record start "NAME"` before it and
              `proton.record end "NAME"` after it, in the same block; NAME = shortop_site_shape.
              The edited file goes to OUTDIR/override/<hash>/<kernel>.ttgir (only the .ttgir),
              the site table to OUTDIR/<kernel>.sites.json.
  3. trace  : TRITON_ALWAYS_COMPILE=1 TRITON_KERNEL_OVERRIDE=1 TRITON_OVERRIDE_DIR=OUTDIR/override
              (and a second dump to dump1 to check the hash matched), each case in its own
              proton.start(NAME, data="trace", backend="instrumentation",
              mode=proton.mode.Default(metric_type="cycle")) ... proton.finalize() session,
              one cold-L2 launch per case -> OUTDIR/<case>.chrome_trace.
  4. check  : each trace parses and holds events named after the sites; summary in
              OUTDIR/trace_summary.json.
Proton keeps 256 records per warp: the cases keep the K-loop short (K <= 1024, N_CTX = 512).
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))

OPS = [
    "ttng.async_tma_copy_global_to_local",
    "ttng.warp_group_dot_wait",
    "ttng.warp_group_dot",
    "ttng.wait_barrier",
    "ttng.arrive_barrier",
    "ttng.async_tma_copy_local_to_global",
    "ttng.async_tma_store_wait",
    "ttng.async_tma_store_token_wait",
]
SHORT = {
    "ttng.async_tma_copy_global_to_local": "tma_load",
    "ttng.warp_group_dot_wait": "wgmma_wait",
    "ttng.warp_group_dot": "wgmma",
    "ttng.wait_barrier": "wait_bar",
    "ttng.arrive_barrier": "arrive_bar",
    "ttng.async_tma_copy_local_to_global": "tma_store",
    "ttng.async_tma_store_wait": "tma_store_wait",
    "ttng.async_tma_store_token_wait": "tma_store_wait",
}
DEFAULT_CASES = ["gemm:128,128,512", "gemm:4096,4096,512", "gemm:128,128,1024", "attn:1,4,512"]
KERNEL_OF = {"gemm": "gemm_tma_kernel", "attn": "attn_fwd_tma"}

_op_re = re.compile(r'^(\s*)(?:%[^=]*=\s*)?"?(' + "|".join(re.escape(o) for o in OPS) + r')\b')
_shape_re = re.compile(r"(\d+(?:x\d+)+)x(f16|bf16|f32|f8E4M3FN|f8E5M2|i64|i32|i8|i1)\b")


def instrument(text):
    """Returns (edited TTGIR text, list of sites). Pure text edit; see module doc."""
    out, sites = [], []
    stack = []
    for lineno, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if s.startswith("}"):
            if stack:
                stack.pop()
        m = _op_re.match(line)
        if m and not s.endswith("{"):
            indent, op = m.group(1), m.group(2)
            sh = _shape_re.search(line[line.find(op):])
            shape = (sh.group(1) + sh.group(2)) if sh else ""
            name = f"{SHORT[op]}_{len(sites):03d}" + (f"_{shape}" if shape else "")
            sites.append(dict(name=name, op=op, line=lineno, loop_depth=stack.count("for"),
                              text=s[:400]))
            out.append(f'{indent}proton.record start "{name}"')
            out.append(line)
            out.append(f'{indent}proton.record end "{name}"')
        else:
            out.append(line)
        if s.endswith("{") and not s.startswith("}"):
            stack.append("for" if "scf.for" in s else "other")
        elif s.startswith("}") and s.endswith("{"):  # "} else {"
            stack.append("other")
    return "\n".join(out) + "\n", sites


def case_name(case):
    kind, dims, *cfg = case.split(":")
    return f"{kind}_" + "x".join(dims.split(",")) + "".join(f"_cfg{c}" for c in cfg)


def child(mode, outdir, cases):
    import torch
    sys.path.insert(0, HERE)
    import triton_kernels as tk
    flush = torch.empty(256 * 2**20, dtype=torch.uint8, device="cuda")
    proton = None
    if mode == "trace":
        import triton.profiler as proton
    results = {}
    for case in cases:
        kind, dims, *cfg = case.split(":")
        d = [int(x) for x in dims.split(",")]
        try:
            if kind == "gemm":
                gemm_cfg = tk.SUITE_CFGS[int(cfg[0])] if cfg else tk.GEMM_CFG
                launch = tk.make_gemm_launch(d[0], d[1], d[2], gemm_cfg)[0]
            else:
                launch = tk.make_attn_launch(d[0], d[1], d[2], 128, tk.ATTN_CFGS[0])[0]
            if mode == "dump":
                launch()
                torch.cuda.synchronize()
                results[case] = "ok"
                continue
            name = os.path.join(outdir, case_name(case))
            started, err = False, []
            for kw in (dict(data="trace"), dict()):
                try:
                    proton.start(name, backend="instrumentation",
                                 mode=proton.mode.Default(metric_type="cycle"), **kw)
                    started = True
                    break
                except Exception as e:  # record and try the next spelling
                    err.append(repr(e))
            if not started:
                results[case] = "proton.start failed: " + " | ".join(err)
                continue
            torch.cuda._sleep(100_000)
            flush.zero_()  # cold L2 for the traced launch
            launch()
            torch.cuda.synchronize()
            proton.finalize()
            results[case] = "ok" + (" (after: " + " | ".join(err) + ")" if err else "")
        except Exception:
            results[case] = "error: " + traceback.format_exc()[-1500:]
        print(f"[{mode}] {case}: {results[case][:300]}", flush=True)
    with open(os.path.join(outdir, f"child_{mode}.json"), "w") as f:
        json.dump(results, f, indent=1)


def run_child(mode, outdir, cases, env_extra, timeout):
    env = dict(os.environ)
    env.update(env_extra)
    env["PYTHONUNBUFFERED"] = "1"
    t0 = time.time()
    p = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", mode, outdir] + cases,
                       env=env, timeout=timeout)
    print(f"child {mode} rc={p.returncode} in {time.time() - t0:.1f}s", flush=True)
    return p.returncode


def find_ttgirs(dump_dir, kernel):
    return sorted(glob.glob(os.path.join(dump_dir, "*", f"{kernel}.ttgir")), key=os.path.getmtime)


def parent(outdir, cases):
    os.makedirs(outdir, exist_ok=True)
    summary = dict(cases=cases, ops=OPS, steps={})
    d0, d1, ov = (os.path.join(outdir, x) for x in ("dump0", "dump1", "override"))
    base = {"TRITON_ALWAYS_COMPILE": "1"}
    rc = run_child("dump", outdir, cases, dict(base, TRITON_KERNEL_DUMP="1", TRITON_DUMP_DIR=d0), 240)
    summary["steps"]["dump_rc"] = rc
    kernels = sorted({KERNEL_OF[c.split(":")[0]] for c in cases})
    for kern in kernels:
        found = find_ttgirs(d0, kern)
        summary["steps"][f"{kern}_dumped"] = [os.path.relpath(x, outdir) for x in found]
        for src in found:  # one hash a config
            h = os.path.basename(os.path.dirname(src))
            text, sites = instrument(open(src).read())
            os.makedirs(os.path.join(ov, h), exist_ok=True)
            with open(os.path.join(ov, h, f"{kern}.ttgir"), "w") as f:
                f.write(text)
            shutil.copy(src, os.path.join(outdir, f"{kern}.{h[:8]}.orig.ttgir"))
            shutil.copy(os.path.join(ov, h, f"{kern}.ttgir"),
                        os.path.join(outdir, f"{kern}.{h[:8]}.instrumented.ttgir"))
            with open(os.path.join(outdir, f"{kern}.{h[:8]}.sites.json"), "w") as f:
                json.dump(dict(kernel=kern, hash=h, sites=sites), f, indent=1)
            summary["steps"][f"{kern}.{h[:8]}_sites"] = len(sites)
    env = dict(base, TRITON_KERNEL_OVERRIDE="1", TRITON_OVERRIDE_DIR=ov, TRITON_KERNEL_DUMP="1",
               TRITON_DUMP_DIR=d1)
    rc = run_child("trace", outdir, cases, env, 300)
    summary["steps"]["trace_rc"] = rc
    # hash check: the traced compile must have used the same hash directory as the override
    for kern in kernels:
        got = {os.path.basename(os.path.dirname(x)) for x in find_ttgirs(d1, kern)}
        want = {os.path.basename(os.path.dirname(x)) for x in find_ttgirs(ov, kern)}
        summary["steps"][f"{kern}_hash_match"] = bool(got & want)
        for x in find_ttgirs(d1, kern):
            summary["steps"][f"{kern}_dump1_has_records"] = "proton.record" in open(x).read()
    for case in cases:
        cn = case_name(case)
        files = glob.glob(os.path.join(outdir, cn + "*chrome_trace*")) + glob.glob(cn + "*chrome_trace*")
        info = dict(files=[os.path.basename(x) for x in files])
        for fpath in files:
            if not fpath.startswith(outdir):
                shutil.move(fpath, os.path.join(outdir, os.path.basename(fpath)))
                fpath = os.path.join(outdir, os.path.basename(fpath))
            try:
                js = json.load(open(fpath))
                ev = js["traceEvents"] if isinstance(js, dict) else js
                names = {}
                for e in ev:
                    if isinstance(e, dict) and "name" in e:
                        names[e["name"]] = names.get(e["name"], 0) + 1
                info["events"] = len(ev)
                info["names"] = names
                info["pids"] = len({e.get("pid") for e in ev if isinstance(e, dict)})
                info["tids"] = len({(e.get("pid"), e.get("tid")) for e in ev if isinstance(e, dict)})
            except Exception as e:
                info["parse_error"] = repr(e)
        summary[cn] = info
        print(f"trace {cn}: {info.get('events', 0)} events, {len(info.get('names', {}))} names, "
              f"files {info['files']}", flush=True)
    for k, v in summary["steps"].items():
        print(f"  {k}: {v}", flush=True)
    with open(os.path.join(outdir, "trace_summary.json"), "w") as f:
        json.dump(summary, f, indent=1)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], sys.argv[4:])
    elif len(sys.argv) > 1 and sys.argv[1] == "--instrument":  # local use: edit one file
        t, s = instrument(open(sys.argv[2]).read())
        open(sys.argv[3], "w").write(t)
        print(json.dumps(s, indent=1))
    else:
        parent(sys.argv[1], sys.argv[2:] or DEFAULT_CASES)
