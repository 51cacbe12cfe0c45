#!/usr/bin/env python3
"""How the H200 splits a TMA box row into L2 requests, read off gemm_ncu.csv: the measured read
sectors a request (lts__t_sectors_srcunit_tex_op_read / lts__t_requests_srcunit_tex_op_read) and
the LRC's merged share (1 - lrc2xbar / coalescable read sectors), by row pitch modulo the 128-byte
line, beside two rules for a 128-byte box row at each of its offsets in a line:

  line:     one request a line the row touches, four sectors each (tma.traffic today: a row
            that starts inside a line costs two whole lines)
  half:     an aligned row is one 128-byte request; a row that starts inside a line is cut at
            every 64-byte boundary, each piece a request of the sectors it touches

Both operands of gemm_suite's kernels are K-major fp16, so a box row is block_k x 2 bytes and
the rows lie K x 2 bytes apart: a pitch that is not a multiple of 128 puts the rows at every
offset of its residue class in turn (docs/calibration.md §44).

    python3 tools/l2_request_split.py [--data validation/h200]"""
import argparse
import math
import statistics
import sys
from pathlib import Path

from validate import ValidationError, gemm_config, read_csv

ROOT = Path(__file__).resolve().parent.parent
LINE, SECTOR, HALF = 128, 32, 64
REQUESTS = "lts__t_requests_srcunit_tex_op_read.sum"
SECTORS = "lts__t_sectors_srcunit_tex_op_read.sum"
COALESCABLE = "lrc__request_sectors_op_read_coalescable.sum"
FORWARDED = "lrc__lrc2xbar_sectors_op_read.sum"


def sectors(start, end):
    """The 32-byte sectors that bytes [start, end) touch."""
    return (end - 1) // SECTOR - start // SECTOR + 1


def row_requests(offset, row_bytes, rule):
    """[(sectors of each request)] of one box row `row_bytes` long starting `offset` bytes into a
    line, under `rule` ('line' or 'half')."""
    out = []
    start, end = offset, offset + row_bytes
    line = start - start % LINE
    while line < end:
        a, b = max(start, line), min(end, line + LINE)
        if rule == "line":
            out.append(LINE // SECTOR)
        elif a == line and b == line + LINE:
            out.append(LINE // SECTOR)
        else:
            cut = a
            while cut < b:
                nxt = min(b, cut - cut % HALF + HALF)
                out.append(sectors(cut, nxt))
                cut = nxt
        line += LINE
    return out


def per_row(pitch, row_bytes, rule):
    """(requests, sectors) a row on average over the offsets the pitch visits."""
    step = pitch % LINE
    period = LINE // math.gcd(step, LINE) if step else 1
    reqs = [row_requests((r * step) % LINE, row_bytes, rule) for r in range(period)]
    return (statistics.mean(len(q) for q in reqs), statistics.mean(sum(q) for q in reqs))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(ROOT / "validation" / "h200"))
    args = ap.parse_args(argv)
    try:
        rows = read_csv(Path(args.data) / "gemm_ncu.csv", ("M", "N", "K", REQUESTS, SECTORS))
        classes = {}
        for r in rows:
            cfg = gemm_config(r)
            if r.num(REQUESTS) <= 0:
                continue
            merged = 1 - r.num(FORWARDED) / r.num(COALESCABLE) if r.has(COALESCABLE) and r.has(FORWARDED) else None
            key = (2 * cfg.k % LINE, 2 * cfg.bk)
            classes.setdefault(key, []).append((r.num(SECTORS) / r.num(REQUESTS), merged, cfg.label))
    except ValidationError as e:
        sys.exit(f"error: {e}")
    if not classes:
        sys.exit(f"{args.data}: no launch with {REQUESTS}")
    print("| pitch mod 128 (B) | box row (B) | launches | measured sectors / request | rule line | rule half "
          "| requests a row, line / half | LRC merged, median |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for (residue, row_bytes), points in sorted(classes.items()):
        line_req, line_sec = per_row(residue, row_bytes, "line")
        half_req, half_sec = per_row(residue, row_bytes, "half")
        merged = [m for _, m, _ in points if m is not None]
        merged_text = f"{100 * statistics.median(merged):.1f}%" if merged else "-"
        print(f"| {residue} | {row_bytes} | {len(points)} | {statistics.median(s for s, _, _ in points):.2f} "
              f"| {line_sec / line_req:.2f} | {half_sec / half_req:.2f} | {line_req:.3f} / {half_req:.3f} "
              f"| {merged_text} |")


if __name__ == "__main__":
    main()
