"""The paper's route end to end on the device: dump a Triton kernel's TTGIR, instrument it,
re-run it under Proton, and say how to simulate the trace (docs/ttgir.md).

  python3 tools/triton_trace.py OUTDIR [CASE ...]     CASE = gemm:M,N,K | attn:Z,H,N_CTX
  python3 tools/triton_trace.py --instrument IN OUT   the instrumentation pass alone (anywhere)

The instrumentation pass is simfa's own (`simfa ttgir instrument`, frontends/ttgir/
ttgir_instrument.cpp). The device machine has no simfa binary, so this file carries a Python
port of it, `instrument()`; tests/frontends/ttgir_test.cpp keeps the two byte-identical (the
C++ pass must reproduce tests/frontends/data/ttgir_*.instrumented.ttgir, which this port
wrote, and the test `ttgir_python_port` re-runs this port against the same files). A TTGIR
instrumented here by the C++ pass can also be carried to the device instead.

Dump, override, profiling and the trace checks are tools/device/triton_trace.py's (issue 7's
recipe, checked on Triton 3.6); this script swaps in the instrumentation pass above, then
writes OUTDIR/<case>.launch.json with the grid and the kernel arguments simfa needs and prints
the `--workload` spec of each trace.
"""
import importlib.util
import json
import math
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# The sites (frontends/ttgir/ttgir_sites.cpp): canonical op name -> scope kind.
SITES = {
    "ttng.async_tma_copy_global_to_local": "TMA_LOAD",
    "ttng.async_tma_copy_local_to_global": "TMA_STORE",
    "ttng.async_tma_store_wait": "TMA_STORE_WAIT",
    "ttng.async_tma_store_token_wait": "TMA_STORE_WAIT",
    "ttng.warp_group_dot": "WGMMA",
    "ttng.warp_group_dot_wait": "WGMMA_WAIT",
    "ttng.wait_barrier": "MBAR_WAIT",
    "ttng.arrive_barrier": "MBAR_ARRIVE",
}
RENAMED = {"ttg.memdesc_subview": "ttg.memdesc_index", "ttng.dot_async": "ttng.warp_group_dot",
           "ttng.dot_wait": "ttng.warp_group_dot_wait"}
ELEM_BYTES = {"f16": 2, "bf16": 2, "i16": 2, "f32": 4, "i32": 4, "tf32": 4, "f64": 8, "i64": 8,
              "i8": 1, "i1": 1}

_op_re = re.compile(r'^(\s*)(?:(?:%[\w.$-]+(?::\d+)?\s*,\s*)*%[\w.$-]+(?::\d+)?\s*=\s*)?'
                    r'"?([A-Za-z_][\w.$]*)"?')
_value_re = re.compile(r"%([\w.$-]+)")
_shape_re = re.compile(r"^((?:\d+x)*)([A-Za-z]\w*)")


def canonical(name):
    for old, new in (("triton_gpu.", "ttg."), ("triton_nvidia_gpu.", "ttng.")):
        if name.startswith(old):
            name = new + name[len(old):]
    return RENAMED.get(name, name)


def dtype_name(e):
    named = {"f16": "FP16", "bf16": "BF16", "f32": "FP32", "f64": "FP64", "f8E4M3FN": "FP8E4M3",
             "f8E4M3FNUZ": "FP8E4M3", "f8E5M2": "FP8E5M2", "f8E5M2FNUZ": "FP8E5M2"}
    if e in named:
        return named[e]
    if re.fullmatch(r"i\d+", e):
        return "INT" + e[1:]
    return e.upper()


def elem_bytes(e):
    return 1 if e.startswith("f8") else ELEM_BYTES.get(e, 0)


def split_shape(text):
    """'128x64xf16, #shared' -> ([128, 64], 'f16')."""
    m = _shape_re.match(text.strip())
    if not m:
        raise ValueError("no shape in " + text)
    return [int(d) for d in m.group(1).split("x") if d], m.group(2)


def type_list(line):
    """The text after the op's top-level ' : ', without its trailing loc(...)."""
    depth, i = 0, 0
    while i < len(line):
        c = line[i]
        if c in "([<{":
            depth += 1
        elif c in ")]>}":
            depth -= 1
        elif c == "-" and line[i + 1:i + 2] == ">":
            i += 2
            continue
        elif c == ":" and depth == 0:
            break
        i += 1
    types = line[i + 1:]
    loc = types.rfind(" loc(")
    return types[:loc] if loc >= 0 else types


def mma_layout(text, enc):
    """warpsPerCTA and instrShape of the #ttg.nvidia_mma layout `enc` (an alias or inline)."""
    body = enc
    if not enc.startswith("#ttg.nvidia_mma"):
        m = re.search(r"^" + re.escape(enc) + r" = (.*)$", text, re.M)
        if not m:
            raise ValueError("no layout " + enc)
        body = m.group(1)
    if not body.startswith("#ttg.nvidia_mma") and not body.startswith("#triton_gpu.nvidia_mma"):
        raise ValueError(enc + " is not an NVIDIA MMA layout")
    version = re.search(r"versionMajor = (\d+)", body)
    if not version or version.group(1) != "3":
        raise ValueError(enc + " is not a Hopper WGMMA layout")
    warps = [int(x) for x in re.search(r"warpsPerCTA = \[([\d, ]+)\]", body).group(1).split(",")]
    instr = [int(x) for x in re.search(r"instrShape = \[([\d, ]+)\]", body).group(1).split(",")]
    if warps[0] % 4:
        raise ValueError("fewer than 4 warps along M")
    return warps, instr


