#!/usr/bin/env python3
"""Runs every committed H200 measurement of validation/h200/ through simfa (DESIGN.md section 12,
issue 17) and says how far the model is from the silicon.

  tools/validate.py SIMFA MANIFEST [SUITE...] [--csv OUT.csv] [--plot OUT.png] [--jobs N] [--fast]

For each suite (all of them when none is named; `microbenchmarks` names tma_chase and
tma_bandwidth) it prints a markdown table per compared quantity (point, SM clock, measured,
predicted, error), its MAPE and largest |error|, and checks the MAPE against the suite's
threshold in tools/validation_suites.toml. Each simulation runs at the SM clock its point ran at
(`--set gpu.clock_mhz=...`), `-q --stats FILE`; the prediction is read from the stats JSON
(docs/stats.md). `--fast` runs a handful of points per suite against the `fast` thresholds (the
CTest test `validation_fast`).

Suites (validation/h200/ file -> how simfa runs it -> what is compared; docs/validation.md):
  gemm_triton    gemm_triton.csv, gemm_ksweep_single_cta.csv -> the static TTGIR route
                 (tests/data/ttgir/gemm_tma.ttgir), the `gemm:` generator, the trace route where a
                 Proton trace exists -> in-kernel span and CUDA-event time
  gemm_suite     gemm_suite.csv -> the static route with the config's TTGIR (ttgir/gemm_bm.._g..)
                 and the `gemm:` generator -> span_us and event_us
  gemm_ncu       gemm_ncu.csv -> the static route -> DRAM read bytes, L2 read sectors
  analytical_ncu gemm_ncu.csv (+ gemm_ncu_cliff.csv), attention/ncu_attention_raw.csv -> `simfa analyze`
                 (the analytical model, milliseconds a point) -> DRAM read bytes; the GEMMs' LLC
                 bytes against the SMs' L2 read requests where every tile is whole
  attention_cudnn attention/attention_suite.csv (impl cudnn) -> the `fa3:` route, kernel=cudnn
                 -> CUDA-event time
  tma_chase      tma_chase.csv -> examples/microbench/tma_chase.trace -> cycles per step
  tma_edge       tma_load.csv (edge rows) -> examples/microbench/tma_edge.trace -> cycles per box
  tma_bandwidth  bandwidth.csv (TMA rows) -> tma_bulk_stream.trace, tma_2d_stream.trace -> GB/s
  tma_stride     dram_stride.csv (`bw panel` rows) -> tma_panel_stream.trace -> GB/s
  tma_loaded     tma_loaded.csv -> tma_loaded.trace (warm modes by difference of two passes and
                 one) -> cycles per box
  l2_writeback   validation/h100/dirty_l2/, whatever --data says (ncu's write-backs, CUDA events
                 after a write and a read flush) -> tma_bulk_stream.trace from the manifest's start
                 and from an empty L2, with the H100's memory system -> MB written back, us added
  tma_misaligned validation/h100/misaligned/, whatever --data says (tma_loaded's rings at row pitches
                 8192, 8208, 8256 B) -> tma_loaded.trace with COLS = pitch / 2 and the H100's memory
                 system -> a ring's cycles a box at the odd pitch over at 8192 B
The row-to-workload mappings read columns by header name, so new columns break nothing. A
point the `gemm:` generator rejects (a config it cannot express) is left out with a note.

`--data DIR` reads the measurements from DIR instead of validation/h200/ (another card's run of
the same set: validation/h100/session44/, docs/validation.md). Its attention files may lie at its
top instead of under attention/; a TTGIR dump it lacks (ttgir/, attention/ttgir/) is taken from
validation/h200/ (the same Triton compiled the same kernels), with a note in the report.
`--attention-clocks CSV` takes the attention points' SM clocks from another run's
attention_clocks.csv (a run without Nsight Compute's clocks) and leaves out their span metrics.

A suite whose measurement file is not committed yet is skipped with a note. Exit status: 0 when
every compared quantity is within its threshold, 3 when one is past it, 1 on an error (missing
binary, manifest or input file, a bad CSV row, a failed simulation), 2 on bad usage.
"""
import argparse
import csv
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
H200 = ROOT / "validation" / "h200"   # the measurements: --data moves it
# The companions of the measurements (the TTGIR dumps of the GEMM and attention kernels): a --data
# directory without its own takes validation/h200's (data_companion)
COMPANIONS = ROOT / "validation" / "h200"
THRESHOLDS = Path(__file__).resolve().parent / "validation_suites.toml"
DEFAULT_TTGIR = ROOT / "tests" / "data" / "ttgir" / "gemm_tma.ttgir"
MICROBENCH = ROOT / "examples" / "microbench"


class ValidationError(Exception):
    """An input the tool cannot use; the message names the file and line."""


