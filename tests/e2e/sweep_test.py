#!/usr/bin/env python3
"""End-to-end checks of `simfa sweep` (docs/sweeps.md).

    sweep_test.py SIMFA CASE      CASE: grid | shards | resume | errors

Exit 0 passes, 1 fails.
"""
import csv
import io
import json
import os
import pty
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
H800 = os.path.join(ROOT, "configs", "h800.toml")
# A 2x2 grid of ~0.1 s points: the slice hash (a manifest key) x K (a workload parameter). Both
# change the cycles, so a row paired with the wrong point shows.
WORKLOAD = "gemm:m=256,n=256,k=256"
AXES = [("memory.l2.slice_map.plugin", ["slice.xor", "slice.linear"]),
        ("workload.k", ["256", "512"])]
VARY = [a for key, values in AXES for a in ("--vary", f"{key}={','.join(values)}")]
RESULTS = ["outcome", "cycles", "time_us", "llc_read_bytes", "llc_write_bytes", "dram_read_bytes",
           "dram_write_bytes", "l2_hit_rate", "wall_seconds", "manifest_sha256", "error"]
COLUMNS = ["point"] + [key for key, _ in AXES] + RESULTS


def simfa(binary, *args, expect=0):
    p = subprocess.run([binary, *args], capture_output=True, text=True)
    if expect is not None and p.returncode != expect:
        raise AssertionError(f"exit {p.returncode}, expected {expect}: {' '.join(args)}\n"
                             f"{p.stdout}{p.stderr}")
    return p


def sweep(binary, out, *extra, expect=0):
    return simfa(binary, "sweep", H800, "-w", WORKLOAD, *VARY, "--csv", out, *extra, expect=expect)