def scope_of(text, line, kind, site):
    s = "SIMFA|" + kind
    after = line[line.find(kind_op(line)) :]
    if kind in ("TMA_LOAD", "TMA_STORE"):
        desc = _value_re.search(after).group(1)
        m = re.search(r"!tt\.tensordesc<tensor<([^>]*)>", type_list(after))
        shape, elem = split_shape(m.group(1))
        nbytes = elem_bytes(elem) * math.prod(shape)
        s += "|desc=%s|box=%s|dtype=%s|bytes=%d" % (desc, "x".join(map(str, shape)),
                                                     dtype_name(elem), nbytes)
    elif kind == "WGMMA":
        types = type_list(after)
        a_text, rest = types.split(" * ", 1)
        c_text = rest.split("->", 1)[1].strip()
        a = a_text.strip()
        a_shape, a_elem = split_shape(a[a.find("<") + 1:])
        cm = re.match(r"tensor<([^,]*), (#[\w.]+(?:<\{[^}]*\}>)?)", c_text)
        c_shape, c_elem = split_shape(cm.group(1))
        warps, instr = mma_layout(text, cm.group(2))
        instr_m, instr_n = instr[0] * warps[0], instr[1] * warps[1]
        is_async = re.search(r"isAsync = true", after) is not None
        s += ("|M=%d|N=%d|K=%d|instrM=%d|instrN=%d|instrK=%d|warps=%dx%d|dtype=%s|acc=%s"
              "|mode=%s|async=%d") % (c_shape[0], c_shape[1], a_shape[1], instr_m, instr_n,
                                      instr[2], warps[0], warps[1], dtype_name(a_elem),
                                      dtype_name(c_elem), "RS" if a.startswith("tensor<") else "SS",
                                      1 if is_async else 0)
    elif kind == "WGMMA_WAIT":
        m = re.search(r"pendings = (-?\d+)", after)
        s += "|pendings=%d" % (int(m.group(1)) if m else 0)
    elif kind == "MBAR_ARRIVE":
        m = re.search(r"^\S+\s+%[\w.$-]+\s*,\s*(-?\d+)", after)
        s += "|count=%d" % int(m.group(1))
    return s + "|site=%d" % site


def kind_op(line):
    m = _op_re.match(line)
    return m.group(2) if m else ""


def instrument(text):
    """Returns (instrumented TTGIR, site table): `proton.record start/end "SCOPE"` around every
    site, in the op's block and with its indentation. Byte-identical to `simfa ttgir
    instrument`."""
    out, sites = [], []
    for lineno, line in enumerate(text.splitlines(), 1):
        m = _op_re.match(line)
        name = canonical(m.group(2)) if m else ""
        if name == "proton.record":
            raise ValueError("line %d: the TTGIR is already instrumented (proton.record)" % lineno)
        kind = SITES.get(name)
        if kind is None or line.rstrip().endswith("{"):
            out.append(line)
            continue
        scope = scope_of(text, line, kind, len(sites))
        sites.append(dict(name=scope, op=name, line=lineno, text=line.strip()[:400]))
        indent = m.group(1)
        out.append('%sproton.record start "%s"' % (indent, scope))
        out.append(line)
        out.append('%sproton.record end "%s"' % (indent, scope))
    return "\n".join(out) + "\n", sites


def launch_of(case):
    """(grid, args) simfa needs for a case of tools/device/triton_trace.py."""
    kind, dims = case.split(":")
    d = [int(x) for x in dims.split(",")]
    if kind == "gemm":
        m, n, k = d
        grid = "%d" % (math.ceil(m / 128) * math.ceil(n / 128))
        args = "M=%d;N=%d;K=%d;a_desc.shape=%dx%d;b_desc.shape=%dx%d;c_desc.shape=%dx%d" % (
            m, n, k, m, k, n, k, m, n)
        return grid, args
    z, h, n_ctx = d
    rows = z * h * n_ctx
    grid = "%dx%d" % (math.ceil(n_ctx / 128), z * h)
    args = "N_CTX=%d;" % n_ctx + ";".join("desc_%s.shape=%dx128" % (t, rows) for t in "qkvo")
    return grid, args


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--instrument":
        with open(sys.argv[2]) as f:
            text, sites = instrument(f.read())
        with open(sys.argv[3], "w") as f:
            f.write(text)
        for s in sites:
            print("site %d line %d: %s" % (int(s["name"].rsplit("=", 1)[1]), s["line"], s["name"]))
        return
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    spec = importlib.util.spec_from_file_location(
        "device_triton_trace", os.path.join(HERE, "device", "triton_trace.py"))
    device = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(device)
    device.instrument = instrument
    outdir, cases = sys.argv[1], sys.argv[2:] or device.DEFAULT_CASES
    device.parent(outdir, cases)
    for case in cases:
        name = device.case_name(case)
        kernel = device.KERNEL_OF[case.split(":")[0]]
        grid, args = launch_of(case)
        with open(os.path.join(outdir, name + ".launch.json"), "w") as f:
            json.dump(dict(case=case, kernel=kernel, grid=grid, args=args), f, indent=1)
        print("simfa run configs/h200.toml --workload 'ttgir:trace=%s.chrome_trace,"
              "ttgir=%s.instrumented.ttgir,grid=%s,args=%s'" % (name, kernel, grid, args))


if __name__ == "__main__":
    main()
