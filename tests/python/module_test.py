#!/usr/bin/env python3
"""Checks of the `simfa` Python module (docs/sweeps.md), against the CLI.

    module_test.py SIMFA CASE      CASE: run | gil | errors | sweep | dask

PYTHONPATH must hold the module (build/<preset>/python). Exit 0 passes, 1 fails, 77 skips: the
module cannot be imported (a sanitized build without the ASan runtime preloaded), or, for dask,
dask.distributed is not installed.
"""
import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
H800 = os.path.join(ROOT, "configs", "h800.toml")
WORKLOAD = "gemm:m=256,n=256,k=256"
VARY = {"memory.l2.slice_map.plugin": ["slice.xor", "slice.linear"], "workload.k": [256, 512]}
SKIP = 77


def cli(binary, *args):
    p = subprocess.run([binary, *args], capture_output=True, text=True)
    assert p.returncode == 0, f"{' '.join(args)}: exit {p.returncode}\n{p.stderr}"
    return p


def without_sim(stats):
    """The stats outside "sim", which measures the simulator (wall time, memory), not the GPU."""
    return {k: v for k, v in stats.items() if k != "sim"}


def without_wall(rows):
    return [{k: v for k, v in r.items() if k != "wall_seconds"} for r in rows]


def cli_sweep_rows(binary, tmp):
    """The CLI's rows for the same sweep, typed as simfa.sweep types them."""
    out = os.path.join(tmp, "cli.csv")
    cli(binary, "sweep", H800, "-w", WORKLOAD, "--csv", out,
        *[a for k, v in VARY.items() for a in ("--vary", f"{k}={','.join(map(str, v))}")])
    ints = {"point", "workload.k", "cycles", "llc_read_bytes", "llc_write_bytes",
            "dram_read_bytes", "dram_write_bytes"}
    floats = {"time_us", "l2_hit_rate", "wall_seconds"}
    rows = []
    for r in csv.DictReader(open(out, newline="")):
        rows.append({k: int(v) if k in ints else float(v) if k in floats else v or None
                     for k, v in r.items()})
    return rows


def case_run(simfa, binary, tmp):
    for overrides in ({}, {"memory.l2.slice_map.plugin": "slice.linear", "gpu.clock_mhz": 1500}):
        path = os.path.join(tmp, "cli.json")
        cli(binary, "run", H800, "-q", "-w", WORKLOAD, "--stats", path,
            *[a for k, v in overrides.items() for a in ("--set", f"{k}={v}")])
        with open(path) as f:
            want = json.load(f)
        got = simfa.run(H800, WORKLOAD, set=overrides)
        assert without_sim(got) == without_sim(want), f"simfa.run != simfa run --stats ({overrides})"
        assert set(got["sim"]) == set(want["sim"]), (got["sim"], want["sim"])
    assert got["manifest"]["gpu"]["clock_mhz"] == 1500, got["manifest"]["gpu"]
    names = {p["name"] for p in simfa.plugins()}
    assert {"l2.remote_copy", "slice.xor", "workload.gemm"} <= names, names
    analysis = simfa.analyze(H800, "fa3:model=llama3-8b,seqlen=4096")
    want = json.loads(cli(binary, "analyze", H800, "-w", "fa3:model=llama3-8b,seqlen=4096",
                          "--json").stdout)
    assert analysis == want, "simfa.analyze != simfa analyze --json"
    ranked = simfa.rank(os.path.join(ROOT, "configs", "h200.toml"), "gemm:m=4096,n=4096,k=4096")
    assert [r["rank"] for r in ranked[:3]] == [1, 2, 3], ranked[:3]
    assert ranked[0]["predicted_us"] <= ranked[1]["predicted_us"], ranked[:2]


