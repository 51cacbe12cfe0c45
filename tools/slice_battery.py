#!/usr/bin/env python3
"""How evenly a slice map spreads the lines a GPU has in flight: for each map and slice count, the
busiest slice's lines over the mean, over a battery of windows (docs/memory-hierarchy.md §2):
streams of consecutive lines; one column (c1) and four columns (c4) of 1536 or 16896 rows (twelve
128-row boxes, or 132 CTAs' boxes) at row pitches from 256 B to 1 MiB, powers of two, 16 B and 64 B
off a line (a row that starts inside a line touches two), and 2^6 + 1, 2^7 + 1 and 2^8 + 1
lines. The maps are slice.fold's, written again here (the C++ is
memory_models/slice/fold_slice_map.cpp; the formulas on single lines are checked against
tests/memory/slice_test.cpp's by tests/validation/slice_battery_test.py).

    python3 tools/slice_battery.py [--slices 192,160,96] [--worst 3]"""
import argparse

BASE_LINE = 0x7F3A00000000 // 128   # tensors lie near 2^47, as the simulator's do
PITCHES = (256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 1 << 20,
           2000, 2016, 3008, 3088, 6000, 8208, 8256, 8320, 16512, 32896, 12288, 24576, 28672)


def xor_fold(line, shift=7):
    folded, rest = line, line >> shift
    while rest:
        folded ^= rest
        rest >>= shift
    return folded


def add_fold(line, shift=7, multiplier=7):
    copies, rest = 0, line >> shift
    while rest:
        copies += rest
        rest >>= shift
    return (line + multiplier * copies) % (1 << 64)


MAPS = {"fold xor, shift 7": xor_fold, "fold add, shift 7, m 7": add_fold,
        "fold xor, shift 8": lambda line: xor_fold(line, 8)}


def windows():
    """(name, lines) of every window of the battery."""
    for n in (384, 1536):
        yield f"stream of {n} lines", [BASE_LINE + i for i in range(n)]
    for pitch in PITCHES:
        for cols in (1, 4):
            for rows in (1536, 16896):
                lines = []
                for r in range(rows):
                    for c in range(cols):
                        byte = BASE_LINE * 128 + r * pitch + c * 128
                        lines.append(byte // 128)
                        if byte % 128:
                            lines.append(byte // 128 + 1)
                yield f"pitch {pitch} B, {cols} column{'s' if cols > 1 else ''}, {rows} rows", lines


def busiest(slice_of, slices, lines):
    count = [0] * slices
    for line in lines:
        count[slice_of(line) % slices] += 1
    return max(count) * slices / len(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--slices", default="192,160,96")
    ap.add_argument("--worst", type=int, default=3)
    args = ap.parse_args(argv)
    battery = list(windows())
    print("| map | slices | busiest over the mean, worst windows |")
    print("| --- | ---: | --- |")
    for name, slice_of in MAPS.items():
        for slices in (int(s) for s in args.slices.split(",")):
            worst = sorted(((busiest(slice_of, slices, lines), w) for w, lines in battery), reverse=True)
            text = "; ".join(f"{v:.2f} ({w})" for v, w in worst[:args.worst])
            print(f"| {name} | {slices} | {text} |")


if __name__ == "__main__":
    main()
