#!/usr/bin/env python3
"""Seeds tests/fuzz/corpus/<target>/ from every example and test fixture (docs/reliability.md).

Run from the repository root; it adds seed-* files and never removes the inputs fuzzing grew,
minimized or found (those are named by content hash or crash-*/regression-*). Trace snippets
are lifted from tests/frontends/trace_parser_test.cpp (the in_warpgroup() bodies and the
expect_error() texts), so the parser's error paths are seeds too.
"""
import codecs
import glob
import os
import re
import shutil

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, "tests", "fuzz", "corpus")


def seed(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def files(target, patterns, prefix=b"", tag=""):
    for pattern in patterns:
        for path in sorted(glob.glob(os.path.join(ROOT, pattern))):
            rel = tag + os.path.relpath(path, ROOT).replace("/", "_")
            with open(path, "rb") as f:
                seed(target, rel, prefix + f.read())


# C string literals, adjacent ones joined, after a call's opening parenthesis.
LITERAL = r'"(?:[^"\\\n]|\\.)*"'
CALL = re.compile(r'\b(in_warpgroup|expect_error|parse)\(\s*((?:' + LITERAL + r'\s*)+)')


def c_string(literals):
    parts = re.findall(LITERAL, literals)
    return "".join(codecs.decode(p[1:-1], "unicode_escape") for p in parts)


def trace_snippets():
    src = open(os.path.join(ROOT, "tests/frontends/trace_parser_test.cpp")).read()
    header = ("grid 4\ntensormap A base=0x1000 elem=fp16 shape=[256, 256] box=[64, 64]\n"
              "cta {\n  stages 2\n  warpgroup w regs=32 {\n")
    seen = set()
    for i, m in enumerate(CALL.finditer(src)):
        text = c_string(m.group(2))
        if m.group(1) == "in_warpgroup":
            text = header + text + "\n  }\n}\n"
        if text in seen or not text.strip():
            continue
        seen.add(text)
        seed("trace", "trace_parser_test_%03d.trace" % len(seen), text)


# The committed GEMM (C = A B^T) and attention kernels' launch lines (tests/frontends/ttgir_test.cpp).
GEMM = b"// grid=4 args=M=256;N=256;K=512;a_desc.shape=256x512;b_desc.shape=256x512;c_desc.shape=256x256\n"
ATTN = (b"// grid=4x4 args=N_CTX=512;desc_q.shape=2048x128;desc_k.shape=2048x128;"
        b"desc_v.shape=2048x128;desc_o.shape=2048x128\n")

files("trace", ["examples/traces/*.trace", "examples/microbench/*.trace", "tests/frontends/data/*.trace"])
trace_snippets()
files("manifest", ["configs/*.toml", "configs/ablations/*.toml", "tests/kernel/data/*.toml"])
files("workload", ["examples/workloads/*.toml", "examples/microbench/*.toml",
                   "tests/kernel/data/*workload*.toml"])
files("fa3_events", ["tests/frontends/data/*.csv"])
LOG = open(os.path.join(ROOT, "tests/frontends/data/fa3_small_events.csv")).read().splitlines(True)
seed("fa3_events", "header_only.csv", "".join(LOG[:2]))
seed("fa3_events", "truncated.csv", "".join(LOG[: len(LOG) // 2]) + LOG[len(LOG) // 2][:5])
seed("fa3_events", "warp1_missing.csv", "".join(l for l in LOG if not l.startswith("0,1,")))
seed("fa3_events", "unknown_event.csv", "".join(LOG).replace("GEMM_QK_ISSUE", "GEMM_QQ_ISSUE", 1))
seed("fa3_events", "duplicate_line.csv", "".join(LOG[:4]) + LOG[3] +
     "".join(LOG[4:]))
files("ttgir", ["tests/data/ttgir/*.ttgir", "tests/frontends/data/*.ttgir"])
files("ttgir", ["tests/data/ttgir/gemm_tma*.ttgir", "tests/frontends/data/ttgir_gemm_tma*.ttgir",
               "tests/frontends/data/ttgir_gemm_nw8.ttgir"], GEMM, "launched-")
files("ttgir", ["tests/data/ttgir/attn_fwd_tma*.ttgir", "tests/frontends/data/ttgir_attn*.ttgir"], ATTN,
      "launched-")
files("ttgir", ["tests/frontends/data/ttgir_ws_small.ttgir"],
      b"// grid=1 args=K=256;a_desc.shape=128x256;b_desc.shape=128x256\n", "launched-")
files("ttgir", ["tests/frontends/data/ttgir_unknown_op.ttgir"], b"// grid=2\n", "launched-")
files("proton_trace", ["tests/data/ttgir/*.chrome_trace", "tests/frontends/data/*.chrome_trace",
                       "tests/frontends/data/*.chrome_trace.gz"])
for t in sorted(os.listdir(CORPUS)):
    print(t, len(os.listdir(os.path.join(CORPUS, t))))