def case_gil(simfa, binary, tmp):
    """A Python thread runs while simfa.run simulates: the GIL is released. Held, the spinning
    thread would stand still for the whole run (one gap as long as the run)."""
    state = {"stop": False, "gap": 0.0}

    def spin():
        last = time.perf_counter()
        while not state["stop"]:
            now = time.perf_counter()
            state["gap"] = max(state["gap"], now - last)
            last = now

    thread = threading.Thread(target=spin)
    thread.start()
    try:
        # A GEMM long enough to tell (0.3 s), whatever the build's speed (a sanitized one is 20x
        # slower): M doubles until a run takes that long.
        for m in (512, 1024, 2048, 4096, 8192, 16384):
            state["gap"] = 0.0
            start = time.perf_counter()
            simfa.run(H800, f"gemm:m={m},n=512,k=1024")
            took = time.perf_counter() - start
            if took > 0.3:
                break
    finally:
        state["stop"] = True
        thread.join()
    assert took > 0.3, f"the run took {took:.3f} s, too short to tell"
    assert state["gap"] < took / 2, f"the Python thread stood still {state['gap']:.3f} s of {took:.3f} s"
    print(f"longest pause of a Python thread during a {took:.2f} s run: {state['gap'] * 1e3:.1f} ms")


def case_errors(simfa, binary, tmp):
    def raises(call, kind, *fragments):
        try:
            call()
        except kind as e:
            for fragment in fragments:
                assert fragment in str(e), f"{fragment!r} not in {str(e)!r}"
            return
        raise AssertionError(f"no {kind.__name__} raised")

    typo = "--set memory.l2.sise=1: error: [memory.l2] unknown key 'sise' (did you mean 'size'?)"
    raises(lambda: simfa.run(H800, WORKLOAD, set={"memory.l2.sise": 1}), simfa.InputError, typo)
    raises(lambda: simfa.sweep(H800, WORKLOAD, vary={"memory.l2.sise": [1, 2]}), simfa.InputError,
           typo)
    raises(lambda: simfa.run(H800, "gemm:m=256,n=256,kk=2"), simfa.InputError,
           "--workload:1:1: error: [workload] missing required key 'k'",
           "--workload:1:18: error: [workload] unknown key 'kk' (did you mean 'k'?)")
    raises(lambda: simfa.run(os.path.join(tmp, "missing.toml"), WORKLOAD), simfa.InputError,
           "missing.toml")
    raises(lambda: simfa.analyze(H800, "fa3:model=llama3-8b", sweep={"seqlem": [1, 2]}),
           simfa.InputError, "unknown sweep parameter 'seqlem' for fa3 (did you mean 'seqlen'?)")
    raises(lambda: simfa.run(H800, WORKLOAD, stepping="fast"), simfa.InputError, "'fast'")
    assert issubclass(simfa.InputError, simfa.Error) and issubclass(simfa.SimulationError,
                                                                    simfa.Error)
    # A run that cannot finish: a watchdog of 100 cycles stops a ~5000-cycle GEMM.
    try:
        simfa.run(H800, WORKLOAD, set={"simfa.max_cycles": 100})
    except simfa.SimulationError as e:
        assert e.outcome == "watchdog" and e.stats["kernel"]["outcome"] == "watchdog", e
    else:
        raise AssertionError("no SimulationError raised")
    # A point that fails is a row, not an exception.
    rows = simfa.sweep(H800, WORKLOAD, vary={"memory.l2.size": ["50MiB", "3MiB"]})
    assert [r["outcome"] for r in rows] == ["completed", "error"], rows
    assert rows[0]["error"] is None and "must be slices (160)" in rows[1]["error"], rows