def read(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == COLUMNS, rows[0]
    return [dict(zip(COLUMNS, r)) for r in rows[1:]]


def without_wall(rows):
    return [{k: v for k, v in r.items() if k != "wall_seconds"} for r in rows]


def case_grid(binary, tmp):
    out = os.path.join(tmp, "grid.csv")
    p = sweep(binary, out, "--jobs", "2")
    assert "swept 4 points: ran 4" in p.stdout, p.stdout
    rows = read(out)
    # Grid order, the last axis fastest, whatever order the two threads finished in.
    assert [(r["point"], r["memory.l2.slice_map.plugin"], r["workload.k"]) for r in rows] == [
        ("0", "slice.xor", "256"), ("1", "slice.xor", "512"),
        ("2", "slice.linear", "256"), ("3", "slice.linear", "512")], rows
    for r in rows:
        stats_path = os.path.join(tmp, f"point{r['point']}.json")
        simfa(binary, "run", H800, "-q", "-w", f"gemm:m=256,n=256,k={r['workload.k']}",
              "--set", f"memory.l2.slice_map.plugin={r['memory.l2.slice_map.plugin']}",
              "--stats", stats_path)
        with open(stats_path) as f:
            stats = json.load(f)
        want = {"outcome": "completed", "cycles": stats["kernel"]["cycles"],
                "llc_read_bytes": stats["memory"]["llc_read_bytes"],
                "llc_write_bytes": stats["memory"]["llc_write_bytes"],
                "dram_read_bytes": stats["memory"]["dram_read_bytes"],
                "dram_write_bytes": stats["memory"]["dram_write_bytes"],
                "manifest_sha256": stats["manifest_sha256"], "error": ""}
        got = {k: (int(r[k]) if k in want and isinstance(want[k], int) else r[k]) for k in want}
        assert got == want, f"point {r['point']}: {got} != {want}"
        # Shortest round-trip text: the same double as the stats file's.
        assert float(r["time_us"]) == stats["kernel"]["time_us"], (r, stats["kernel"])
        assert float(r["l2_hit_rate"]) == stats["memory"]["l2"]["hit_rate"], r
    # Different points, different results: the rows are not one run repeated.
    assert len({r["cycles"] for r in rows}) == 4, rows
    assert rows[0]["manifest_sha256"] == rows[1]["manifest_sha256"] != rows[2]["manifest_sha256"]
    # No progress bar when stderr is not a terminal; one when it is.
    assert p.stderr == "", p.stderr
    bar = progress_on_a_terminal(binary, os.path.join(tmp, "tty.csv"))
    assert "\r\x1b[K4/4 points [" + "#" * 30 + "]" in bar, repr(bar)
    # One thread gives the same rows: points share nothing.
    one = os.path.join(tmp, "one.csv")
    sweep(binary, one, "--jobs", "1")
    assert without_wall(read(one)) == without_wall(rows)


def progress_on_a_terminal(binary, out):
    """What `simfa sweep` writes to stderr when stderr is a pseudo-terminal."""
    leader, follower = pty.openpty()
    p = subprocess.Popen([binary, "sweep", H800, "-w", WORKLOAD, *VARY, "--csv", out],
                         stdout=subprocess.DEVNULL, stderr=follower)
    os.close(follower)
    text = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        text += chunk
    os.close(leader)
    assert p.wait() == 0
    return text.decode()


def case_shards(binary, tmp):
    whole = os.path.join(tmp, "whole.csv")
    sweep(binary, whole)
    parts = []
    for i in (1, 2):
        part = os.path.join(tmp, f"shard{i}.csv")
        p = sweep(binary, part, "--shard", f"{i}/2")
        assert f"(shard {i}/2 of 4)" in p.stdout, p.stdout
        rows = read(part)
        # Interleaved: shard I holds the points I-1, I-1+N, ...
        assert [r["point"] for r in rows] == [str(i - 1), str(i + 1)], rows
        parts += rows
    parts.sort(key=lambda r: int(r["point"]))
    assert without_wall(parts) == without_wall(read(whole))
    # A shard that does not exist.
    p = sweep(binary, os.path.join(tmp, "bad.csv"), "--shard", "3/2", expect=1)
    assert "--shard 3/2: error: shard 3 of 2 does not exist" in p.stderr, p.stderr


def case_resume(binary, tmp):
    out = os.path.join(tmp, "resume.csv")
    sweep(binary, out)
    with open(out, "rb") as f:
        complete = f.read()
    # Nothing left to run: the file is left as it was, wall times included.
    p = sweep(binary, out, "--resume")
    assert "already in the file: ran 0" in p.stdout.replace(",", ":"), p.stdout
    with open(out, "rb") as f:
        assert f.read() == complete
    # Holes: points 1 and 3 missing, and a torn last line as a killed sweep leaves.
    lines = complete.decode().splitlines(keepends=True)
    header, rows = lines[0], lines[1:]
    torn = rows[3][: len(rows[3]) // 2]
    with open(out, "w") as f:
        f.write(header + rows[0] + rows[2] + torn)
    p = sweep(binary, out, "--resume")
    assert "2 already in the file: ran 2" in p.stdout, p.stdout
    got = read(out)
    assert [r["point"] for r in got] == ["0", "1", "2", "3"], got
    old = read_text_rows(header + "".join(rows))
    # The kept rows were not run again: their wall times are the first run's, byte for byte.
    assert got[0] == old[0] and got[2] == old[2], (got, old)
    assert without_wall(got) == without_wall(old)
    # A file from another sweep is refused, not mixed in.
    other = os.path.join(tmp, "other.csv")
    simfa(binary, "sweep", H800, "-w", WORKLOAD, "--vary", "workload.k=256", "--csv", other)
    p = sweep(binary, other, "--resume", expect=1)
    assert "this file's columns are not this sweep's" in p.stderr, p.stderr


def read_text_rows(text):
    rows = list(csv.reader(io.StringIO(text)))
    return [dict(zip(COLUMNS, r)) for r in rows[1:]]


def case_errors(binary, tmp):
    out = os.path.join(tmp, "errors.csv")
    # A misspelt key fails every point: nothing to sweep, no file.
    p = simfa(binary, "sweep", H800, "-w", WORKLOAD, "--vary", "memory.l2.sise=1,2", "--csv", out,
              expect=1)
    assert "--set memory.l2.sise=1: error: [memory.l2] unknown key 'sise' (did you mean 'size'?)" \
        in p.stderr, p.stderr
    assert not os.path.exists(out)
    p = simfa(binary, "sweep", H800, "-w", WORKLOAD, "--vary", "workload.kk=1", "--csv", out,
              expect=1)
    assert "unknown key 'kk' (did you mean 'k'?)" in p.stderr, p.stderr
    assert "note: the point's workload is 'gemm:m=256,n=256,k=256,kk=1'" in p.stderr, p.stderr
    for args, message in [
            (["--vary", "workload.k"], "--vary workload.k: error: expected KEY=V1,V2"),
            (["--vary", "workload.k=1,,2"], "an empty value"),
            (["--vary", "workload.k=1", "--vary", "workload.k=2"], "varied twice"),
            (["--vary", "gpu.clock_mhz=1000", "--set", "gpu.clock_mhz=900"], "also given as --set"),
    ]:
        p = simfa(binary, "sweep", H800, "-w", WORKLOAD, *args, "--csv", out, expect=1)
        assert message in p.stderr, (args, p.stderr)
    p = simfa(binary, "sweep", H800, "-w", os.path.join(ROOT, "examples/traces/gemm_grid.trace"),
              "--vary", "workload.k=1", "--csv", out, expect=1)
    assert "is a file: workload.KEY varies a parameter" in p.stderr, p.stderr
    # A point that fails is a row with its error; the others run; the exit status says so.
    p = simfa(binary, "sweep", H800, "-w", WORKLOAD, "--vary", "memory.l2.size=50MiB,3MiB",
              "--csv", out, expect=1)
    rows = list(csv.DictReader(open(out, newline="")))
    assert [r["outcome"] for r in rows] == ["completed", "error"], rows
    assert rows[0]["error"] == "" and int(rows[0]["cycles"]) > 0, rows[0]
    assert rows[1]["cycles"] == "" and "must be slices (160) x assoc (16)" in rows[1]["error"], rows
    assert "point 1 (memory.l2.size=3MiB): --set memory.l2.size=3MiB: error:" in p.stderr, p.stderr
    # Several workloads are an axis of their own, the first; a spec with commas is quoted.
    p = simfa(binary, "sweep", H800, "-w", WORKLOAD, "-w", "gemm:m=256,n=256,k=512",
              "--vary", "gpu.clock_mhz=1000,2000", "--csv", out)
    rows = list(csv.DictReader(open(out, newline="")))
    assert [(r["workload"], r["gpu.clock_mhz"]) for r in rows] == [
        (WORKLOAD, "1000"), (WORKLOAD, "2000"),
        ("gemm:m=256,n=256,k=512", "1000"), ("gemm:m=256,n=256,k=512", "2000")], rows


CASES = {"grid": case_grid, "shards": case_shards, "resume": case_resume, "errors": case_errors}


def main():
    binary, case = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        try:
            CASES[case](binary, tmp)
        except AssertionError as e:
            print(f"FAIL {case}: {e}")
            return 1
    print(f"ok {case}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
