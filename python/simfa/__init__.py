"""simfa from Python: run, analyze, rank and sweep (docs/sweeps.md).

    import simfa
    stats = simfa.run("configs/h800.toml", "gemm:m=4096,n=4096,k=4096",
                      set={"memory.l2.size": "25MiB"})
    stats["kernel"]["cycles"]
    rows = simfa.sweep("configs/h800.toml", "fa3:model=llama3-8b",
                       vary={"workload.seqlen": [1024, 4096], "memory.l2.size": ["25MiB", "50MiB"]})

Every function returns plain dicts and lists. A bad manifest, workload or argument raises
simfa.InputError, whose message is the CLI's (`file:line:col: error: ...`, one per line); a run
that does not complete raises simfa.SimulationError. The simulator releases the GIL, so threads
of one process simulate in parallel.
"""
import csv
import functools
import io
import json
import os

from . import _simfa
from ._simfa import Error, InputError

__all__ = ["run", "analyze", "plugins", "rank", "sweep", "SweepRows",
           "Error", "InputError", "SimulationError"]
__version__ = _simfa.__version__


class SimulationError(Error):
    """A run that stopped without completing: deadlock, watchdog, stalled or timeout.

    outcome: the stats' kernel.outcome; stats: the stats dict (as far as the run got);
    report: every blocked WarpGroup, as the CLI prints it.
    """

    def __init__(self, outcome, stats, report):
        super().__init__(f"{outcome}\n{report}".rstrip())
        self.outcome = outcome
        self.stats = stats
        self.report = report


def _text(value):
    """A value as --set and --vary take it: TOML's true/false for booleans."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _sets(overrides):
    """{KEY: VALUE} or ["KEY=VALUE", ...] as --set arguments."""
    if overrides is None:
        return []
    if isinstance(overrides, dict):
        return [f"{k}={_text(v)}" for k, v in overrides.items()]
    if isinstance(overrides, str):
        raise TypeError("set: expected a dict {KEY: VALUE} or a list of 'KEY=VALUE' strings")
    return [str(s) for s in overrides]


def _workload_arg(workload):
    """An existing workload file as an absolute path: a Dask worker may run elsewhere."""
    return os.path.abspath(workload) if os.path.isfile(workload) else workload


def run(manifest, workload, set=None, stepping="event", timeout=0):
    """Simulates `workload` (as `simfa run --workload` takes it) on `manifest`.

    Returns the stats file as a dict, equal to what `simfa run --stats` writes (docs/stats.md).
    `set`: {KEY: VALUE} manifest overrides, as --set. `stepping`: "event" or "reference".
    `timeout`: wall-clock seconds, 0 for none.
    """
    outcome, stats, report = _simfa.run(os.fspath(manifest), workload, _sets(set), stepping,
                                        float(timeout))
    stats = json.loads(stats)
    if outcome != "completed":
        raise SimulationError(outcome, stats, report)
    return stats


def analyze(manifest, workload, set=None, sweep=None):
    """The analytical fast path: what `simfa analyze --json` prints, as a dict.

    `sweep`: {NAME: "A..B:xF" | "A..B:+S" | [V1, V2, ...]} or a list of "NAME=..." axes, as
    `simfa analyze --sweep` takes them; the result then holds "points".
    """
    if sweep is None:
        sweeps = []
    elif isinstance(sweep, dict):
        sweeps = [f"{k}={v if isinstance(v, str) else ','.join(_text(x) for x in v)}"
                  for k, v in sweep.items()]
    else:
        sweeps = [str(s) for s in sweep]
    return json.loads(_simfa.analyze(os.fspath(manifest), workload, _sets(set), sweeps))


def plugins():
    """Every plugin component found: name, version, kind, doc, library."""
    return _simfa.plugins()


def _number(text):
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text if text else None


def rank(manifest, workload, set=None, ranker="features", shortlist=8):
    """Triton TMA GEMM configs for `workload` ("gemm:m=M,n=N,k=K") ordered best first, as the
    rows of `simfa rank --csv`: the config, predicted_us, rank and every feature (docs/ranking.md).
    """
    text = _simfa.rank(os.fspath(manifest), workload, _sets(set), ranker, int(shortlist))
    return [{k: _number(v) for k, v in row.items()} for row in csv.DictReader(io.StringIO(text))]


_INTEGER_COLUMNS = {"point", "cycles", "llc_read_bytes", "llc_write_bytes", "dram_read_bytes",
                    "dram_write_bytes"}
_FLOAT_COLUMNS = {"time_us", "l2_hit_rate", "wall_seconds"}


class SweepRows(list):
    """A sweep's rows, one dict per point in grid order; the columns of `simfa sweep --csv`."""

    def to_dataframe(self):
        """The rows as a pandas DataFrame (pandas must be installed: apt install python3-pandas)."""
        import pandas
        return pandas.DataFrame(list(self))


def _row(columns, fields):
    axes = len(columns) - 1 - len(_simfa.result_columns)
    row = {}
    for i, (column, field) in enumerate(zip(columns, fields)):
        if 1 <= i <= axes:
            row[column] = _number(field)
        elif column in _INTEGER_COLUMNS:
            row[column] = int(field) if field else None
        elif column in _FLOAT_COLUMNS:
            row[column] = float(field) if field else None
        else:
            row[column] = field or None
    return row


def _sweep_point(manifest, workloads, sets, varies, timeout, index):
    """One point on a Dask worker: its CSV fields."""
    return _simfa.sweep_point(manifest, workloads, sets, varies, index, timeout)


def sweep(manifest, workload, vary, set=None, client=None, jobs=None, timeout=0):
    """Simulates the cross product of `vary` and returns one dict per point, in grid order.

    `workload`: a spec, or a list of them (then the first axis is "workload"). `vary`:
    {KEY: [V1, V2, ...]}, KEY a manifest key as `set` takes it or "workload.KEY" for a parameter
    of the workload spec; the first key is the outermost axis, the last varies fastest.
    `client`: a dask.distributed.Client; the points then run as tasks on its workers, which must
    import this module and read the manifest at the same path. Without one, the points run on
    `jobs` threads of this process (default: one per core). `timeout`: seconds per point.

    A point that fails is a row whose "error" says why; a sweep in which no point can be built
    (a misspelt key) raises InputError. The result is a SweepRows: a list with to_dataframe().
    """
    manifest = os.path.abspath(os.fspath(manifest))
    workloads = [_workload_arg(w) for w in ([workload] if isinstance(workload, str) else workload)]
    if not isinstance(vary, dict):
        raise TypeError("vary: expected a dict {KEY: [V1, V2, ...]}")
    varies = []
    for key, values in vary.items():
        if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
            values = [values]
        varies.append(f"{key}=" + ",".join(_text(v) for v in values))
    sets = _sets(set)
    timeout = float(timeout)
    if client is None:
        columns, rows = _simfa.sweep(manifest, workloads, sets, varies, int(jobs or 0), timeout)
    else:
        columns, points = _simfa.sweep_plan(manifest, workloads, sets, varies)
        task = functools.partial(_sweep_point, manifest, workloads, sets, varies, timeout)
        rows = client.gather(client.map(task, range(points), pure=False))
    return SweepRows(_row(columns, fields) for fields in rows)