def case_sweep(simfa, binary, tmp):
    want = cli_sweep_rows(binary, tmp)
    for jobs in (1, 2):
        rows = simfa.sweep(H800, WORKLOAD, vary=VARY, jobs=jobs)
        assert without_wall(rows) == without_wall(want), f"jobs={jobs}: {rows}\n!=\n{want}"
    assert len({r["cycles"] for r in rows}) == 4, rows
    # Ctrl-C stops a local sweep between points: 40 points of up to seconds, SIGINT after 1 s.
    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT))
    start = time.monotonic()
    timer.start()
    try:
        simfa.sweep(H800, "gemm:m=1024,n=1024,k=1024",
                    vary={"workload.k": list(range(1024, 1024 * 41, 1024))}, jobs=2)
    except KeyboardInterrupt:
        took = time.monotonic() - start
    else:
        raise AssertionError("the sweep ran to its end: SIGINT was not seen")
    finally:
        timer.cancel()
    # The whole sweep takes minutes (k up to 40960); the points in flight at the signal, seconds.
    assert took < 60, f"KeyboardInterrupt only after {took:.0f} s: the sweep was not stopped"
    print(f"interrupted after {took:.1f} s")
    try:
        import pandas  # noqa: F401
    except ImportError:
        return
    frame = rows.to_dataframe()
    assert list(frame["cycles"]) == [r["cycles"] for r in want], frame


def case_dask(simfa, binary, tmp):
    try:
        from distributed import Client, get_task_stream
    except ImportError:
        print("skip: dask.distributed is not installed (apt install python3-distributed)")
        return SKIP
    dask = shutil.which("dask") or shutil.which("dask", path=os.path.dirname(sys.executable))
    if not dask:
        print("skip: no `dask` command")
        return SKIP
    scheduler_file = os.path.join(tmp, "scheduler.json")
    # The workers import simfa from the same PYTHONPATH, and run with the same interpreter.
    env = dict(os.environ)
    common = ["--no-dashboard"]
    log = open(os.path.join(tmp, "dask.log"), "w")
    procs = [subprocess.Popen([sys.executable, dask, "scheduler", "--host", "127.0.0.1",
                               "--port", "0", "--scheduler-file", scheduler_file, *common],
                              env=env, stdout=log, stderr=subprocess.STDOUT)]
    try:
        deadline = time.monotonic() + 60
        while not os.path.exists(scheduler_file):
            assert procs[0].poll() is None, "the dask scheduler exited"
            assert time.monotonic() < deadline, "no scheduler file after 60 s"
            time.sleep(0.1)
        for _ in range(2):
            procs.append(subprocess.Popen(
                [sys.executable, dask, "worker", "--scheduler-file", scheduler_file,
                 "--nthreads", "1", "--nworkers", "1", "--host", "127.0.0.1", *common],
                env=env, stdout=log, stderr=subprocess.STDOUT))
        with Client(scheduler_file=scheduler_file, timeout=60) as client:
            client.wait_for_workers(2, timeout=120)
            workers = set(client.scheduler_info()["workers"])
            worker_pids = set(client.run(os.getpid).values())
            assert len(workers) == 2 and os.getpid() not in worker_pids, (workers, worker_pids)
            with get_task_stream(client) as stream:
                rows = simfa.sweep(H800, WORKLOAD, vary=VARY, client=client)
            ran_on = [t["worker"] for t in stream.data]
        want = cli_sweep_rows(binary, tmp)
        assert without_wall(rows) == without_wall(want), f"{rows}\n!=\n{want}"
        # Every point ran as a task on the cluster's workers, not in this process.
        assert len(ran_on) == len(want) and set(ran_on) <= workers, (ran_on, workers)
        print(f"points per worker: {sorted(ran_on.count(w) for w in workers)}")
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
        for p in reversed(procs):
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        log.close()
    return 0


CASES = {"run": case_run, "gil": case_gil, "errors": case_errors, "sweep": case_sweep, "dask": case_dask}


def main():
    binary, case = sys.argv[1], sys.argv[2]
    # In a child first: a sanitized module without the ASan runtime preloaded aborts the process.
    probe = subprocess.run([sys.executable, "-c", "import simfa"], capture_output=True, text=True)
    if probe.returncode != 0:
        print(f"skip: cannot import simfa ({probe.stderr.strip().splitlines()[-1:]})")
        return SKIP
    import simfa
    with tempfile.TemporaryDirectory() as tmp:
        try:
            code = CASES[case](simfa, binary, tmp)
        except AssertionError as e:
            print(f"FAIL {case}: {e}")
            return 1
    if code == SKIP:
        return SKIP
    print(f"ok {case}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
