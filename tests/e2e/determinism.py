#!/usr/bin/env python3
"""Determinism check (docs/reliability.md): runs one workload twice in event stepping and twice
in reference stepping and compares the --stats files byte for byte, outside the "sim" object
(wall time, speed, peak RSS). The four must agree: the two runs of each stepping exactly, and
the event run with the reference run (DESIGN section 2), with "sim.stepping" the one expected
difference, removed with the rest of "sim".

    determinism.py [--gen SPEC] [--event-only] SIMFA MANIFEST WORKLOAD [SIMFA_RUN_ARGS...]

--event-only skips reference stepping (for workloads whose per-cycle loop takes minutes: it
steps every SM through every idle cycle of a long DRAM wait). --gen SPEC first writes `simfa gen SPEC` to a temporary file, and {gen} in WORKLOAD names it (an
FA3 event log read back through fa3_events). Run from the repository root (example workload
files name their traces from there)."""
import json
import os
import subprocess
import sys
import tempfile


def stats(simfa, manifest, workload, stepping, extra, out):
    cmd = [simfa, "run", manifest, "-q", "--workload", workload, "--stepping", stepping,
           "--stats", out] + extra
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("%s\nexit %d\n%s%s" % (" ".join(cmd), r.returncode, r.stdout, r.stderr))
    with open(out, "rb") as f:
        raw = f.read()
    doc = json.loads(raw)
    doc.pop("sim")
    # Re-serialized in file order: key order is part of what must not change.
    return json.dumps(doc, separators=(",", ":"), allow_nan=True).encode()


def main():
    args = sys.argv[1:]
    gen = None
    if args[:1] == ["--gen"]:
        gen, args = args[1], args[2:]
    steppings = ("event", "reference")
    if args[:1] == ["--event-only"]:
        steppings, args = ("event",), args[1:]
    if len(args) < 3:
        sys.exit(__doc__)
    simfa, manifest, workload, extra = args[0], args[1], args[2], args[3:]
    with tempfile.TemporaryDirectory() as tmp:
        if gen:
            out = os.path.join(tmp, "gen.out")
            r = subprocess.run([simfa, "gen", gen, "-o", out], capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit("simfa gen %s: exit %d\n%s" % (gen, r.returncode, r.stderr))
            workload = workload.replace("{gen}", out)
        runs = {}
        for stepping in steppings:
            for i in (1, 2):
                runs[(stepping, i)] = stats(simfa, manifest, workload, stepping, extra,
                                            os.path.join(tmp, "%s%d.json" % (stepping, i)))
    failed = False
    for stepping in steppings:
        if runs[(stepping, 1)] != runs[(stepping, 2)]:
            print("%s stepping: two runs differ" % stepping)
            failed = True
    if len(steppings) == 2 and runs[("event", 1)] != runs[("reference", 1)]:
        a, b = json.loads(runs[("event", 1)]), json.loads(runs[("reference", 1)])
        diff = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
        print("event and reference stepping differ in: %s" % ", ".join(diff))
        failed = True
    if failed:
        sys.exit(1)
    print("%s: %s (%d bytes of stats)" % (workload, " == ".join("2 x " + s for s in steppings),
                                          len(runs[("event", 1)])))


main()