def rel(path):
    try:
        return str(Path(path).resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


# ---- the measurements -------------------------------------------------------------------------

def data_path(name):
    """A measurement file under the data directory (--data): as named, or, for `attention/X`, X
    at the directory's top where a run kept its attention files beside the rest
    (validation/h100/session44/)."""
    path = H200 / name
    if not path.exists() and name.startswith("attention/"):
        flat = H200 / name.split("/", 1)[1]
        if flat.exists():
            return flat
    return path


COMPANIONS_USED = set()


def data_companion(name):
    """A companion of the measurements (a TTGIR dump: ttgir/X, attention/ttgir/X) under the data
    directory, or else validation/h200's: the same Triton (3.6.0) compiled the same kernels for
    sm_90a on both cards, and a run that kept its dumps out of the data (validation/h100/
    session44/) is read against the H200's. Each such fallback is noted in the report."""
    path = data_path(name)
    if path.exists():
        return path
    fallback = COMPANIONS / name
    if fallback.exists() and fallback != path:
        COMPANIONS_USED.add(str(Path(name).parent))
        return fallback
    return path


@dataclass
class Row:
    """One CSV row: its values by header name and where it came from."""
    values: dict
    path: Path
    line: int

    @property
    def where(self):
        return f"{rel(self.path)}:{self.line}"

    def has(self, *names):
        return any(self.values.get(n, "") not in ("", None) for n in names)

    def text(self, *names, default=None):
        for n in names:
            v = self.values.get(n)
            if v not in ("", None):
                return v.strip()
        if default is not None:
            return default
        raise ValidationError(f"{self.where}: no value in column {' or '.join(repr(n) for n in names)}")

    def num(self, *names, default=None):
        for n in names:
            v = self.values.get(n)
            if v in ("", None):
                continue
            try:
                x = float(v.replace(",", "").strip())
            except ValueError:
                raise ValidationError(f"{self.where}: column '{n}' is '{v}', not a number") from None
            if not math.isfinite(x):
                raise ValidationError(f"{self.where}: column '{n}' is '{v}', not a finite number")
            return x
        if default is not None:
            return default
        raise ValidationError(f"{self.where}: no value in column {' or '.join(repr(n) for n in names)}")

    def int(self, *names, default=None):
        x = self.num(*names, default=default)
        if x != int(x):
            raise ValidationError(f"{self.where}: column '{names[0]}' is {x}, not an integer")
        return int(x)


def read_csv(path, required=()):
    """The rows of a CSV by header name (so new columns never break a suite), with line numbers."""
    path = Path(path)
    if not path.is_file():
        raise ValidationError(f"{rel(path)}: no such file")
    with open(path, newline="") as f:
        reader = csv.reader(f)
        try:
            header = [h.strip() for h in next(reader)]
        except StopIteration:
            raise ValidationError(f"{rel(path)}:1: empty file, no header") from None
        for name in required:
            names = name if isinstance(name, tuple) else (name,)
            if not any(n in header for n in names):
                raise ValidationError(f"{rel(path)}:1: no column {' or '.join(repr(n) for n in names)}"
                                      f" (columns: {', '.join(header)})")
        rows = []
        for fields in reader:
            if not fields or all(not x.strip() for x in fields):
                continue
            if len(fields) > len(header):
                raise ValidationError(f"{rel(path)}:{reader.line_num}: {len(fields)} fields, the header has"
                                      f" {len(header)}")
            rows.append(Row(dict(zip(header, fields)), path, reader.line_num))
        return rows


# ---- simulations ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Sim:
    """One `simfa run`: a workload (a `NAME:key=value` spec, or the text of a [workload] TOML
    file) at an SM clock (None: the manifest's). Equal Sims run once."""
    workload: str
    clock_mhz: float | None
    cost: float = field(default=1.0, compare=False)  # relative run time, longest first
    command: str = "run"   # "analyze": the analytical model (`simfa analyze --json`), whose JSON is the stats
    sets: tuple = ()       # manifest overrides of this point alone (`--set KEY=VALUE` each)

    def set_args(self):
        """The `--set` arguments of this point: its SM clock, then its own overrides."""
        clock = [f"gpu.clock_mhz={self.clock_mhz:g}"] if self.clock_mhz else []
        return [arg for kv in clock + list(self.sets) for arg in ("--set", kv)]

    @property
    def label(self):
        w = self.workload
        if w.startswith("[workload]"):
            m = re.search(r'defines = "([^"]*)"', w)
            p = re.search(r'path = "([^"]*)"', w)
            w = f"{Path(p.group(1)).name if p else 'trace'} {m.group(1) if m else ''}"
        return f"{w} @ {self.clock_mhz} MHz" if self.clock_mhz else w


class Simulator:
    def __init__(self, simfa, manifest, jobs, cache=None, workload_keys=()):
        self.simfa, self.manifest, self.jobs = simfa, manifest, jobs
        # (frontend, "k=v,...") pairs: keys appended to every `frontend:` spec (--workload-keys)
        self.workload_keys = tuple(workload_keys)
        self.cache = Path(cache) if cache else None
        self._identity = None
        self.tmp = tempfile.TemporaryDirectory(prefix="simfa_validate_")
        self.counter = 0
        self.lock = threading.Lock()
        self.running = set()   # the simfa processes in flight
        self.stopping = False
        self._gemm_keys = None

    def identity(self):
        """What a cached result depends on besides the workload and clock: the binary, its
        plugins (../lib/simfa/plugins) and the manifest's text (with the files it extends)."""
        if self._identity is None:
            import hashlib
            h = hashlib.sha256()
            binary = Path(self.simfa)
            files = [binary] + sorted((binary.parent.parent / "lib" / "simfa" / "plugins").glob("*.so"))
            manifests, todo = [], [Path(self.manifest)]
            while todo:
                m = todo.pop()
                manifests.append(m)
                for ext in re.findall(r'^\s*extends\s*=\s*"([^"]+)"', m.read_text(), re.M):
                    todo.append((m.parent / ext).resolve())
            for f in files + manifests:
                h.update(str(f).encode() + b"\0" + f.read_bytes())
            self._identity = h.hexdigest()
        return self._identity

    def has_key(self, setting):
        """Whether the manifest takes `setting` (KEY=VALUE): `simfa validate --set` accepts it."""
        run = subprocess.run([self.simfa, "validate", str(self.manifest), "--set", setting],
                             capture_output=True, text=True)
        return run.returncode == 0 and "error" not in run.stderr

    def workload_of(self, sim):
        """The point's workload with the --workload-keys of its frontend appended."""
        w = sim.workload
        for frontend, keys in self.workload_keys:
            if w.startswith(frontend + ":"):
                w += ("" if w.endswith(":") else ",") + keys
        return w

    def cache_file(self, sim):
        import hashlib
        mode = "" if sim.command == "run" else f"\0{sim.command}"
        sets = "".join(f"\0{kv}" for kv in sim.sets)
        key = hashlib.sha256(f"{self.identity()}\0{self.workload_of(sim)}\0{sim.clock_mhz}{mode}{sets}".encode()).hexdigest()
        return self.cache / f"{key[:32]}.json"

    def run_one(self, sim):
        if self.cache:
            cached = self.cache_file(sim)
            if cached.is_file():
                with open(cached) as f:
                    return json.load(f), 0.0, None
        stats, wall, err = self.simulate(sim)
        if self.cache and stats is not None:
            self.cache.mkdir(parents=True, exist_ok=True)
            tmp = cached.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
            tmp.write_text(json.dumps(stats))
            tmp.replace(cached)
        return stats, wall, err

    def simulate(self, sim):
        with self.lock:
            self.counter += 1
            n = self.counter
        if sim.command == "analyze":
            return self.analyze(sim)
        stats = Path(self.tmp.name) / f"{n}.json"
        workload = self.workload_of(sim)
        if workload.startswith("[workload]"):
            wfile = Path(self.tmp.name) / f"{n}.toml"
            wfile.write_text(workload)
            workload = str(wfile)
        cmd = [self.simfa, "run", self.manifest, "-q", "--workload", workload, "--stats", str(stats),
               *sim.set_args()]
        t0 = time.monotonic()
        with self.lock:
            if self.stopping:
                return None, 0.0, "stopped"
            p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            self.running.add(p)
        out, err = p.communicate()
        with self.lock:
            self.running.discard(p)
        wall = time.monotonic() - t0
        if p.returncode != 0 or not stats.is_file():
            tail = (err or out).strip().splitlines()[-8:]
            return None, wall, f"simfa exited {p.returncode}: {' '.join(cmd)}\n    " + "\n    ".join(tail)
        with open(stats) as f:
            data = json.load(f)
        stats.unlink()
        data.pop("manifest", None)
        if data.get("kernel", {}).get("outcome", "completed") != "completed":
            return None, wall, f"kernel outcome '{data['kernel']['outcome']}': {' '.join(cmd)}"
        return data, wall, None

    def analyze(self, sim):
        """`simfa analyze MANIFEST --workload SPEC --json`: the analytical model's point."""
        cmd = [self.simfa, "analyze", self.manifest, "--workload", sim.workload, "--json",
               *sim.set_args()]
        t0 = time.monotonic()
        p = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.monotonic() - t0
        if p.returncode != 0:
            tail = (p.stderr or p.stdout).strip().splitlines()[-8:]
            return None, wall, f"simfa exited {p.returncode}: {' '.join(cmd)}\n    " + "\n    ".join(tail)
        try:
            data = json.loads(p.stdout)
        except json.JSONDecodeError as e:
            return None, wall, f"{' '.join(cmd)}: not JSON ({e})"
        return data, wall, None

    def stop(self):
        """Terminates the simulations in flight and starts no other (on an interrupt)."""
        with self.lock:
            self.stopping = True
            for p in self.running:
                p.terminate()

    def run_all(self, sims, progress):
        """Runs every distinct Sim, `jobs` at a time, the costliest first. Returns {sim: stats}
        and {sim: error}."""
        unique = sorted(set(sims), key=lambda s: -s.cost)
        results, errors = {}, {}
        done = 0
        pool = ThreadPoolExecutor(max_workers=self.jobs)
        futures = {pool.submit(self.run_one, s): s for s in unique}
        try:
            for fut in as_completed(futures):
                sim = futures[fut]
                stats, wall, err = fut.result()
                done += 1
                if err:
                    errors[sim] = err
                else:
                    results[sim] = stats
                if progress:
                    print(f"[{done}/{len(unique)}] {wall:6.1f} s  {sim.label}", file=sys.stderr, flush=True)
        except BaseException:
            self.stop()
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
        return results, errors

    def gemm_keys(self):
        """The parameter names workload.gemm declares (`simfa plugins --describe`), so the gemm
        route passes the Triton config keys the generator knows and no other."""
        if self._gemm_keys is None:
            p = subprocess.run([self.simfa, "plugins", "--describe", "workload.gemm"],
                               capture_output=True, text=True)
            keys, table = set(), False
            for line in p.stdout.splitlines():
                if line.strip().startswith("NAME"):
                    table = True
                    continue
                if table and line.strip():
                    keys.add(line.split()[0])
            self._gemm_keys = keys or {"m", "n", "k", "block_m", "block_n", "block_k", "stages", "raster"}
        return self._gemm_keys


# ---- points and suites ------------------------------------------------------------------------

@dataclass
class Point:
    metric: str            # which compared quantity (a key of the suite's thresholds)
    label: str             # the point, as printed
    where: str             # file:line of its measurement
    clock_mhz: float | None
    measured: float
    sims: tuple            # Sims whose stats the prediction reads
    predict: object        # f(list of stats) -> (predicted, simulated quantity's name)
    optional: bool = False  # a route that may not express the point: a rejected workload skips it
    predicted: float | None = None
    compared: str = ""

    @property
    def error(self):
        return 100.0 * (self.predicted - self.measured) / self.measured


@dataclass
class Metric:
    unit: str
    measured: str          # what was measured, said in words
    route: str = ""        # how it is simulated, when the suite has several routes
    fmt: str = "{:.1f}"


@dataclass
class Suite:
    name: str
    title: str
    files: list            # the measurement files; the first missing one skips the suite
    metrics: dict          # metric id -> Metric
    build: object          # f(ctx, fast) -> (points, notes)
    # What the L2 held before the measured launches: "write" (a buffer written, as do_bench's
    # cache.zero_(): the manifest's memory.l2.start_dirty stands) or "clean" (a buffer read, as
    # membench.cu's flush_read; ncu's --cache-control all; or the kernel's own lines, warm): its
    # points run with start_dirty = 0 (docs/calibration.md §42).
    flush: str = "write"

    def __post_init__(self):
        if self.flush not in ("write", "clean"):
            raise ValueError(f"suite {self.name}: flush must be 'write' or 'clean', not '{self.flush}'")


class Context:
    def __init__(self, simulator, routes=("static", "gemm", "trace")):
        self.sim = simulator
        self.routes = routes   # the GEMM routes compared (--routes)
        self._signatures = {}
        self._clean_l2 = None

    def clean_l2(self):
        """The settings that start a run with an empty L2 (memory.l2.start_dirty = 0), for points
        measured after a read flush or warm; none where the manifest has no such key."""
        if self._clean_l2 is None:
            setting = "memory.l2.start_dirty=0"
            self._clean_l2 = (setting,) if self.sim.has_key(setting) else ()
        return self._clean_l2

    def ttgir_args(self, path):
        """The top-level argument names of a TTGIR kernel and whether each is a tensor descriptor
        (Triton 3.6 passes a descriptor's shape and strides as extra `%NAME_i` arguments, which
        the frontend fills from NAME.shape)."""
        if path not in self._signatures:
            text = Path(path).read_text()
            m = re.search(r"tt\.func public @\w+\((.*?)\)\s*attributes", text, re.S)
            if not m:
                raise ValidationError(f"{rel(path)}: no `tt.func public` signature")
            args = []
            for name, typ, loc in re.findall(r'%(\w+):\s*(.*?)\s*loc\("([^"]*)"', m.group(1)):
                if name == loc:
                    args.append((name, typ.startswith("!tt.tensordesc")))
            self._signatures[path] = args
        return self._signatures[path]


def cdiv(a, b):
    return -(-a // b)


@dataclass(frozen=True)
class GemmConfig:
    m: int
    n: int
    k: int
    bm: int = 128
    bn: int = 128
    bk: int = 64
    stages: int = 3
    warps: int = 4
    group_m: int = 8

    @property
    def tile_config(self):
        return self.bm, self.bn, self.bk, self.stages, self.warps, self.group_m

    @property
    def tiles(self):
        return cdiv(self.m, self.bm) * cdiv(self.n, self.bn)

    @property
    def flops(self):
        return 2.0 * self.m * self.n * self.k

    @property
    def label(self):
        return (f"{self.m}x{self.n}x{self.k} {self.bm}x{self.bn}x{self.bk} s{self.stages} "
                f"w{self.warps} g{self.group_m}")

    def is_default(self):
        return self.tile_config == (128, 128, 64, 3, 4, 8)

    @property
    def cost(self):
        # ~ seconds of one simulation (Release, h200.toml): 3e-4 s per CTA k-tile
        return 3e-4 * self.tiles * cdiv(self.k, self.bk) * self.bm * self.bn / (128 * 128)


def gemm_config(row):
    """M, N, K and the Triton config of a GEMM row: block_m/block_n/block_k columns or one
    `block` column (128x128x64); stages, warps, group_m with Triton's defaults of these runs."""
    m, n, k = row.int("M"), row.int("N"), row.int("K")
    if row.has("block_m"):
        bm, bn, bk = row.int("block_m"), row.int("block_n"), row.int("block_k")
    elif row.has("block"):
        parts = row.text("block").lower().split("x")
        if len(parts) != 3 or not all(p.isdigit() for p in parts):
            raise ValidationError(f"{row.where}: column 'block' is '{row.text('block')}', not BMxBNxBK")
        bm, bn, bk = map(int, parts)
    else:
        bm, bn, bk = 128, 128, 64
    cfg = GemmConfig(m, n, k, bm, bn, bk, row.int("stages", "num_stages", default=3),
                     row.int("warps", "num_warps", default=4), row.int("group_m", "GROUP_M", default=8))
    if min(m, n, k, bm, bn, bk, cfg.stages, cfg.warps, cfg.group_m) <= 0:
        raise ValidationError(f"{row.where}: a GEMM size or config value is not positive ({cfg.label})")
    return cfg


def ttgir_file(cfg, row, fallback):
    """The TTGIR dumped for this config (validation/h200/ttgir/gemm_bm.._g...ttgir); the
    committed 128x128x64 s3 w4 g8 kernel (tests/data/ttgir/gemm_tma.ttgir) when `fallback` and
    the config is that one."""
    path = data_companion(f"ttgir/gemm_bm{cfg.bm}_bn{cfg.bn}_bk{cfg.bk}_s{cfg.stages}_w{cfg.warps}"
                          f"_g{cfg.group_m}.ttgir")
    if path.is_file():
        return path
    if fallback and cfg.is_default():
        return DEFAULT_TTGIR
    raise ValidationError(f"{row.where}: no TTGIR for {cfg.label}: expected {rel(path)}")


def static_sim(ctx, cfg, row, clock, fallback=True):
    """The static TTGIR route: the Triton kernel's TTGIR over Triton's 1-D grid."""
    path = ttgir_file(cfg, row, fallback)
    shapes = {"a": f"{cfg.m}x{cfg.k}", "b": f"{cfg.n}x{cfg.k}", "c": f"{cfg.m}x{cfg.n}"}
    scalars = {"M": cfg.m, "N": cfg.n, "K": cfg.k}
    args = []
    for name, is_desc in ctx.ttgir_args(path):
        if is_desc and name[0].lower() in shapes:
            args.append(f"{name}.shape={shapes[name[0].lower()]}")
        elif name in scalars:
            args.append(f"{name}={scalars[name]}")
    return Sim(f"ttgir:file={path},grid={cfg.tiles},args={';'.join(args)}", clock, cfg.cost)


def gemm_route_sim(ctx, cfg, clock):
    """The `gemm:` generator (docs/workloads.md) on the same shape and config: GROUP_M = 1 is its
    row_major raster, any other GROUP_M its grouped raster with group_m = GROUP_M (Triton's
    matmul order); warps = num_warps. A key the generator does not declare is left out (an older
    generator: grouped meant GROUP_M = 8, one WarpGroup)."""
    keys = ctx.sim.gemm_keys()
    spec = {"m": cfg.m, "n": cfg.n, "k": cfg.k, "block_m": cfg.bm, "block_n": cfg.bn,
            "block_k": cfg.bk, "stages": cfg.stages}
    if cfg.group_m == 1:
        spec["raster"] = "row_major"
    else:
        spec["raster"] = "grouped"
        spec["group_m"] = cfg.group_m
    spec["warps"] = cfg.warps
    spec = {k: v for k, v in spec.items() if k in keys or k in ("m", "n", "k")}
    return Sim("gemm:" + ",".join(f"{k}={v}" for k, v in spec.items()), clock, cfg.cost)


def kernel_span(stats):
    return stats[0]["kernel"]["time_us"], "kernel.time_us"


def kernel_event_time(stats):
    """The event-measured time the model gives (a launch-overhead model adds it to the kernel
    object); the span while it does not."""
    kernel = stats[0]["kernel"]
    for key in ("event_us", "event_time_us", "launch_time_us", "measured_us"):
        if isinstance(kernel.get(key), (int, float)):
            return kernel[key], f"kernel.{key}"
    return kernel["time_us"], "kernel.time_us (no event-time field in the stats)"


def gemm_time_points(ctx, rows, span_cols, event_cols, clock_cols, fallback, trace_for=None):
    """Per row: the span (and the event time, when measured) against the static TTGIR route and
    the gemm generator, each at the row's SM clock."""
    points = []
    for row in rows:
        cfg = gemm_config(row)
        clock = row.num(*clock_cols)
        static = static_sim(ctx, cfg, row, clock, fallback)
        generated = gemm_route_sim(ctx, cfg, clock)
        span = row.num(*span_cols)
        for route, sim in (("static", static), ("gemm", generated)):
            if route not in ctx.routes:
                continue
            optional = route == "gemm"
            points.append(Point(f"{route}_span", cfg.label, row.where, clock, span, (sim,), kernel_span,
                                optional))
            if event_cols and row.has(*event_cols):
                points.append(Point(f"{route}_event", cfg.label, row.where, clock, row.num(*event_cols),
                                    (sim,), kernel_event_time, optional))
        trace = trace_for(cfg) if trace_for and "trace" in ctx.routes else None
        if trace:
            args = static.workload.split(",args=")[1]
            sim = Sim(f"ttgir:trace={trace},ttgir={DEFAULT_TTGIR},args={args}", clock, cfg.cost)
            points.append(Point("trace_span", cfg.label, row.where, clock, span, (sim,), kernel_span))
    return points


def time_metrics(what_span, what_event, trace=False):
    ms = {}
    for route, words in (("static", "the static TTGIR route"), ("gemm", "the `gemm:` generator")):
        ms[f"{route}_span"] = Metric("us", what_span, words)
        if what_event:
            ms[f"{route}_event"] = Metric("us", what_event, words)
    if trace:
        ms["trace_span"] = Metric("us", what_span, "the TTGIR trace route (Proton traces)")
    return ms


# gemm_triton ------------------------------------------------------------------------------------

TRITON_TRACES = {(128, 128, 512): "gemm_128x128x512.chrome_trace",
                 (128, 128, 1024): "gemm_128x128x1024.chrome_trace",
                 (4096, 4096, 512): "gemm_4096x4096x512.chrome_trace.gz"}
TRITON_FAST = {(128, 128, 512), (1024, 1024, 1024), (4096, 4096, 512)}


def build_gemm_triton(ctx, fast):
    rows = []
    for name in ("gemm_ksweep_single_cta.csv", "gemm_triton.csv"):
        rows += read_csv(H200 / name, required=("M", "N", "K", "inkernel_span_us", "inkernel_sm_mhz"))
    if fast:
        rows = [r for r in rows if (r.int("M"), r.int("N"), r.int("K")) in TRITON_FAST]

    def trace_for(cfg):
        t = TRITON_TRACES.get((cfg.m, cfg.n, cfg.k))
        if t and cfg.is_default() and (H200 / "traces" / t).is_file():
            return H200 / "traces" / t
        return None
    return gemm_time_points(ctx, rows, ("inkernel_span_us",), ("time_us",),
                            ("inkernel_sm_mhz", "sm_clock_mhz"), True, trace_for), []


# gemm_suite -------------------------------------------------------------------------------------

def fast_rows(rows, n):
    """A handful of cheap rows that cover the set: the smallest GEMMs, each of a category and a
    tile config not chosen yet where there is one, then of a new category or config."""
    def key(r):
        return r.text("category", default="-"), gemm_config(r).tile_config
    rows = sorted(rows, key=lambda r: gemm_config(r).flops)
    chosen, cats, cfgs = [], set(), set()
    for new in (lambda c, g: c not in cats and g not in cfgs, lambda c, g: c not in cats or g not in cfgs,
                lambda c, g: True):
        for r in rows:
            c, g = key(r)
            if len(chosen) < n and r not in chosen and new(c, g):
                chosen.append(r)
                cats.add(c)
                cfgs.add(g)
    return sorted(chosen, key=lambda r: r.line)


def build_gemm_suite(ctx, fast):
    rows = read_csv(H200 / "gemm_suite.csv", required=("M", "N", "K", "span_us", ("inkernel_sm_mhz", "sm_clock_mhz")))
    if fast:
        rows = fast_rows(rows, 4)
    return gemm_time_points(ctx, rows, ("span_us", "inkernel_span_us"), ("event_us",),
                            ("inkernel_sm_mhz", "sm_clock_mhz", "nvml_sm_mhz_med"), True), []


# gemm_ncu ---------------------------------------------------------------------------------------

def column(rows, prefix):
    """The header that is `prefix` or starts with it (ncu may append a unit: `... [byte]`)."""
    for name in rows[0].values if rows else ():
        if name == prefix or name.startswith(prefix + " ") or name.startswith(prefix + "["):
            return name
    return None


def slice_read_sectors(stats):
    """The read sectors the L2 slices look up (lts__t_sectors_op_read): the SMs' reads and the far
    reads that cross to their home slice (lts__t_sectors_srcunit_ltcfabric_op_read), l2.remote_copy's
    fabric_read_bytes (docs/memory-hierarchy.md section 4); an L2 of one partition has none."""
    memory = stats[0]["memory"]
    return ((memory["llc_read_bytes"] + memory["l2"].get("fabric_read_bytes", 0)) / 32,
            "(memory.llc_read_bytes + memory.l2.fabric_read_bytes) / 32")


def build_gemm_ncu(ctx, fast):
    rows = read_csv(H200 / "gemm_ncu.csv", required=("M", "N", "K"))
    dram, sectors = column(rows, "dram__bytes_read.sum"), column(rows, "lts__t_sectors_op_read.sum")
    tex = column(rows, "lts__t_sectors_srcunit_tex_op_read.sum")
    notes = []
    if not dram and not sectors:
        raise ValidationError(f"{rel(H200 / 'gemm_ncu.csv')}:1: neither dram__bytes_read.sum nor "
                              "lts__t_sectors_op_read.sum is a column")
    for name, unit in ((dram, "byte"), (sectors, "sector"), (tex, "sector")):
        if name and "[" in name and unit not in name.split("[")[1]:
            raise ValidationError(f"{rel(H200 / 'gemm_ncu.csv')}:1: column '{name}' is not in {unit}s")
    if fast:
        rows = fast_rows(rows, 3)
    points = []
    for row in rows:
        cfg = gemm_config(row)
        clock = row.num("inkernel_sm_mhz", "sm_clock_mhz", "sm_mhz", "gpc_mhz", "nvml_sm_mhz_med",
                        default=0.0) or None
        sim = static_sim(ctx, cfg, row, clock)
        if dram and row.has(dram):
            points.append(Point("dram_read_bytes", cfg.label, row.where, clock, row.num(dram), (sim,),
                                lambda s: (s[0]["memory"]["dram_read_bytes"], "memory.dram_read_bytes")))
        llc_sectors = lambda s: (s[0]["memory"]["llc_read_bytes"] / 32, "memory.llc_read_bytes / 32")
        if sectors and row.has(sectors):
            points.append(Point("l2_read_sectors", cfg.label, row.where, clock, row.num(sectors), (sim,),
                                slice_read_sectors))
        if tex and row.has(tex):
            points.append(Point("l2_tex_read_sectors", cfg.label, row.where, clock, row.num(tex), (sim,),
                                llc_sectors))
    return points, notes


# analytical_ncu ---------------------------------------------------------------------------------

# The attention kernels of validation/h200/attention/ncu_attention_raw.csv as the fa3 spec writes
# them (validation/h200/attention/README.md): cuDNN's persistent SDPA kernel (132 CTAs walking
# Q tiles of 128 rows, Q tile fastest, then head; `..._64x128x128_4x1x1`: a producer and two
# 64-row consumers, 128-key K/V tiles) and Triton's attn_fwd (one CTA per 128-row Q tile, 64-key
# tiles, one CTA per SM by shared memory). Both stream Q tiles in the fa3 model's launch order.
ATTENTION_TILES = {"cudnn": (128, 128), "triton": (128, 64)}
ANALYTICAL_GEMM_FAST = {(3072, 3072, 3072, 128, 128), (4096, 4096, 4096, 64, 128), (8192, 8192, 2048, 64, 128),
                        (4096, 14336, 4096, 128, 256), (1024, 1024, 1024, 128, 128), (1000, 4000, 3000, 64, 128),
                        (16384, 16384, 2048, 128, 128)}   # the last from gemm_ncu_cliff.csv
ANALYTICAL_ATTENTION_FAST = {4, 6, 8, 11, 14}   # ncu_points.csv orders: 16K, 32K, 64K, causal 64K, MHA 32K


def analytical_gemm_spec(cfg, row):
    """The `gemm:` spec of a Triton GEMM row for `simfa analyze`: its tiles and stages (which set
    how many CTAs an SM holds) and raster (GROUP_M = 1: row-major; 8: grouped)."""
    if cfg.group_m not in (1, 8):
        raise ValidationError(f"{row.where}: GROUP_M = {cfg.group_m}: the analytical model knows row-major "
                              "(GROUP_M = 1) and Triton's GROUP_M = 8 only")
    raster = "row_major" if cfg.group_m == 1 else "grouped"
    return (f"gemm:m={cfg.m},n={cfg.n},k={cfg.k},block_m={cfg.bm},block_n={cfg.bn},block_k={cfg.bk},"
            f"stages={cfg.stages},raster={raster}")


def analytical_read_bytes(stats):
    return stats[0]["result"]["dram_read_bytes"], "result.dram_read_bytes"


def analytical_llc_bytes(stats):
    return stats[0]["result"]["llc_read_bytes"], "result.llc_read_bytes"


# The read sectors the SMs request of the L2 before the LRC merges any (ncu's LRC counter; 32 B a
# sector). The model counts the bytes inside the tensors, the silicon whole sectors and the rows of
# a box past a tensor's edge (tma_load.csv): the two are the same quantity where every tile is
# whole and every box row whole lines, which is where the model claims exactness (issue 18: LLC
# bytes exact). Points with a partial tile are left out of the metric (docs/analytical.md).
LLC_REQUEST_SECTORS = "lrc__request_sectors_op_read_coalescable.sum"


def analytical_llc_aligned(cfg):
    return cfg.m % cfg.bm == 0 and cfg.n % cfg.bn == 0 and cfg.k % cfg.bk == 0


# Later ncu runs of gemm_ncu.csv's points on other lent H200s (validation/h200/README.md): past the
# L2's cliff a launch's DRAM reads move from run to run, so every run counts
GEMM_NCU_REPEATS = ("repeat/issue17_run1_gemm_ncu.csv", "repeat/issue17_run3_gemm_ncu.csv",
                    "session41/ncu_longk_run1_gemm_ncu.csv", "session41/ncu_longk_run2_gemm_ncu.csv")


def build_analytical_ncu(ctx, fast):
    """The analytical model (`simfa analyze`) against ncu's DRAM reads: every GEMM of gemm_ncu.csv
    (and gemm_ncu_cliff.csv once committed) and of the later runs that repeat some of them
    (GEMM_NCU_REPEATS, each run a point of its own; not in the fast subset), and every attention point of
    attention/ncu_attention_raw.csv, cold L2 (`--cache-control all`)."""
    points, notes = [], []
    gemm_files = [f for f in ("gemm_ncu.csv", "gemm_ncu_cliff.csv") + (() if fast else GEMM_NCU_REPEATS)
                  if (H200 / f).is_file()]
    if not (H200 / "gemm_ncu_cliff.csv").is_file():
        notes.append("gemm_ncu_cliff.csv is not committed yet: the GEMMs are gemm_ncu.csv's")
    for name in gemm_files:
        rows = read_csv(H200 / name, required=("M", "N", "K", "dram__bytes_read.sum"))
        for row in rows:
            cfg = gemm_config(row)
            if fast and (cfg.m, cfg.n, cfg.k, cfg.bm, cfg.bn) not in ANALYTICAL_GEMM_FAST:
                continue
            sim = Sim(analytical_gemm_spec(cfg, row), None, 0.0, "analyze")
            points.append(Point("gemm_dram_read_bytes", cfg.label, row.where, None, row.num("dram__bytes_read.sum"),
                                (sim,), analytical_read_bytes))
            if analytical_llc_aligned(cfg) and row.has(LLC_REQUEST_SECTORS):
                points.append(Point("gemm_llc_read_bytes", cfg.label, row.where, None,
                                    32 * row.num(LLC_REQUEST_SECTORS), (sim,), analytical_llc_bytes))
    shapes = {r.int("order"): r for r in read_csv(H200 / "attention" / "ncu_points.csv",
                                                    required=("order", "impl", "Z", "HQ", "HKV", "L", "D", "causal"))}
    raw = read_csv(H200 / "attention" / "ncu_attention_raw.csv", required=("ID", "Kernel Name", "dram__bytes_read.sum"))
    for row in raw:
        if not row.has("ID"):
            continue   # ncu's units row
        order = row.int("ID")
        if order not in shapes:
            raise ValidationError(f"{row.where}: ID {order} is not an order of attention/ncu_points.csv")
        shape = shapes[order]
        impl = shape.text("impl")
        if impl not in ATTENTION_TILES:
            raise ValidationError(f"{shape.where}: impl '{impl}': expected {' or '.join(ATTENTION_TILES)}")
        kernel = row.text("Kernel Name")
        if ("cudnn" in kernel) != (impl == "cudnn"):
            raise ValidationError(f"{row.where}: kernel {kernel} is not the {impl} point {order} of ncu_points.csv")
        if fast and order not in ANALYTICAL_ATTENTION_FAST:
            continue
        bm, bn = ATTENTION_TILES[impl]
        causal = "true" if shape.int("causal") else "false"
        spec = (f"fa3:batch={shape.int('Z')},heads={shape.int('HQ')},kv_heads={shape.int('HKV')},"
                f"seqlen={shape.int('L')},head_dim={shape.int('D')},block_m={bm},block_n={bn},causal={causal}")
        label = (f"{impl} {shape.int('Z')}x{shape.int('HQ')}x{shape.int('HKV')}x{shape.int('L')}x{shape.int('D')}"
                 f"{' causal' if shape.int('causal') else ''}")
        points.append(Point("attention_dram_read_bytes", label, row.where, None, row.num("dram__bytes_read.sum"),
                            (Sim(spec, None, 0.0, "analyze"),), analytical_read_bytes))
    return points, notes


# microbenchmarks --------------------------------------------------------------------------------

def trace_workload(trace, defines):
    return (f'[workload]\nfrontend = "trace"\npath = "{MICROBENCH / trace}"\n'
            f'defines = "{defines}"\n')


MiB = 1 << 20
CHASE_FAST = {(1 * MiB, "warm", 128), (40 * MiB, "warm", 128), (80 * MiB, "warm", 128)}


def build_tma_chase(ctx, fast):
    """tma_chase.csv: cycles per TMA_BULK + MB_WAIT step against working set, warm and cold, by
    difference (docs/calibration.md section 1): (cycles(WARM + STEPS) - cycles(WARM)) / STEPS,
    WARM and STEPS the row's warmup_loads and loads."""
    rows = read_csv(H200 / "tma_chase.csv", required=("working_set_bytes", "mode", "bytes_per_copy",
                                                      "cycles_per_load", "sm_clock_mhz", "loads",
                                                      "warmup_loads"))
    points = []
    for row in rows:
        ws, mode, size = row.int("working_set_bytes"), row.text("mode"), row.int("bytes_per_copy")
        if fast and (ws, mode, size) not in CHASE_FAST:
            continue
        warm, steps, clock = row.int("warmup_loads"), row.int("loads"), row.num("sm_clock_mhz")
        if steps <= 0:
            raise ValidationError(f"{row.where}: loads is {steps}")
        base = f"WS={ws} BYTES={size} WARM={warm}"
        # ~ 6 us per step
        timed = Sim(trace_workload("tma_chase.trace", f"{base} STEPS={steps}"), clock, 6e-6 * (warm + steps))
        untimed = Sim(trace_workload("tma_chase.trace", f"{base} STEPS=0"), clock, 6e-6 * warm)

        def predict(s, steps=steps):
            return (s[0]["kernel"]["cycles"] - s[1]["kernel"]["cycles"]) / steps, "kernel.cycles difference / steps"
        label = f"{ws // MiB} MiB" if ws % MiB == 0 else f"{ws} B"
        points.append(Point(f"{mode}_{size}B", label, row.where, clock, row.num("cycles_per_load"),
                            (timed, untimed), predict))
    return points, ["pointer_chase.csv (the `ld.global.cg` chase) has no simulated twin: the trace "
                    "format has no global load; its curve is the same as tma_chase.csv's, 111 cycles "
                    "lower (validation/h200/README.md section 1b)."]


def build_tma_box(ctx, fast):
    """tma_first.csv's warm rows: one CTA, one 2D box of R rows (or one bulk copy of R x 128 B)
    from the L2 at a time, by difference: (cycles(LOADS=6) - cycles(LOADS=0)) / 6 with
    examples/microbench/tma_box_warm.trace (both runs load the box once more, untimed, first)."""
    rows = read_csv(H200 / "tma_first.csv", required=("mode", "grid", "cycles_med"))
    points = []
    for row in rows:
        mode = row.text("mode")
        if not mode.startswith(("warm_rows_", "warm_bulk_")):
            continue
        size = int(mode.rsplit("_", 1)[1])
        bulk = mode.startswith("warm_bulk_")
        box_rows = size // 128 if bulk else size
        if fast and box_rows not in (1, 128):
            continue
        base = f"ROWS={box_rows} BULK={int(bulk)}"
        timed = Sim(trace_workload("tma_box_warm.trace", f"{base} LOADS=6"), TMA_BOX_MHZ, 0.01)
        untimed = Sim(trace_workload("tma_box_warm.trace", f"{base} LOADS=0"), TMA_BOX_MHZ, 0.01)

        def predict(s):
            return (s[0]["kernel"]["cycles"] - s[1]["kernel"]["cycles"]) / 6, "kernel.cycles difference / 6"
        label = f"{size} B" if bulk else f"{box_rows} x 128 B"
        points.append(Point("bulk" if bulk else "box", label, row.where, TMA_BOX_MHZ,
                            row.num("cycles_med"), (timed, untimed), predict))
    return points, []


def build_tma_cold(ctx, fast):
    """tma_first.csv's `cold` rows: 1, 16 and 132 CTAs each load 16 KiB boxes (128 rows 16 KiB
    apart) one at a time after a 512 MiB write flush (so the L2 starts dirty, as the manifest's
    start_dirty has it); box 0 on every CTA at once (the launch's cold burst), boxes 1-5 after it.
    examples/microbench/tma_first.trace at the row's clock: a box's latency is its SM's MB_WAIT
    stall plus the TMA_LOAD's and MB_WAIT's issue (2 cycles); LOADS=1 gives box 0 on every SM,
    LOADS=6 the rest by difference (their mean a CTA, against the mean of the rows' medians).
    `median` compares the median CTA; `slowest` box 0's slowest CTA, the burst's tail (16 and 132
    CTAs)."""
    rows = read_csv(H200 / "tma_first.csv", required=("mode", "grid", "box", "cycles_med", "cycles_max",
                                                      "sm_mhz"))
    by_grid = {}
    for row in rows:
        if row.text("mode") == "cold":
            by_grid.setdefault(row.int("grid"), {})[row.int("box")] = row
    points = []
    for grid, boxes in sorted(by_grid.items()):
        if sorted(boxes) != list(range(6)):
            raise ValidationError(f"{boxes[min(boxes)].where}: the cold rows of {grid} CTAs are not boxes 0-5")
        if fast and grid != 132:
            continue
        first = boxes[0]
        clock = first.num("sm_mhz")
        one = Sim(trace_workload("tma_first.trace", f"GRID={grid} LOADS=1"), clock, 0.05)
        six = Sim(trace_workload("tma_first.trace", f"GRID={grid} LOADS=6"), clock, 0.1)

        def waits(stats, grid=grid):
            return [stats[f"sm[{i}]"]["stall"]["mb_wait"] for i in range(grid)]

        def box0(s, pick, waits=waits):
            return pick([w + 2 for w in waits(s[0])]), "sm[i].stall.mb_wait + 2, LOADS=1"

        def later(s, waits=waits):
            per_cta = [(w6 - w1) / 5 + 2 for w1, w6 in zip(waits(s[0]), waits(s[1]))]
            return statistics.median(per_cta), "(sm[i].stall.mb_wait, LOADS=6 - LOADS=1) / 5 + 2, median CTA"

        label = f"{grid} CTA{'s' if grid > 1 else ''}"
        points.append(Point("median", f"{label}, box 0", first.where, clock, first.num("cycles_med"),
                            (one,), lambda s, f=box0: f(s, statistics.median)))
        measured_later = sum(boxes[b].num("cycles_med") for b in range(1, 6)) / 5
        points.append(Point("median", f"{label}, boxes 1-5", boxes[1].where, clock, measured_later,
                            (one, six), later))
        if grid > 1:
            points.append(Point("slowest", f"{label}, box 0", first.where, clock, first.num("cycles_max"),
                                (one,), lambda s, f=box0: f(s, max)))
    return points, []


def build_tma_ring(ctx, fast):
    """tma_inflight.csv's cold `tile` rows of 1 to 3 stages: one SM's ring of 2D boxes (op_bytes /
    128 rows, 8 KiB apart) from DRAM, a box issued when the slot it refills is waited for; cycles a
    box = op_bytes / bytes_per_cycle, against kernel cycles / ops of
    examples/microbench/tma_inflight.trace. With 4 stages or more the H200's ring turns at ~475
    cycles a box whatever the bytes or the memory (the issuing loop's own cost, docs/calibration.md
    section 15), which the trace does not model: those rows are left out."""
    rows = read_csv(H200 / "tma_inflight.csv", required=("l2", "kind", "op_bytes", "group", "stages",
                                                         "ops", "bytes_per_cycle", "sm_mhz"))
    points = []
    for row in rows:
        if row.text("l2") != "cold" or row.text("kind") != "tile" or row.int("group") != 1:
            continue
        stages, op_bytes, ops = row.int("stages"), row.int("op_bytes"), row.int("ops")
        if stages > 3 or (fast and (op_bytes, stages) not in {(16384, 1), (32768, 3)}):
            continue
        clock = row.num("sm_mhz")
        sim = Sim(trace_workload("tma_inflight.trace", f"S={stages} ROWS={op_bytes // 128} OPS={ops}"),
                  clock, 0.05)

        def predict(s, ops=ops):
            return s[0]["kernel"]["cycles"] / ops, "kernel.cycles / boxes"
        points.append(Point("box", f"{op_bytes // 128} rows, {stages} stage{'s' if stages > 1 else ''}",
                            row.where, clock, op_bytes / row.num("bytes_per_cycle"), (sim,), predict))
    return points, []


# tma_stride: the pitches of the fast subset: rows sharing DRAM pages, the 64 KiB of K = 32768,
# and the widest
TMA_STRIDE_FAST = {256, 65536, 1048576}


def build_tma_stride(ctx, fast):
    """dram_stride.csv's `bw panel` rows: 132 CTAs each streaming its own 128-row operand panel of
    row pitch 256 B to 1 MiB from DRAM (examples/microbench/tma_panel_stream.trace, its CAP boxes
    a CTA and STAGES as the row's), GB/s = bytes / the CUDA-event time, against bytes /
    kernel.event_us."""
    rows = read_csv(H200 / "dram_stride.csv", required=("mode", "order", "pitch_bytes", "box_rows",
                                                        "stages", "ctas", "bytes_moved", "GBps",
                                                        "sm_clock_mhz"))
    points = []
    for row in rows:
        if row.text("mode") != "bw" or row.text("order") != "panel":
            continue
        pitch, ctas, stages = row.int("pitch_bytes"), row.int("ctas"), row.int("stages")
        if fast and pitch not in TMA_STRIDE_FAST:
            continue
        if row.int("box_rows") != 128 or pitch % 128 != 0:
            raise ValidationError(f"{row.where}: the panel twin reads 128-row boxes of whole 128 B "
                                  "columns")
        box_bytes = 128 * 128
        cap = row.int("bytes_moved") // (ctas * box_bytes)
        clock = row.num("sm_clock_mhz")
        # ~9 s of wall time for 256 boxes a CTA (Release, session 28), in proportion to the boxes
        sim = Sim(trace_workload("tma_panel_stream.trace", f"P={pitch} CAP={cap} STAGES={stages} CTAS={ctas}"),
                  clock, 9.0 * cap / 256)

        def predict(s, moved=row.num("bytes_moved")):
            return moved / s[0]["kernel"]["event_us"] / 1e3, "bytes / kernel.event_us"
        label = f"pitch {pitch // 1024} KiB" if pitch % 1024 == 0 else f"pitch {pitch} B"
        points.append(Point("bandwidth", label, row.where, clock, row.num("GBps"), (sim,), predict))
    return points, []


# tma_loaded: the modes' defines of examples/microbench/tma_loaded.trace (CB, BS, W; BS = None:
# CTAS), and the (mode, ctas, stages) of the fast subset: one SM and a full GPU, one box in flight
# and a GEMM's few
H200_SMEM_PER_SM_KIB = 228  # env.txt: sharedMemPerMultiprocessor = 233472
TMA_LOADED_MODES = {"own": (1, None, 64), "own_warm": (1, 0, 4), "same": (0, 1, 64)}
TMA_LOADED_FAST = {("own", 1, 1), ("own", 132, 2), ("own", 264, 2), ("own_warm", 132, 2),
                   ("same", 264, 2)}


def tma_loaded_sims(ctx, mode, ctas, stages, boxes, clock, defines="", sets=()):
    """tma_loaded.trace's twin of one ring: its simulations and the cycles a box they give (`own`:
    kernel.cycles / boxes; the warm modes by difference of two passes and one, the device's
    warm-up launch, from a clean L2: it held the warm-up launch's own lines, nothing dirty)."""
    cb, bs, w = TMA_LOADED_MODES[mode]
    defines = (f"CTAS={ctas} STAGES={stages} CB={cb} BS={ctas if bs is None else bs} W={w} PASS={boxes}"
               + (f" {defines}" if defines else ""))
    # ~10 s for 264 CTAs of 128 boxes (Release, session 29), in proportion to the boxes
    cost = 10.0 * ctas * boxes / (264 * 128)
    if mode == "own":
        sims = (Sim(trace_workload("tma_loaded.trace", defines + " PASSES=1"), clock, cost, sets=sets),)

        def cycles(s):
            return s[0]["kernel"]["cycles"] / boxes, "kernel.cycles / boxes"
        return sims, cycles
    sims = tuple(Sim(trace_workload("tma_loaded.trace", defines + f" PASSES={n}"), clock, cost * n,
                     sets=sets + ctx.clean_l2())
                 for n in (2, 1))

    def cycles(s):
        return (s[0]["kernel"]["cycles"] - s[1]["kernel"]["cycles"]) / boxes, "kernel.cycles difference / boxes"
    return sims, cycles


def build_tma_loaded(ctx, fast):
    """tma_loaded.csv: 1 to 264 CTAs each streaming 128-row boxes of rows 8 KiB apart through 1 to
    8 stages, from DRAM (`own`) or the L2 (`own_warm`, `same`); SM cycles a box = a CTA's span /
    128 boxes (median over CTAs), against examples/microbench/tma_loaded.trace's kernel.cycles /
    128, the warm modes by difference of two passes and one (the device's warm-up launch)."""
    rows = read_csv(H200 / "tma_loaded.csv", required=("mode", "ctas", "stages", "boxes",
                                                       "box_cycles_med", "sm_mhz"))
    points = []
    for row in rows:
        mode, ctas, stages, boxes = row.text("mode"), row.int("ctas"), row.int("stages"), row.int("boxes")
        if mode not in TMA_LOADED_MODES:
            raise ValidationError(f"{row.where}: unknown mode '{mode}' (known: "
                                  f"{', '.join(TMA_LOADED_MODES)})")
        if fast and (mode, ctas, stages) not in TMA_LOADED_FAST:
            continue
        if ctas > 132 and 2 * (stages * 16 + 1 + 1) > H200_SMEM_PER_SM_KIB:
            continue  # two CTAs of this ring (and 1 KiB each the driver keeps) do not fit an SM:
            # the device ran two waves, which the row's per-CTA figure does not show
        sims, predict = tma_loaded_sims(ctx, mode, ctas, stages, boxes, row.num("sm_mhz"))
        label = f"{mode}, {ctas} CTA{'s' if ctas > 1 else ''}, {stages} stage{'s' if stages > 1 else ''}"
        points.append(Point("box", label, row.where, row.num("sm_mhz"), row.num("box_cycles_med"), sims, predict))
    return points, []


# tma_misaligned: validation/h100/misaligned/ (the lent H100's, whatever --data says), tma_loaded's
# rings at a row pitch of 8192 B and at 8208 and 8256 B, whose rows start 16 and 64 bytes into a
# line, run with the H100's memory system (WRITEBACK_KEYS below). The metric is a ring's cycles a
# box at the odd pitch over the same ring's at 8192 B: what the rows' extra L2 requests cost,
# apart from what the model gets wrong at every pitch (docs/calibration.md §44).
MISALIGNED_DATA = ROOT / "validation" / "h100" / "misaligned"
MISALIGNED_PITCHES = (8208, 8256)
MISALIGNED_RINGS = (("own", 1, 1), ("own_warm", 1, 1), ("same", 1, 1), ("own_warm", 132, 2),
                    ("own_warm", 264, 2), ("same", 264, 2))
MISALIGNED_FAST = {("own_warm", 1, 1), ("own_warm", 132, 2)}


def build_tma_misaligned(ctx, fast):
    """validation/h100/misaligned/tma_loaded_misaligned.csv: each ring's box cycles at pitch P over
    the same ring's at 8192 B, against tma_loaded.trace's with COLS = P / 2 and 4096."""
    rows = read_csv(MISALIGNED_DATA / "tma_loaded_misaligned.csv",
                    required=("mode", "ctas", "stages", "boxes", "box_cycles_med", "sm_mhz", "pitch"))
    by_ring = {(r.text("mode"), r.int("ctas"), r.int("stages"), r.int("pitch")): r for r in rows}
    sets = tuple(kv for kv in h100_settings(WRITEBACK_KEYS) if ctx.sim.has_key(kv))
    points, notes = [], []
    for mode, ctas, stages in MISALIGNED_RINGS:
        if fast and (mode, ctas, stages) not in MISALIGNED_FAST:
            continue
        base = by_ring.get((mode, ctas, stages, 8192))
        for pitch in MISALIGNED_PITCHES:
            row = by_ring.get((mode, ctas, stages, pitch))
            if base is None or row is None:
                notes.append(f"{rel(MISALIGNED_DATA)}: no {mode} ring of {ctas} CTAs x {stages} at 8192 "
                             f"and {pitch} B")
                continue
            odd, odd_cycles = tma_loaded_sims(ctx, mode, ctas, stages, row.int("boxes"), row.num("sm_mhz"),
                                              f"COLS={pitch // 2}", sets)
            even, even_cycles = tma_loaded_sims(ctx, mode, ctas, stages, base.int("boxes"), row.num("sm_mhz"),
                                                "COLS=4096", sets)

            def predict(s, n=len(odd), odd_cycles=odd_cycles, even_cycles=even_cycles):
                return odd_cycles(s[:n])[0] / even_cycles(s[n:])[0], "box cycles at the pitch / at 8192 B"
            points.append(Point("penalty", f"{mode}, {ctas} x {stages}, pitch {pitch} B", row.where,
                                row.num("sm_mhz"), row.num("box_cycles_med") / base.num("box_cycles_med"),
                                odd + even, predict))
    return points, notes


# gemm_loop: wgmma_rate.csv ran at 1980 MHz (validation/h200/README.md, its nvidia-smi samples);
# the fast subset is each tile on one CTA and on a full GPU of two CTAs an SM where they fit
GEMM_LOOP_MHZ = 1980.0
GEMM_LOOP_FAST = {(128, 128, 1), (128, 128, 264), (64, 128, 1), (128, 256, 132)}
GEMM_LOOP_ITERS = (32, 96)  # the twin's two runs; their difference times 64 k-tiles


def build_gemm_loop(ctx, fast):
    """wgmma_rate.csv: the suite kernel's loop on L2-resident tiles (k-tile k loads the 64-column
    tile k mod 2), 1, 132 and 264 CTAs; SM cycles a k-tile = a CTA's (end - start) / ITERS, median
    over CTAs, against examples/microbench/gemm_loop_l2.trace by difference of two loop lengths
    (the prologue and epilogue cancel), over the waves the grid takes: a CTA's own rate, as the
    H200's per-CTA clocks give it."""
    rows = read_csv(H200 / "wgmma_rate.csv", required=("block_m", "block_n", "block_k", "stages",
                                                       "warps", "grid", "cycles_per_ktile_med"))
    points = []
    for row in rows:
        bm, bn, stages, warps, grid = (row.int(k) for k in ("block_m", "block_n", "stages", "warps", "grid"))
        if row.int("block_k") != 64 or warps % 4 != 0:
            raise ValidationError(f"{row.where}: the loop twin has 64-column k-tiles and whole WarpGroups")
        if fast and (bm, bn, grid) not in GEMM_LOOP_FAST:
            continue
        wgs = warps // 4
        # the twin's shared memory (its `smem` line) sets the CTAs an SM holds, hence the waves
        smem_kib = (stages * (bm + bn) * 128 + 1024) / 1024
        per_sm = max(1, int(H200_SMEM_PER_SM_KIB // smem_kib))
        waves = -(-grid // (132 * per_sm))
        serial = int(wgmma_serialized(bn))
        defines = f"BM={bm} BN={bn} WGS={wgs} S={stages} SERIAL={serial} G={grid}"
        # ~7 s for 264 CTAs of 128 k-tiles (Release, session 31), in proportion
        cost = 7.0 * grid / 264 * sum(GEMM_LOOP_ITERS) / 128
        sims = tuple(Sim(trace_workload("gemm_loop_l2.trace", f"{defines} ITERS={n}"), GEMM_LOOP_MHZ,
                         cost / 2) for n in reversed(GEMM_LOOP_ITERS))

        def predict(s, waves=waves, n=GEMM_LOOP_ITERS[1] - GEMM_LOOP_ITERS[0]):
            return ((s[0]["kernel"]["cycles"] - s[1]["kernel"]["cycles"]) / n / waves,
                    "kernel.cycles difference / k-tiles / waves")
        label = f"{bm}x{bn} s{stages} w{warps}, {grid} CTA{'s' if grid > 1 else ''}"
        points.append(Point("ktile", label, row.where, GEMM_LOOP_MHZ, row.num("cycles_per_ktile_med"),
                            sims, predict))
    return points, []


# gemm_width: validation/h100/cta_width.csv ran on the lent H100 at 1980 MHz (its nvidia-smi
# samples, validation/h100/README.md); the H200's SM and L2 slices (50 MiB of L2 against 60, more
# than the probe's 17 MB at most), the H100's HBM3 (five stacks, 3.35 TB/s: the H800_HBM3 preset). The fast subset is the own-A 128x128 series at
# 1, 16 and 128 CTAs. gemm_width_h200: validation/h200/cta_width.csv ran on an H200 at 1980 MHz too
# (validation/h200/session41/width_smi.csv), against the manifest as it is.
GEMM_WIDTH_MHZ = 1980.0
GEMM_WIDTH_SETS = ("memory.dram.preset=H800_HBM3",)
GEMM_WIDTH_FAST = {(128, 128, 1, "A"), (128, 128, 16, "A"), (128, 128, 128, "A")}


def build_gemm_width(ctx, fast):
    """validation/h100/cta_width.csv: one short Triton TMA GEMM (K = 512, cold L2, one wave) at
    grids of 1 to 132 CTAs, each CTA with its own A panel (M = block_m x CTAs) or its own B panel
    (N = 128 x CTAs); the slowest CTA's SM cycles (%clock64) against the static TTGIR route's
    kernel.cycles on the manifest with the H100's DRAM (docs/calibration.md §24): what a wave's
    width costs inside its CTAs."""
    return gemm_width_points(ctx, fast, H200.parent / "h100" / "cta_width.csv", GEMM_WIDTH_SETS)


def build_gemm_width_h200(ctx, fast):
    """validation/h200/cta_width.csv: the same launches on the H200 (session 41), against the
    manifest as it is."""
    return gemm_width_points(ctx, fast, H200 / "cta_width.csv", ())


def gemm_width_points(ctx, fast, path, sets):
    """cta_width.csv's launches (run_width.sh) against the static TTGIR route, `sets` applied."""
    rows = read_csv(path,
                    required=("M", "N", "K", "block_m", "block_n", "block_k", "stages", "warps", "pid",
                              "cycles"))
    groups = {}  # one launch's rows (pid 0 opens a launch); a shape timed twice keeps its first
    launch = None
    for row in rows:
        key = tuple(row.int(k) for k in ("M", "N", "K", "block_m", "block_n", "block_k", "stages", "warps"))
        if row.int("pid") == 0:
            launch = groups.setdefault(key, []) if key not in groups else None
        if launch is not None:
            launch.append(row)
    points = []
    for (m, n, k, bm, bn, bk, stages, warps), ctas in groups.items():
        grid = len(ctas)
        own = "B" if n > bn else "A"
        if fast and (bm, bn, grid, own) not in GEMM_WIDTH_FAST:
            continue
        cfg = GemmConfig(m, n, k, bm, bn, bk, stages, warps, 1)
        if cfg.tiles != grid:
            raise ValidationError(f"{ctas[0].where}: {grid} CTA rows for a grid of {cfg.tiles} tiles")
        sim = static_sim(ctx, cfg, ctas[0], GEMM_WIDTH_MHZ, fallback=False)
        sim = Sim(sim.workload, sim.clock_mhz, sim.cost, sets=sets)
        slowest = max(ctas, key=lambda r: r.num("cycles"))
        label = f"{bm}x{bn}, own {own}, {grid} CTA{'s' if grid > 1 else ''}"
        points.append(Point("cta_cycles", label, slowest.where, GEMM_WIDTH_MHZ, slowest.num("cycles"), (sim,),
                            lambda s: (s[0]["kernel"]["cycles"], "kernel.cycles")))
    return points, []


def wgmma_serialized(n):
    """ptxas's rule as sdk/include/simfa/wgmma_codegen.h states it: an m64nNk16 whose fp32
    accumulator holds 128 registers a thread or more (N / 2: N >= 256) waits for the one before it."""
    return n // 2 >= 128


# tma_edge: (TENSOR_ROWS, BOX_ROWS, ROW0, CTAS, STAGES) of the fast subset: the box half past the
# edge and the box wholly past it, 132 SMs at 4 stages (the hot spot), and one inside box
TMA_EDGE_FAST = {(128, 256, 0, 132, 4), (128, 128, 128, 132, 4), (256, 256, 0, 132, 4)}
TMA_EDGE_BOXES = 32


def build_tma_edge(ctx, fast):
    """tma_load.csv's `edge` rows: warm 2D boxes inside, half past and wholly past the tensor's
    edge, on 1 or 132 SMs, 1 or 4 stages; cycles per box by difference with
    examples/microbench/tma_edge.trace, (cycles(BOXES = 2N) - cycles(BOXES = N)) / N, N = 32
    (docs/calibration.md §13)."""
    rows = read_csv(H200 / "tma_load.csv", required=("exp", "tensor_rows", "box_rows", "row0", "ctas",
                                                     "stages", "cyc_box_med", "sm_clock_mhz"))
    points = []
    for row in rows:
        if row.text("exp") != "edge":
            continue
        key = tuple(row.int(k) for k in ("tensor_rows", "box_rows", "row0", "ctas", "stages"))
        if fast and key not in TMA_EDGE_FAST:
            continue
        tensor_rows, box_rows, row0, ctas, stages = key
        clock = row.num("sm_clock_mhz")
        base = f"ROWS={tensor_rows} BOX_R={box_rows} ROW0={row0} CTAS={ctas} STAGES={stages}"
        n = TMA_EDGE_BOXES
        longer = Sim(trace_workload("tma_edge.trace", f"{base} BOXES={2 * n}"), clock, 0.05)
        shorter = Sim(trace_workload("tma_edge.trace", f"{base} BOXES={n}"), clock, 0.03)

        def predict(s, n=n):
            return (s[0]["kernel"]["cycles"] - s[1]["kernel"]["cycles"]) / n, f"kernel.cycles difference / {n}"
        where = "inside" if row0 + box_rows <= tensor_rows else "wholly past" if row0 >= tensor_rows else "half past"
        label = f"{box_rows} rows {where}, {ctas} SM{'s' if ctas > 1 else ''}, {stages} stage{'s' if stages > 1 else ''}"
        points.append(Point("box", label, row.where, clock, row.num("cyc_box_med"), (longer, shorter), predict))
    return points, []


# tma_first.csv's warm rows ran at 1920-1969 MHz (the first-load rows' sm_mhz; the sweep's own
# launches record none)
TMA_BOX_MHZ = 1950.0


BW_FAST = {("tma_bulk_dram", "16384B", 8), ("tma_bulk_l2", "16384B", 8), ("tma_2d", "128x64", 8)}


def build_tma_bandwidth(ctx, fast):
    """bandwidth.csv's TMA rows: steady-state GB/s by difference, X / (t(2X) - t(X))
    (docs/calibration.md section 1), X = 16 MiB for a DRAM bulk stream, 32 MiB otherwise."""
    rows = read_csv(H200 / "bandwidth.csv", required=("kind", "shape", "bytes_per_op", "stages",
                                                      "GBps", "sm_clock_mhz"))
    points, notes, seen = [], [], set()
    for row in rows:
        kind, shape, stages = row.text("kind"), row.text("shape"), row.int("stages")
        if not kind.startswith("tma_"):
            continue
        op = row.int("bytes_per_op")
        if kind.startswith("tma_bulk") and op <= 4096:
            notes.append(f"{row.where}: {kind} {shape} x{stages} not compared: 4 KiB ops are issue-bound on "
                         "the device (one thread, ~250 cycles per op), which the model does not charge")
            continue
        if (kind, shape, stages) in seen:
            notes.append(f"{row.where}: {kind} {shape} x{stages} not compared: a second row of that shape "
                         f"({row.text('note', default='')}), which the model cannot tell apart")
            continue
        seen.add((kind, shape, stages))
        if fast and (kind, shape, stages) not in BW_FAST:
            continue
        clock = row.num("sm_clock_mhz")
        if kind == "tma_2d":
            dims = shape.lower().split("x")
            if len(dims) != 2 or not all(d.isdigit() for d in dims):
                raise ValidationError(f"{row.where}: tma_2d shape '{shape}' is not ROWSxCOLS")
            r, c = map(int, dims)
            x = 32 * MiB
            box = r * c * 2
            defs = [f"BOX_R={r} BOX_C={c} STAGES={stages} TILES={n * x // box}" for n in (1, 2)]
            trace = "tma_2d_stream.trace"
        elif kind in ("tma_bulk_dram", "tma_bulk_l2"):
            x = 16 * MiB if kind == "tma_bulk_dram" else 32 * MiB
            src = " SRC=16777216" if kind == "tma_bulk_l2" else ""
            defs = [f"OP={op} STAGES={stages} TOTAL={n * x}{src}" for n in (1, 2)]
            trace = "tma_bulk_stream.trace"
        else:
            notes.append(f"{row.where}: kind '{kind}' has no simulated twin")
            continue
        # ~ 0.05 s per MiB
        sims = tuple(Sim(trace_workload(trace, d), clock, 0.05 * n * x / MiB)
                     for n, d in ((1, defs[0]), (2, defs[1])))

        def predict(s, x=x, clock=clock):
            cycles = s[1]["kernel"]["cycles"] - s[0]["kernel"]["cycles"]
            return x / (cycles / (clock * 1e6)) / 1e9, "X / (t(2X) - t(X))"
        points.append(Point("bandwidth", f"{kind} {shape} x{stages}", row.where, clock, row.num("GBps"),
                            sims, predict))
    return points, notes


# l2_writeback ------------------------------------------------------------------------------------

# validation/h100/dirty_l2/ ran on the lent H100 (env.txt: 1980 MHz at most; its samples read 1980
# under load and 345 idle between launches). Its twin runs with the H100's memory system, these keys
# as configs/h100.toml sets them (each kept where the manifest takes it): the clocks of the memory
# domain and the launch, the L2's 50 MiB in 160 slices with their latencies and rate, the HBM3's
# preset and refresh.
WRITEBACK_DATA = ROOT / "validation" / "h100" / "dirty_l2"   # the H100's, whatever --data says
WRITEBACK_MHZ = 1980.0
WRITEBACK_KEYS = ("gpu.memory_clock_mhz", "gpu.launch_overhead_ns", "memory.l2.size", "memory.l2.slices",
                  "memory.l2.hit_latency", "memory.l2.requests_per_cycle", "memory.l2.far_latency",
                  "memory.dram.preset", "memory.dram.nREFI", "memory.dram.nREFIpb", "memory.dram.nRFCpb")
# 8 MiB is left out: the H100 writes back 0.48 MB there (2% of its dirty lines), a difference too
# small to compare as a relative error; 512 MiB adds nothing past 96 and costs 25 s of simulation.
WRITEBACK_MIB = (16, 32, 48, 64, 96, 128)
WRITEBACK_FAST = {16, 64}


def ncu_launches(path):
    """An `ncu --csv` log's launches in order: ({metric: (value, unit)}, the line of its first row)."""
    lines = Path(path).read_text().splitlines()
    table = [(n, line) for n, line in enumerate(lines, start=1) if line.startswith('"')]
    if not table:
        raise ValidationError(f"{rel(path)}: no ncu CSV rows")
    reader = csv.DictReader(line for _, line in table)
    launches, order = {}, []
    for (n, _), row in zip(table[1:], reader):
        for key in ("ID", "Metric Name", "Metric Value", "Metric Unit"):
            if row.get(key) is None:
                raise ValidationError(f"{rel(path)}:{n}: no '{key}' column")
        if row["ID"] not in launches:
            launches[row["ID"]] = ({}, n)
            order.append(row["ID"])
        launches[row["ID"]][0][row["Metric Name"]] = (row["Metric Value"], row["Metric Unit"])
    return [launches[i] for i in order]


def megabytes(value, unit, where):
    scale = {"byte": 1e-6, "Kbyte": 1e-3, "Mbyte": 1.0, "Gbyte": 1e3}.get(unit)
    try:
        return float(value.replace(",", "")) * scale
    except (TypeError, ValueError):
        raise ValidationError(f"{where}: {value!r} {unit!r} is not a byte count") from None


def h100_settings(keys):
    """`KEY=VALUE` of each key as configs/h100.toml sets it."""
    path = ROOT / "configs" / "h100.toml"
    with open(path, "rb") as f:
        manifest = tomllib.load(f)
    settings = []
    for key in keys:
        value = manifest
        for part in key.split("."):
            if not isinstance(value, dict) or part not in value:
                raise ValidationError(f"{rel(path)}: no {key}")
            value = value[part]
        settings.append(f"{key}={value}")
    return tuple(settings)


def build_l2_writeback(ctx, fast):
    """validation/h100/dirty_l2/: torch's sum of N MiB after a 256 MiB write flush (the L2 left
    dirty) against a read flush (clean). `writeback`: ncu's dram__bytes_write.sum after the write
    flush against the twin's DRAM writes from the manifest's start (memory.l2.start_dirty); `added`:
    the CUDA-event time the write flush adds against the twin's event time from that start over an
    empty L2. The twin is examples/microbench/tma_bulk_stream.trace reading the same N MiB once
    (docs/calibration.md §42, §43)."""
    folder = WRITEBACK_DATA
    timed = read_csv(folder / "dirty_l2.csv", required=("flush", "mib", "event_us_med"))
    order = read_csv(folder / "dirty_l2_order.csv", required=("flush", "mib"))
    launches = ncu_launches(folder / "dirty_l2_ncu.csv")
    if len(launches) != len(order):
        raise ValidationError(f"{rel(folder / 'dirty_l2_ncu.csv')}: {len(launches)} launches against "
                              f"{len(order)} rows of {rel(folder / 'dirty_l2_order.csv')}")
    written = {}
    for row, (metrics, line) in zip(order, launches):
        where = f"{rel(folder / 'dirty_l2_ncu.csv')}:{line}"
        if "dram__bytes_write.sum" not in metrics:
            raise ValidationError(f"{where}: no dram__bytes_write.sum")
        written[(row.text("flush"), row.int("mib"))] = (megabytes(*metrics["dram__bytes_write.sum"], where), where)
    event = {(r.text("flush"), r.int("mib")): r for r in timed}
    sets = tuple(kv for kv in h100_settings(WRITEBACK_KEYS) if ctx.sim.has_key(kv))
    points, notes = [], []
    for mib in WRITEBACK_MIB:
        if fast and mib not in WRITEBACK_FAST:
            continue
        if ("write", mib) not in written or ("write", mib) not in event or ("read", mib) not in event:
            notes.append(f"{rel(folder)}: no write- and read-flushed runs of {mib} MiB")
            continue
        bytes_ = mib * MiB
        workload = trace_workload("tma_bulk_stream.trace", f"TOTAL={bytes_} SRC={bytes_} STAGES=4")
        dirty = Sim(workload, WRITEBACK_MHZ, 0.05 * mib, sets=sets)
        clean = replace(dirty, sets=sets + ctx.clean_l2())
        mb, where = written[("write", mib)]
        points.append(Point("writeback", f"{mib} MiB read", where, WRITEBACK_MHZ, mb, (dirty,),
                            lambda s: (s[0]["memory"]["dram_write_bytes"] / 1e6, "memory.dram_write_bytes")))
        w, r = event[("write", mib)], event[("read", mib)]
        points.append(Point("added", f"{mib} MiB read", w.where, WRITEBACK_MHZ,
                            w.num("event_us_med") - r.num("event_us_med"), (clean, dirty),
                            lambda s: (s[1]["kernel"]["event_us"] - s[0]["kernel"]["event_us"],
                                       "kernel.event_us difference")))
    return points, notes


# lrc_merge ---------------------------------------------------------------------------------------

# lrc_merge.csv's cases of each kind, bulk copies: two SMs of a GPC (1), of two GPCs (21), the
# second SM 3200 cycles late (30), all 132 SMs (53).
LRC_FAST = {1, 21, 30, 53}


def build_lrc_merge(ctx, fast):
    """lrc_merge.csv's cold rows (ncu --cache-control all): the read sectors the L2 slices got
    from the SMs against memory.llc_read_bytes / 32 of examples/microbench/lrc_merge.trace, the
    participants given per GPC (gpc_counts), as h200.toml's coalescer groups the SMs; a late
    participant is every one but the first (the cases delay one SM of a pair)."""
    rows = read_csv(H200 / "lrc_merge.csv", required=("set", "mode", "l2", "sms", "gpc_counts",
                                                      "delays_cycles", "lts_tex_read_sectors", "sm_mhz"))
    points, notes = [], ["the warm rows (an L2-resident region) have no simulated twin: the trace "
                         "cannot warm the L2 without the warming reads counting"]
    for row in rows:
        if row.text("l2") != "cold":
            continue
        kind, sms, delays = row.text("set"), row.text("sms"), row.text("delays_cycles")
        if fast and (row.int("case") not in LRC_FAST or row.text("mode") != "bulk"):
            continue
        counts = [int(c) for c in row.text("gpc_counts").split(";")]
        if len(counts) != 8:
            raise ValidationError(f"{row.where}: gpc_counts has {len(counts)} GPCs, the trace 8")
        delay = max(int(d) for d in delays.split(";"))
        defines = " ".join([f"MODE={1 if row.text('mode') == 'tile' else 0}", f"DELAY={delay}"] +
                           [f"N{g}={n}" for g, n in enumerate(counts)])
        sim = Sim(trace_workload("lrc_merge.trace", defines), row.num("sm_mhz"), 0.02 * sum(counts))
        label = f"{kind} {row.text('mode')} SMs {sms if len(sms) <= 12 else sms[:9] + '...'}"
        if delay:
            label += f" +{delay}"
        points.append(Point("l2_tex_read_sectors", label, row.where, row.num("sm_mhz"),
                            row.num("lts_tex_read_sectors"), (sim,),
                            lambda s: (s[0]["memory"]["llc_read_bytes"] / 32, "memory.llc_read_bytes / 32")))
    return points, notes


# attention_triton -------------------------------------------------------------------------------

# Cheap points covering the configs (1 and 2 WarpGroups, 64 and 128 key blocks), GQA and MHA,
# causal and not: (Z, HQ, HKV, L, D, causal, block_n, warps).
ATTENTION_FAST = {(1, 32, 8, 1024, 128, 0, 64, 8), (1, 32, 8, 1024, 128, 1, 128, 8),
                  (4, 16, 16, 1024, 64, 0, 64, 4)}
# The full suite leaves out the points whose simulation takes longest (above this many
# CTA x KV-block steps: at about 3000 steps a second on one core, over half a minute).
ATTENTION_MAX_STEPS = 100_000


def attention_sim(ctx, row, clock):
    """The static TTGIR route on attention_suite.py's `attn_fwd` (validation/h200/attention)."""
    path = data_companion("attention/ttgir/" + row.text("ttgir"))
    if not path.is_file():
        raise ValidationError(f"{row.where}: its TTGIR {rel(path)} is missing")
    z, hq, hkv, n, d = (row.int(k) for k in ("Z", "HQ", "HKV", "L", "D"))
    q_rows, kv_rows = z * hq * n, z * hkv * n
    shapes = {"desc_q": q_rows, "desc_o": q_rows, "desc_k": kv_rows, "desc_v": kv_rows}
    scalars = {"N_CTX": n, "GROUP": hq // hkv, "HQ": hq}
    args = []
    for name, is_desc in ctx.ttgir_args(path):
        if is_desc:
            args.append(f"{name}.shape={shapes[name]}x{d}")
        elif name in scalars:
            args.append(f"{name}={scalars[name]}")
    steps = cdiv(n, row.int("block_m")) * z * hq * cdiv(n, row.int("block_n"))
    return Sim(f"ttgir:file={path},grid={row.text('grid')},args={';'.join(args)}", clock, steps)


ATTENTION_CLOCK_KEY = ("impl", "Z", "HQ", "HKV", "L", "D", "causal", "block_m", "block_n", "warps")


ATTENTION_CLOCKS = None   # --attention-clocks: another run's attention_clocks.csv


def attention_clocks_borrowed():
    """Whether the attention points take their SM clocks from another run's attention_clocks.csv
    (--attention-clocks): then its ncu durations are that card's, and the span metrics are left
    out."""
    return ATTENTION_CLOCKS is not None and ATTENTION_CLOCKS != data_path("attention/attention_clocks.csv").resolve()


def attention_clocks():
    """Nsight Compute's SM clock and kernel duration of every attention point, the medians of two
    launches each (attention/attention_clocks.csv, or --attention-clocks). The SM clock of each
    point is ncu's: NVML's 10 ms samples (attention_suite.csv's nvml_sm_mhz_*) read 1980 MHz where
    ncu measured 1600 to 1820 MHz and the CUDA events' durations (validation/h200/attention/
    README.md)."""
    rows = read_csv(ATTENTION_CLOCKS or data_path("attention/attention_clocks.csv"),
                    required=ATTENTION_CLOCK_KEY + ("ncu_sm_mhz", "ncu_duration_us"))
    return {tuple(r.text(k, default="") for k in ATTENTION_CLOCK_KEY): r for r in rows}


def attention_clock_row(clocks, row):
    """The attention_clocks.csv row of an attention_suite.csv row."""
    key = tuple(row.text(k, default="") for k in ATTENTION_CLOCK_KEY)
    if key not in clocks:
        raise ValidationError(f"{row.where}: no row of attention/attention_clocks.csv for "
                              + ", ".join(f"{k}={v}" for k, v in zip(ATTENTION_CLOCK_KEY, key)))
    return clocks[key]


def build_attention_triton(ctx, fast):
    rows = [r for r in read_csv(data_path("attention/attention_suite.csv"),
                                required=("impl", "Z", "HQ", "HKV", "L", "D", "causal", "grid",
                                          "event_us", "ttgir"))
            if r.text("impl") == "triton" and not r.text("event_us").startswith("failed")]
    clocks = attention_clocks()
    points, notes = [], []
    for r in rows:
        key = tuple(r.int(k) for k in ("Z", "HQ", "HKV", "L", "D", "causal", "block_n", "warps"))
        if fast and key not in ATTENTION_FAST:
            continue
        ncu = attention_clock_row(clocks, r)
        clock = ncu.num("ncu_sm_mhz")
        sim = attention_sim(ctx, r, clock)
        if not fast and sim.cost > ATTENTION_MAX_STEPS:
            notes.append(f"{r.where}: not simulated ({sim.cost} CTA x KV-block steps, minutes)")
            continue
        label = "Z%d HQ%d HKV%d L%d D%d%s %sx%s w%s" % (
            *key[:5], " causal" if key[5] else "", r.text("block_m"), r.text("block_n"), r.text("warps"))
        points.append(Point("static_event", label, r.where, clock, r.num("event_us"), (sim,),
                            kernel_event_time))
        if not attention_clocks_borrowed():
            # ncu's --cache-control all empties the L2: no dirty lines to write back
            points.append(Point("static_span", label, ncu.where, clock, ncu.num("ncu_duration_us"),
                                (replace(sim, sets=sim.sets + ctx.clean_l2()),), kernel_span))
    if attention_clocks_borrowed():
        notes.append(f"SM clocks from {rel(ATTENTION_CLOCKS)} (--attention-clocks); static_span left out")
    return points, notes


# attention_cudnn --------------------------------------------------------------------------------

# The cuDNN SDPA rows of attention_suite.csv through the `fa3:` route. Cheap points: GQA D = 128
# non-causal and causal, and the D = 64 kernel (causal: its non-causal twin is a noisy point):
# (Z, HQ, HKV, L, D, causal).
CUDNN_FAST = {(1, 32, 8, 1024, 128, 0), (1, 32, 8, 1024, 128, 1), (4, 16, 16, 1024, 64, 1)}
# Seconds of one simulation per (128-row Q tile x 128-key KV tile) step: about 2000 steps a
# second on one core (Release, h200.toml, 1 x 32 x 8 x 1024 x 128: 2048 steps in 1.0 s).
CUDNN_SECONDS_PER_STEP = 5e-4
# The full suite leaves out the points estimated to simulate longer than this (the 16K-token
# shapes, 4 to 9 minutes each); --max-cost lowers it further.
CUDNN_MAX_SECONDS = 75.0
# A point whose median CUDA-event time is more than this times its minimum did not run steadily
# (the first L = 512 launches: 73.9 us median, 36.6 minimum); it is left out with a note.
CUDNN_MAX_SPREAD = 1.25
# cuDNN's tile (the kernel name's 64x128xD: 64 query rows per consumer WarpGroup, two consumers,
# 128 keys a step) and its K/V ring: ncu (ncu_attention_raw.csv) gives 232448 bytes of dynamic
# shared memory for D = 128, (128 + 2 x 3 x 128) x 128 x 2 = 229376 with 3 KiB of barriers, so
# 3 stages (D = 64: 134144 = 114688 + a 16 KiB O tile + 3 KiB). `kernel=cudnn` sets them, with the
# rest of the kernel (the persistent grid, the softmax on the SM's pipes, the mask's work:
# docs/workloads.md); the steps below count 128 x 128 tiles.
CUDNN_TILE = {"block_m": 128, "block_n": 128}
CUDNN_KERNEL = {"kernel": "cudnn"}


def cudnn_steps(z, hq, n, causal):
    bm, bn = CUDNN_TILE["block_m"], CUDNN_TILE["block_n"]
    steps = z * hq * cdiv(n, bm) * cdiv(n, bn)
    return steps // 2 if causal else steps


def cudnn_sim(row, clock, extra=""):
    """The `fa3:` route on one cuDNN row at its SM clock."""
    z, hq, hkv, n, d, causal = (row.int(k) for k in ("Z", "HQ", "HKV", "L", "D", "causal"))
    keys = dict(**CUDNN_KERNEL, batch=z, heads=hq, kv_heads=hkv, seqlen=n, head_dim=d,
                causal="true" if causal else "false")
    spec = "fa3:" + ",".join(f"{k}={v}" for k, v in keys.items()) + extra
    return Sim(spec, clock, CUDNN_SECONDS_PER_STEP * cudnn_steps(z, hq, n, causal))


def build_attention_cudnn(ctx, fast):
    """cuDNN's Hopper flash forward kernel (attention_suite.csv, impl cudnn) through `fa3:`; the
    prediction is kernel.event_us (span + gpu.launch_overhead_ns) against the CUDA-event median.
    The event time also holds the Memset cuDNN launches before the kernel; it is not added to the
    prediction (nothing measured isolates it), so it biases the smallest points low."""
    rows = [r for r in read_csv(data_path("attention/attention_suite.csv"),
                                required=("impl", "Z", "HQ", "HKV", "L", "D", "causal", "event_us",
                                          "event_us_min", "kernel"))
            if r.text("impl") == "cudnn" and not r.text("event_us").startswith("failed")]
    clocks = attention_clocks()
    points, notes = [], []
    for r in rows:
        key = tuple(r.int(k) for k in ("Z", "HQ", "HKV", "L", "D", "causal"))
        if fast and key not in CUDNN_FAST:
            continue
        label = "Z%d HQ%d HKV%d L%d D%d%s" % (*key[:5], " causal" if key[5] else "")
        spread = r.num("event_us") / r.num("event_us_min")
        if spread > CUDNN_MAX_SPREAD:
            notes.append(f"{r.where}: {label} left out: median {r.num('event_us'):.1f} us is "
                         f"{spread:.2f} x the minimum {r.num('event_us_min'):.1f} (not a steady launch)")
            continue
        ncu = attention_clock_row(clocks, r)
        clock = ncu.num("ncu_sm_mhz")
        sim = cudnn_sim(r, clock)
        if not fast and sim.cost > CUDNN_MAX_SECONDS:
            notes.append(f"{r.where}: {label} not simulated (about {sim.cost:.0f} s, "
                         f"{cudnn_steps(key[0], key[1], key[3], key[5])} tile steps)")
            continue
        points.append(Point("fa3_event", label, r.where, clock, r.num("event_us"), (sim,),
                            kernel_event_time))
        if not attention_clocks_borrowed():
            # ncu's --cache-control all empties the L2: no dirty lines to write back
            points.append(Point("fa3_span", label, ncu.where, clock, ncu.num("ncu_duration_us"),
                                (replace(sim, sets=sim.sets + ctx.clean_l2()),), kernel_span))
    if attention_clocks_borrowed():
        notes.append(f"SM clocks from {rel(ATTENTION_CLOCKS)} (--attention-clocks); fa3_span left out")
    return points, notes


# compute_micro ----------------------------------------------------------------------------------

def build_compute_micro(ctx, fast):
    """softmax_micro.csv: one CTA looping over one register op (or the whole online softmax) on
    an accumulator tile; SM cycles per iteration, kernel.cycles / iters (the loop is the
    kernel's time to a few cycles). The element ops and reductions calibrated the cost table
    (docs/calibration.md §8); the softmax rows check that its phases add up."""
    rows = read_csv(data_path("attention/softmax_micro.csv"),
                    required=("mode", "block_m", "block_n", "warps", "iters", "cycles_per_iter",
                              "ttgir"))
    points, notes = [], []
    for r in rows:
        mode = r.text("mode")
        if mode in ("empty", "trunc"):  # the compiler removed the loop's work
            notes.append(f"{r.where}: {mode} not compared (the compiler folds the loop away)")
            continue
        if fast and not (mode == "softmax" or r.int("warps") == 8 and r.int("block_n") == 64):
            continue
        iters = r.int("iters")
        path = data_companion("attention/ttgir/" + r.text("ttgir"))
        sim = Sim(f"ttgir:file={path},grid=1,unknown_ops=bubble,args=ITERS={iters};"
                  "desc_q.shape=128x128;desc_k.shape=128x128;desc_o.shape=128x128;T=0", 1980.0)
        label = f"{mode} {r.text('block_m')}x{r.text('block_n')} w{r.text('warps')}"
        metric = "softmax" if mode == "softmax" else "op"
        points.append(Point(metric, label, r.where, 1980.0, r.num("cycles_per_iter"), (sim,),
                            lambda st, n=iters: (st[0]["kernel"]["cycles"] / n,
                                                 "kernel.cycles / iters")))
    return points, notes


SUITES = {s.name: s for s in [
    Suite("gemm_triton", "Triton TMA GEMMs of validation/h200/gemm_triton.csv and gemm_ksweep_single_cta.csv"
          " (128x128x64, 3 stages, 4 warps)",
          ["gemm_triton.csv", "gemm_ksweep_single_cta.csv"],
          time_metrics("in-kernel span (inkernel_span_us)", "cold-L2 CUDA-event time (time_us)", trace=True),
          build_gemm_triton),
    Suite("gemm_suite", "Triton TMA GEMM set of validation/h200/gemm_suite.csv", ["gemm_suite.csv"],
          time_metrics("in-kernel span (span_us)", "cold-L2 CUDA-event time (event_us)"), build_gemm_suite),
    Suite("gemm_ncu", "Nsight Compute traffic of validation/h200/gemm_ncu.csv (static TTGIR route)",
          ["gemm_ncu.csv"],
          {"dram_read_bytes": Metric("B", "dram__bytes_read.sum", fmt="{:.4g}"),
           # every read sector the L2 slices look up, the far partition's fabric reads included
           "l2_read_sectors": Metric("sectors", "lts__t_sectors_op_read.sum", fmt="{:.4g}"),
           # the read sectors the SMs send (after the LRC), which is what llc_read_bytes counts
           "l2_tex_read_sectors": Metric("sectors", "lts__t_sectors_srcunit_tex_op_read.sum", fmt="{:.4g}")},
          build_gemm_ncu, flush="clean"),
    Suite("analytical_ncu", "the analytical model (`simfa analyze`) against Nsight Compute's DRAM reads (and "
          "the GEMMs' L2 read requests) of validation/h200/gemm_ncu.csv (and gemm_ncu_cliff.csv, and the "
          "runs repeating them under repeat/ and session41/) and "
          "attention/ncu_attention_raw.csv",
          ["gemm_ncu.csv", "attention/ncu_attention_raw.csv", "attention/ncu_points.csv"],
          {"gemm_dram_read_bytes": Metric("B", "dram__bytes_read.sum of Triton TMA GEMMs",
                                          "the analytical model", fmt="{:.4g}"),
           "gemm_llc_read_bytes": Metric("B", "32 x lrc__request_sectors_op_read_coalescable.sum (the SMs' "
                                         "L2 read requests) of the GEMMs with whole tiles",
                                         "the analytical model", fmt="{:.4g}"),
           "attention_dram_read_bytes": Metric("B", "dram__bytes_read.sum of cuDNN and Triton attention",
                                               "the analytical model", fmt="{:.4g}")},
          build_analytical_ncu),
    Suite("attention_triton", "Triton TMA attention of validation/h200/attention/"
          "attention_suite.csv (3 configs, GQA and MHA, causal and not)",
          ["attention/attention_suite.csv", "attention/attention_clocks.csv"],
          {"static_event": Metric("us", "cold-L2 CUDA-event time (event_us)",
                                  "the static TTGIR route"),
           "static_span": Metric("us", "kernel duration under Nsight Compute (attention_clocks.csv "
                                 "ncu_duration_us)", "the static TTGIR route")},
          build_attention_triton),
    Suite("attention_cudnn", "cuDNN's Hopper flash attention (sm90 flash_fprop_wgmma_f16 knob 7) of "
          "validation/h200/attention/attention_suite.csv through `fa3:` (GQA and MHA, causal and not)",
          ["attention/attention_suite.csv", "attention/attention_clocks.csv"],
          {"fa3_event": Metric("us", "cold-L2 CUDA-event time, Memset included (event_us)",
                               "the `fa3:` route"),
           "fa3_span": Metric("us", "kernel duration under Nsight Compute, the Memset not included "
                              "(attention_clocks.csv ncu_duration_us)", "the `fa3:` route")},
          build_attention_cudnn),
    Suite("compute_micro", "register arithmetic on an accumulator tile, validation/h200/"
          "attention/softmax_micro.csv (static TTGIR route, one CTA)",
          ["attention/softmax_micro.csv"],
          {"op": Metric("cycles/iter", "one op applied 8 times an iteration (cycles_per_iter)"),
           "softmax": Metric("cycles/iter", "the online softmax step (cycles_per_iter)")},
          build_compute_micro, flush="clean"),
    Suite("gemm_loop", "Triton's GEMM loop on L2-resident tiles, 1 to 264 CTAs, validation/h200/"
          "wgmma_rate.csv (examples/microbench/gemm_loop_l2.trace)", ["wgmma_rate.csv"],
          {"ktile": Metric("cycles", "SM cycles a k-tile (cycles_per_ktile_med)")},
          build_gemm_loop, flush="clean"),
    Suite("gemm_width", "one short Triton TMA GEMM at 1 to 132 CTAs, one wave, cold L2, on the H100 "
          "(validation/h100/cta_width.csv; the manifest with the H100's DRAM)", ["../h100/cta_width.csv"],
          {"cta_cycles": Metric("cycles", "the slowest CTA's SM cycles (%clock64)", "static TTGIR route")},
          build_gemm_width),
    Suite("gemm_width_h200", "gemm_width's launches on the H200 (validation/h200/cta_width.csv, "
          "session 41's card, 1980 MHz)", ["cta_width.csv"],
          {"cta_cycles": Metric("cycles", "the slowest CTA's SM cycles (%clock64)", "static TTGIR route")},
          build_gemm_width_h200),
    Suite("tma_chase", "TMA_BULK + MB_WAIT latency chase of validation/h200/tma_chase.csv "
          "(examples/microbench/tma_chase.trace)", ["tma_chase.csv"],
          {f"{mode}_{b}B": Metric("cycles/step", f"{mode} chase, {b} B copies (cycles_per_load)")
           for mode in ("warm", "cold") for b in (128, 16)},
          build_tma_chase, flush="clean"),
    Suite("lrc_merge", "reads of the same lines by several SMs, validation/h200/lrc_merge.csv "
          "(examples/microbench/lrc_merge.trace)", ["lrc_merge.csv"],
          {"l2_tex_read_sectors": Metric("sectors", "lts__t_sectors_srcunit_tex_op_read.sum, cold L2",
                                         fmt="{:.0f}")},
          build_lrc_merge, flush="clean"),
    Suite("tma_box", "one warm TMA box or bulk copy at a time against its size, validation/h200/"
          "tma_first.csv (examples/microbench/tma_box_warm.trace)", ["tma_first.csv"],
          {"box": Metric("cycles", "a 2D box of R rows x 128 B from the L2 (warm_rows_R)"),
           "bulk": Metric("cycles", "a bulk copy of B bytes from the L2 (warm_bulk_B)")},
          build_tma_box, flush="clean"),
    Suite("tma_cold", "a CTA's first cold TMA box and its later ones on 1, 16 and 132 CTAs, "
          "validation/h200/tma_first.csv `cold` rows (examples/microbench/tma_first.trace)", ["tma_first.csv"],
          {"median": Metric("cycles", "box latency of the median CTA (cycles_med; boxes 1-5: their mean)"),
           "slowest": Metric("cycles", "box 0's slowest CTA (cycles_max)")},
          build_tma_cold),
    Suite("tma_edge", "warm 2D boxes at the tensor's edge, validation/h200/tma_load.csv `edge` rows "
          "(examples/microbench/tma_edge.trace)", ["tma_load.csv"],
          {"box": Metric("cycles", "cycles a box (cyc_box_med)")},
          build_tma_edge, flush="clean"),
    Suite("tma_ring", "one SM's ring of cold 2D boxes, 1 to 3 in flight, validation/h200/"
          "tma_inflight.csv (examples/microbench/tma_inflight.trace)", ["tma_inflight.csv"],
          {"box": Metric("cycles", "cycles a box (op_bytes / bytes_per_cycle)")},
          build_tma_ring),
    Suite("tma_stride", "GEMM-like operand panels of every pitch streamed from DRAM by 132 SMs, "
          "validation/h200/dram_stride.csv `bw panel` rows (examples/microbench/tma_panel_stream.trace)",
          ["dram_stride.csv"],
          {"bandwidth": Metric("GB/s", "GBps (CUDA-event median of 6 launches)", fmt="{:.0f}")},
          build_tma_stride, flush="clean"),
    Suite("tma_loaded", "128-row boxes streamed by 1 to 264 CTAs through 1 to 8 stages, from DRAM, "
          "from the L2 and all SMs the same lines, validation/h200/tma_loaded.csv "
          "(examples/microbench/tma_loaded.trace)",
          ["tma_loaded.csv"],
          {"box": Metric("cycles", "box_cycles_med (a CTA's span / 128 boxes, median of 5 launches)",
                         fmt="{:.0f}")},
          build_tma_loaded),
    Suite("tma_misaligned", "box rows that start inside a line: tma_loaded's rings at row pitches 8208 "
          "and 8256 B against 8192 B, validation/h100/misaligned/ (the lent H100; examples/microbench/"
          "tma_loaded.trace with the H100's memory system)", [str(MISALIGNED_DATA / "tma_loaded_misaligned.csv")],
          {"penalty": Metric("x", "box_cycles_med at the pitch / at 8192 B (5 launches each)", fmt="{:.3f}")},
          build_tma_misaligned),
    Suite("l2_writeback", "the dirty L2 a write flush leaves, written back by a DRAM read stream: "
          "validation/h100/dirty_l2/ (the lent H100; examples/microbench/tma_bulk_stream.trace with the "
          "H100's memory system)", [str(WRITEBACK_DATA / "dirty_l2.csv")],
          {"writeback": Metric("MB", "dram__bytes_write.sum after a write flush (ncu, --cache-control none)",
                               fmt="{:.1f}"),
           "added": Metric("us", "event_us_med after a write flush minus after a read flush (15 launches each)",
                           fmt="{:.2f}")},
          build_l2_writeback),
    Suite("tma_bandwidth", "TMA bandwidth of validation/h200/bandwidth.csv (examples/microbench/"
          "tma_bulk_stream.trace, tma_2d_stream.trace)", ["bandwidth.csv"],
          {"bandwidth": Metric("GB/s", "GBps (median of the 4 GiB stream)", fmt="{:.0f}")},
          build_tma_bandwidth, flush="clean"),
]}
ALIASES = {"microbenchmarks": ["gemm_loop", "gemm_width", "gemm_width_h200", "tma_chase", "tma_box", "tma_ring", "tma_bandwidth", "tma_stride", "tma_loaded",
                               "compute_micro", "lrc_merge", "l2_writeback", "tma_misaligned", "tma_cold"]}


# ---- thresholds -------------------------------------------------------------------------------

def load_thresholds(path):
    if not Path(path).is_file():
        raise ValidationError(f"{rel(path)}: no such file (the MAPE thresholds)")
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise ValidationError(f"{rel(path)}: {e}") from None
    for suite, metrics in data.items():
        if suite not in SUITES:
            raise ValidationError(f"{rel(path)}: [{suite}] is not a suite ({', '.join(SUITES)})")
        for metric, t in metrics.items():
            if metric not in SUITES[suite].metrics:
                raise ValidationError(f"{rel(path)}: [{suite}.{metric}] is not a metric of {suite} "
                                      f"({', '.join(SUITES[suite].metrics)})")
            for key, value in t.items():
                if key not in ("full", "fast", "full_max", "fast_max") or not isinstance(value, (int, float)):
                    raise ValidationError(f"{rel(path)}: [{suite}.{metric}] {key} = {value!r}: expected "
                                          "`full` and `fast` (MAPE thresholds in percent) and optionally "
                                          "`full_max` and `fast_max` (|error| thresholds)")
    return data


def suggested(mape):
    """Today's MAPE plus a small margin: 5% of it, at least 0.3 points, rounded up to 0.1."""
    return math.ceil((mape + max(0.3, 0.05 * mape)) * 10) / 10


# ---- the report -------------------------------------------------------------------------------

def mape(points):
    return sum(abs(p.error) for p in points) / len(points)


def report(suites_points, thresholds, fast, out):
    """Prints the tables; returns the summary rows (suite, metric, n, MAPE, max, threshold, ok)."""
    summary = []
    mode = "fast" if fast else "full"
    for suite, points, notes in suites_points:
        title = suite.title
        if H200 != COMPANIONS:
            title = title.replace("validation/h200/", f"{rel(H200)}/")
            if not (H200 / "attention").is_dir():   # a run with its attention files at its top
                title = title.replace(f"{rel(H200)}/attention/", f"{rel(H200)}/")
        print(f"## {suite.name}: {title}\n", file=out)
        for note in notes:
            print(f"- {note}", file=out)
        if notes:
            print(file=out)
        for metric_id, metric in suite.metrics.items():
            ps = [p for p in points if p.metric == metric_id]
            if not ps:
                continue
            compared = sorted({p.compared for p in ps})
            by = f" of {metric.route}" if metric.route else ""
            print(f"### {suite.name}.{metric_id}: measured {metric.measured} against simulated "
                  f"{' / '.join(compared)}{by}\n", file=out)
            print(f"| point | clock (MHz) | measured ({metric.unit}) | predicted ({metric.unit}) | error |",
                  file=out)
            print("| --- | ---: | ---: | ---: | ---: |", file=out)
            for p in ps:
                clock = f"{p.clock_mhz:.0f}" if p.clock_mhz else "-"
                print(f"| {p.label} | {clock} | {metric.fmt.format(p.measured)} | "
                      f"{metric.fmt.format(p.predicted)} | {p.error:+.1f}% |", file=out)
            m, worst = mape(ps), max(abs(p.error) for p in ps)
            table = thresholds.get(suite.name, {}).get(metric_id, {})
            limit, worst_limit = table.get(mode), table.get(f"{mode}_max")
            ok = (limit is None or m <= limit) and (worst_limit is None or worst <= worst_limit)
            verdict = "no threshold" if limit is None else f"threshold {limit:.1f}%"
            if worst_limit is not None:
                verdict += f", max |error| threshold {worst_limit:.1f}%"
            if limit is not None or worst_limit is not None:
                verdict += f": {'pass' if ok else 'FAIL'}"
            print(f"\nMAPE {m:.1f}%, max |error| {worst:.1f}% over {len(ps)} points ({verdict})\n", file=out)
            summary.append((suite.name, metric_id, len(ps), m, worst, limit, ok))
    return summary


def write_csv(path, suites_points):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["suite", "metric", "point", "source", "clock_mhz", "measured", "predicted", "error_pct",
                    "unit", "simulated"])
        for suite, points, _ in suites_points:
            for p in points:
                w.writerow([suite.name, p.metric, p.label, p.where, p.clock_mhz or "", f"{p.measured:.6g}",
                            f"{p.predicted:.6g}", f"{p.error:.3f}", suite.metrics[p.metric].unit, p.compared])


def import_pyplot():
    try:
        import matplotlib
    except ImportError:
        # Debian's python3-matplotlib lives in /usr/lib/python3/dist-packages, which another
        # interpreter of the same minor version (pyenv, a venv) can use
        dist = Path(f"/usr/lib/python3/dist-packages")
        if not dist.is_dir():
            return None
        sys.path.append(str(dist))
        try:
            import matplotlib
        except Exception:
            return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def plot(path, suites_points, summary):
    plt = import_pyplot()
    if plt is None:
        print(f"note: matplotlib is not installed (apt-get install python3-matplotlib): no plot written "
              f"to {path}", file=sys.stderr)
        return False
    panels = [(s, ps) for s, ps, _ in suites_points if ps]
    if not panels:
        return False
    cols = min(3, len(panels))
    rows = cdiv(len(panels), cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 4.8 * rows), squeeze=False)
    mapes = {(s, m): v for s, m, _, v, *_ in summary}
    for ax, (suite, points) in zip(axes.flat, panels):
        lo, hi = math.inf, 0
        for metric_id, metric in suite.metrics.items():
            ps = [p for p in points if p.metric == metric_id and p.measured > 0 and p.predicted > 0]
            if not ps:
                continue
            xs, ys = [p.measured for p in ps], [p.predicted for p in ps]
            lo, hi = min(lo, *xs, *ys), max(hi, *xs, *ys)
            ax.scatter(xs, ys, s=16, alpha=0.75,
                       label=f"{metric_id} ({metric.unit}): MAPE {mapes[(suite.name, metric_id)]:.1f}%")
        lo, hi = lo / 1.3, hi * 1.3
        ax.plot([lo, hi], [lo, hi], "k-", lw=0.8, label="y = x")
        for f in (0.9, 1.1):
            ax.plot([lo, hi], [f * lo, f * hi], "k:", lw=0.6, label="+-10%" if f > 1 else None)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
        ax.set_xlabel("measured on the H200")
        ax.set_ylabel("predicted by simfa")
        ax.set_title(suite.name)
        ax.grid(True, which="both", lw=0.3, alpha=0.5)
        ax.legend(fontsize=7, loc="upper left")
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


# ---- main -------------------------------------------------------------------------------------

def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="suites: " + ", ".join(SUITES) + "; microbenchmarks = "
                                + " + ".join(ALIASES["microbenchmarks"]))
    p.add_argument("simfa", help="the simfa binary (build/release/bin/simfa)")
    p.add_argument("manifest", help="the manifest (configs/h200.toml)")
    p.add_argument("suites", nargs="*", metavar="SUITE", help="suites to run (default: all)")
    p.add_argument("--csv", help="write every point to this CSV")
    p.add_argument("--plot", help="write a predicted-vs-measured log-log plot per suite to this PNG")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="simulations at a time (default: nproc)")
    p.add_argument("--fast", action="store_true", help="a handful of points per suite, `fast` thresholds")
    p.add_argument("--thresholds", default=str(THRESHOLDS), help=f"threshold table (default {rel(THRESHOLDS)})")
    p.add_argument("--routes", default="static,gemm,trace",
                   help="GEMM routes to compare: static (TTGIR), gemm (the generator), trace (Proton traces)")
    p.add_argument("--cache", help="keep each simulation's stats in this directory and reuse them (keyed on "
                   "the binary, its plugins, the manifest, the workload and the clock): a rerun resumes")
    p.add_argument("--max-cost", type=float, metavar="SECONDS",
                   help="leave out the points whose simulations are estimated to take longer than this "
                        "(a quick look at a large suite; the thresholds still apply, to the rest)")
    p.add_argument("--data", default=str(H200), help=f"the measurements (default {rel(H200)})")
    p.add_argument("--attention-clocks", metavar="CSV",
                   help="the attention suites' SM clocks from this attention_clocks.csv instead of the "
                        "data's (a run without Nsight Compute's clocks, e.g. validation/h100/session44 "
                        "with the H200's); the span metrics, ncu's durations of that run, are left out")
    p.add_argument("--workload-keys", action="append", default=[], metavar="FRONTEND:K=V[,K=V...]",
                   help="append these keys to every `FRONTEND:` workload a point simulates (simfa run, "
                        "not analyze), e.g. fa3:exp_step_per_cycle=10.58, to validate a frontend "
                        "option without changing its default (repeatable)")
    p.add_argument("--points", metavar="REGEX",
                   help="only the comparisons whose label (the tables' `point` column) this Python "
                        "regular expression matches, e.g. '^1024x1024x16384 ' or '128x256x64'; a "
                        "subset is no suite, so no threshold is checked")
    p.add_argument("--progress", action="store_true", default=None,
                   help="a line per finished simulation on stderr (default: when stderr is a terminal)")
    return p.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    global H200, ATTENTION_CLOCKS
    H200 = Path(args.data).resolve()
    if not H200.is_dir():
        raise ValidationError(f"{args.data}: no such directory")
    if args.attention_clocks:
        ATTENTION_CLOCKS = Path(args.attention_clocks).resolve()
        if not ATTENTION_CLOCKS.is_file():
            raise ValidationError(f"--attention-clocks {args.attention_clocks}: no such file")
    if args.jobs < 1:
        raise ValidationError(f"--jobs {args.jobs}: must be at least 1")
    simfa = args.simfa if os.sep in args.simfa else (shutil_which(args.simfa) or args.simfa)
    if not (os.path.isfile(simfa) and os.access(simfa, os.X_OK)):
        raise ValidationError(f"{args.simfa}: no simfa binary there (build it: cmake --build build/release)")
    if not os.path.isfile(args.manifest):
        raise ValidationError(f"{args.manifest}: no such manifest")
    names = []
    for s in args.suites or list(SUITES):
        if s in ALIASES:
            names += ALIASES[s]
        elif s in SUITES:
            names.append(s)
        else:
            raise ValidationError(f"unknown suite '{s}' (suites: {', '.join(list(SUITES) + list(ALIASES))})")
    names = list(dict.fromkeys(names))
    thresholds = load_thresholds(args.thresholds)
    try:
        only = re.compile(args.points) if args.points is not None else None
    except re.error as e:
        raise ValidationError(f"--points {args.points}: not a regular expression ({e})")
    if only is not None:
        thresholds = {}
    progress = sys.stderr.isatty() if args.progress is None else args.progress

    workload_keys = []
    for wk in args.workload_keys:
        frontend, sep, keys = wk.partition(":")
        if not sep or not re.fullmatch(r"[a-z0-9_]+", frontend) or not re.fullmatch(r"[^,=]+=[^,]*(,[^,=]+=[^,]*)*", keys):
            raise ValidationError(f"--workload-keys {wk}: expected FRONTEND:KEY=VALUE[,KEY=VALUE...] "
                                  "(e.g. fa3:exp_step_per_cycle=10.58)")
        workload_keys.append((frontend, keys))
    simulator = Simulator(os.path.abspath(simfa), os.path.abspath(args.manifest), args.jobs, args.cache,
                          workload_keys)
    routes = tuple(r.strip() for r in args.routes.split(",") if r.strip())
    for r in routes:
        if r not in ("static", "gemm", "trace"):
            raise ValidationError(f"--routes: unknown route '{r}' (static, gemm, trace)")
    ctx = Context(simulator, routes)
    built, skipped = [], []
    for name in names:
        suite = SUITES[name]
        missing = [f for f in suite.files if not data_path(f).is_file()
                   and not (ATTENTION_CLOCKS and f == "attention/attention_clocks.csv")]
        if missing:
            skipped.append(f"{name}: skipped, {rel(data_path(missing[0]))} is not committed yet")
            continue
        points, notes = suite.build(ctx, args.fast)
        if suite.flush == "clean":
            points = [replace(p, sims=tuple(replace(s, sets=s.sets + ctx.clean_l2())
                                            for s in p.sims)) for p in points]
        if args.max_cost is not None:
            kept = [p for p in points if sum(sim.cost for sim in p.sims) <= args.max_cost]
            if len(kept) < len(points):
                skipped.append(f"{name}: {len(points) - len(kept)} of {len(points)} comparisons left out "
                               f"(--max-cost {args.max_cost:g}: estimated to simulate longer)")
            points = kept
        if only is not None:
            kept = [p for p in points if only.search(p.label)]
            skipped.append(f"{name}: {len(kept)} of {len(points)} comparisons match --points {args.points}")
            points = kept
        built.append((suite, points, notes))
    if only is not None and not any(points for _, points, _ in built):
        raise ValidationError(f"--points {args.points}: matches no comparison of the suites run")

    t0 = time.monotonic()
    sims = [s for _, points, _ in built for p in points for s in p.sims]
    results, errors = simulator.run_all(sims, progress)
    wall = time.monotonic() - t0
    # a route that cannot express a point (the generator rejecting a config) skips it, with a note
    rejected = {s: e for s, e in errors.items() if "error: [workload]" in e
                and all(p.optional for _, ps, _ in built for p in ps if s in p.sims)}
    fatal = {s: e for s, e in errors.items() if s not in rejected}
    if fatal:
        for sim, err in fatal.items():
            print(f"error: {err}", file=sys.stderr)
        failed = {p.where for _, points, _ in built for p in points if any(s in fatal for s in p.sims)}
        print(f"error: {len(fatal)} of {len(set(sims))} simulations failed (rows: {', '.join(sorted(failed))})",
              file=sys.stderr)
        return 1
    for i, (suite, points, notes) in enumerate(built):
        skipped_here = {}
        for p in points:
            for s in p.sims:
                if s in rejected:
                    msg = re.search(r"error: \[workload\] (.*?)(?: \[plugin [^]]*\])?$", rejected[s], re.M)
                    skipped_here.setdefault((p.label, p.where, s.workload.split(":")[0]),
                                            msg.group(1) if msg else rejected[s].splitlines()[-1])
        for (label, where, route), why in skipped_here.items():
            notes.append(f"{where}: {label}: not simulated by the `{route}:` route: {why}")
        built[i] = (suite, [p for p in points if not any(s in rejected for s in p.sims)], notes)
    for _, points, _ in built:
        for p in points:
            p.predicted, p.compared = p.predict([results[s] for s in p.sims])
            if p.measured <= 0:
                raise ValidationError(f"{p.where}: measured value {p.measured} is not positive")

    out = sys.stdout
    against = "the H200" if H200 == COMPANIONS else rel(H200)
    print(f"# simfa against {against}: {rel(args.manifest)}{' (--fast)' if args.fast else ''}\n", file=out)
    for d in sorted(COMPANIONS_USED):
        skipped.append(f"{rel(H200 / d)}: not there; the TTGIR of {rel(COMPANIONS / d)} used")
    for s in skipped:
        print(f"- {s}", file=out)
    if skipped:
        print(file=out)
    summary = report(built, thresholds, args.fast, out)

    print("## Summary\n", file=out)
    print("| suite | metric | points | MAPE | max abs error | threshold | |", file=out)
    print("| --- | --- | ---: | ---: | ---: | ---: | --- |", file=out)
    for suite, metric, n, m, worst, limit, ok in summary:
        print(f"| {suite} | {metric} | {n} | {m:.1f}% | {worst:.1f}% | "
              f"{'-' if limit is None else f'{limit:.1f}%'} | {'ok' if ok else 'FAIL'} |", file=out)
    print(f"\n{len(set(sims))} simulations in {wall:.0f} s ({args.jobs} at a time)", file=out)

    mode = "fast" if args.fast else "full"
    unset = [(s, m, v) for s, m, _, v, _, limit, _ in summary if limit is None]
    if unset and only is None:
        print(f"\nno `{mode}` threshold in {rel(args.thresholds)} for: " + ", ".join(f"{s}.{m}" for s, m, _ in unset)
              + "; today's MAPE plus a margin would be:\n", file=out)
        for s, m, v in unset:
            print(f"    [{s}.{m}] {mode} = {suggested(v)}", file=out)

    if args.csv:
        write_csv(args.csv, built)
    if args.plot:
        plot(args.plot, built, summary)
    failed = [(s, m) for s, m, *_, ok in summary if not ok]
    if failed:
        print(f"\nFAIL: past the threshold: {', '.join(f'{s}.{m}' for s, m in failed)}", file=sys.stderr)
        return 3
    return 0


def shutil_which(name):
    import shutil
    return shutil.which(name)


def on_sigterm(signum, frame):
    raise KeyboardInterrupt


if __name__ == "__main__":
    import signal
    signal.signal(signal.SIGTERM, on_sigterm)
    try:
        sys.exit(main(sys.argv[1:]))
    except ValidationError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
