#!/usr/bin/env python3
"""The H200 TMA latency curve, measured against simulated (docs/pictures.md).

  tools/plot_latency.py SIMFA OUT.png [--manifest configs/h200.toml] [--points POINTS.csv]

Runs the tma_chase suite of tools/validate.py (validation/h200/tma_chase.csv through
examples/microbench/tma_chase.trace, cycles per dependent TMA_BULK + MB_WAIT step, by difference)
on the manifest, or reads the points of an earlier `tools/validate.py ... tma_chase --csv
POINTS.csv` with --points (then SIMFA is not run), and plots cycles per step against the working
set: measured and simulated, warm and cold, per copy size. The `ld.global.cg` chase of
validation/h200/pointer_chase.csv, which has no simulated twin, is drawn in gray for reference.
"""
import argparse
import csv
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
H200 = ROOT / "validation" / "h200"


def rows_by_line(path):
    """The CSV's rows keyed by their line number (validate.py's `source` is FILE:LINE)."""
    with open(path, newline="") as f:
        return {i + 2: row for i, row in enumerate(csv.DictReader(f))}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("simfa", help="the simfa binary (build/release/bin/simfa)")
    p.add_argument("out", help="the PNG to write")
    p.add_argument("--manifest", default=str(ROOT / "configs" / "h200.toml"))
    p.add_argument("--points", help="tools/validate.py's --csv of the tma_chase suite (skips simulating)")
    p.add_argument("--jobs", type=int, default=2)
    a = p.parse_args()

    sys.path.insert(0, str(ROOT / "tools"))
    from validate import import_pyplot  # the same matplotlib lookup as validate.py --plot
    plt = import_pyplot()
    if plt is None:
        sys.exit("matplotlib not found (Debian: python3-matplotlib)")

    with tempfile.TemporaryDirectory() as tmp:
        points_path = a.points
        if not points_path:
            points_path = str(Path(tmp) / "points.csv")
            # validate.py exits 3 when a point is past its threshold: still a curve to draw
            rc = subprocess.run([sys.executable, str(ROOT / "tools" / "validate.py"), a.simfa, a.manifest,
                                 "tma_chase", "--csv", points_path, "--jobs", str(a.jobs)],
                                stdout=subprocess.DEVNULL).returncode
            if rc not in (0, 3):
                sys.exit(f"tools/validate.py failed (exit {rc})")
        with open(points_path, newline="") as f:
            points = [r for r in csv.DictReader(f) if r["suite"] == "tma_chase"]
    if not points:
        sys.exit(f"{points_path}: no tma_chase points")

    chase = rows_by_line(H200 / "tma_chase.csv")
    curves = defaultdict(list)  # (mode, bytes) -> [(working set, measured, predicted)]
    for r in points:
        m = re.search(r":(\d+)$", r["source"])
        row = chase[int(m.group(1))]
        key = (row["mode"], int(row["bytes_per_copy"]))
        curves[key].append((int(row["working_set_bytes"]) / 2**20, float(r["measured"]), float(r["predicted"])))

    fig, ax = plt.subplots(figsize=(8, 5.6), dpi=100)
    colors = {("warm", 128): "#1f77b4", ("cold", 128): "#d62728", ("warm", 16): "#2ca02c",
              ("cold", 16): "#ff7f0e"}
    for key in sorted(curves):
        pts = sorted(curves[key])
        ws = [x[0] for x in pts]
        c = colors.get(key, None)
        ax.plot(ws, [x[1] for x in pts], "o-", color=c, ms=3.5, lw=1.2, label=f"{key[0]}, {key[1]} B: measured")
        ax.plot(ws, [x[2] for x in pts], "s--", color=c, ms=3, lw=1.0, mfc="none",
                label=f"{key[0]}, {key[1]} B: simfa")
    ld = defaultdict(list)
    for row in rows_by_line(H200 / "pointer_chase.csv").values():
        ld[row["mode"]].append((int(row["working_set_bytes"]) / 2**20, float(row["cycles_per_load"])))
    for mode, pts in sorted(ld.items()):
        pts.sort()
        ax.plot([x[0] for x in pts], [x[1] for x in pts], ":", color="#999999", lw=1,
                label="ld.global.cg chase, cold and warm (measured only)" if mode == "cold" else None)
    ax.set_xscale("log", base=2)
    ticks = sorted({x for v in curves.values() for x, _, _ in v if float(x).is_integer() and int(x) & (int(x) - 1) == 0})
    ax.set_xticks(ticks, [f"{int(t)}" for t in ticks])
    ax.set_xlabel("working set (MiB)")
    ax.set_ylabel("SM cycles per dependent step")
    ax.set_title("H200 TMA_BULK + MB_WAIT latency chase: measured and simulated (configs/h200.toml)", fontsize=10)
    ax.axvline(50, color="#bbbbbb", lw=0.8)
    ax.text(50, ax.get_ylim()[0] + 5, " 50 MiB L2", va="bottom", fontsize=8, color="#777777")
    ax.grid(True, which="both", alpha=0.25)
    ax.legend(fontsize=7, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.13), frameon=False)
    fig.tight_layout()
    fig.savefig(a.out)
    print(f"wrote {a.out}: {sum(len(v) for v in curves.values())} points in {len(curves)} curves")


if __name__ == "__main__":
    main()
