#!/usr/bin/env python3
"""L2 size x slice hash over FA3 sequence lengths on the H800 manifest, through the simulator:
cycles and DRAM bytes against the L2 size, one line per (slice hash, seqlen). docs/sweeps.md.

    PYTHONPATH=build/default/python python3 examples/python/l2_sweep.py [--out l2_sweep.png]
        [--scheduler-file FILE]      # run the points on a Dask cluster instead of local threads

4 sizes x 2 hashes x 3 seqlens = 24 simulations, about 2 CPU-minutes (most of it the seqlen-4096
points): 20-odd seconds on 8 free cores. docs/l2-sweep.png is its output.
"""
import argparse
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import simfa  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Sizes the H800's L2 geometry takes: 160 slices x 16 ways x 128-byte lines x a whole number of
# sets per slice (multiples of 320 KiB).
SIZES_MIB = [5, 10, 25, 50]
HASHES = ["slice.xor", "slice.linear"]
SEQLENS = [1024, 2048, 4096]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--manifest", default=os.path.join(ROOT, "configs", "h800.toml"))
    parser.add_argument("--out", default="l2_sweep.png")
    parser.add_argument("--scheduler-file", help="a Dask scheduler's file: run the points there")
    args = parser.parse_args()

    client = None
    if args.scheduler_file:
        from distributed import Client
        client = Client(scheduler_file=args.scheduler_file)

    rows = simfa.sweep(args.manifest, "fa3:model=llama3-8b",
                       vary={"memory.l2.slice_map.plugin": HASHES,
                             "workload.seqlen": SEQLENS,
                             "memory.l2.size": [f"{s}MiB" for s in SIZES_MIB]},
                       client=client)
    failed = [r for r in rows if r["error"]]
    for r in failed:
        print(f"point {r['point']} failed: {r['error']}")

    fig, (ax_cycles, ax_dram) = plt.subplots(1, 2, figsize=(11, 4.2))
    for hash_name, style in zip(HASHES, ["-", "--"]):
        for color, seqlen in enumerate(SEQLENS):
            line = [r for r in rows if r["memory.l2.slice_map.plugin"] == hash_name
                    and r["workload.seqlen"] == seqlen and not r["error"]]
            sizes = [SIZES_MIB[[f"{s}MiB" for s in SIZES_MIB].index(r["memory.l2.size"])]
                     for r in line]
            label = f"{hash_name}, seqlen {seqlen}"
            ax_cycles.plot(sizes, [r["cycles"] for r in line], style, color=f"C{color}", marker="o",
                           label=label)
            ax_dram.plot(sizes, [(r["dram_read_bytes"] + r["dram_write_bytes"]) / 1e6 for r in line],
                         style, color=f"C{color}", marker="o", label=label)
    for ax, ylabel in [(ax_cycles, "kernel cycles"), (ax_dram, "DRAM traffic (MB)")]:
        ax.set_xscale("log", base=2)
        ax.set_xticks(SIZES_MIB, [f"{s} MiB" for s in SIZES_MIB])
        ax.set_xlabel("L2 size")
        ax.set_ylabel(ylabel)
        ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.3)
    ax_dram.legend(fontsize=7)
    fig.suptitle("FA3 llama3-8b on the H800 manifest: L2 size x slice hash (simfa.sweep)")
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(f"{len(rows)} points ({len(failed)} failed) -> {args.out}")


if __name__ == "__main__":
    main()
