#!/usr/bin/env python3
"""Summarize run_opmix.sh's SASS source pages (validation/h200/opmix/).

    tools/device/opmix_post.py DIR > DIR/opmix_summary.csv

For each point NAME (NAME_sass.csv.gz, NAME_log.txt: the spec) and each SASS opcode with its
modifiers: the warp instructions executed, their share of the kernel's, and the share of the
kernel's warp-stall samples taken at that opcode with its most frequent stall reason. The
opcode is the instruction's first word after its predicate."""
import collections
import csv
import gzip
import re
import sys
from pathlib import Path

PREDICATE = re.compile(r"^@!?U?P\w+\s+")


def opcode(source):
    words = PREDICATE.sub("", source.strip()).split()
    return words[0] if words else "?"


def spec_of(log):
    for line in log.read_text().splitlines():
        if line.startswith("ncu point "):
            return line.split()[2]
    return ""


def summarize(sass, spec, out):
    rows = list(csv.reader(gzip.open(sass, "rt")))
    kernel = rows[0][1] if len(rows[0]) > 1 else ""
    header = rows[1]
    lines = [dict(zip(header, r)) for r in rows[2:] if len(r) == len(header)]
    reasons = [c for c in header if c.startswith("stall_") and "(Not" not in c]
    executed = collections.Counter()
    samples = collections.Counter()
    by_reason = collections.defaultdict(collections.Counter)
    for line in lines:
        op = opcode(line["Source"])
        executed[op] += int(line["Instructions Executed"] or 0)
        samples[op] += int(line["Warp Stall Sampling (All Samples)"] or 0)
        for r in reasons:
            by_reason[op][r[len("stall_"):]] += int(line[r] or 0)
    total = sum(executed.values())
    total_samples = sum(samples.values()) or 1
    for op, n in executed.most_common():
        top = by_reason[op].most_common(1)
        out.writerow([sass.name.split("_sass")[0], spec, kernel, op, n, f"{100 * n / total:.3f}",
                      samples[op], f"{100 * samples[op] / total_samples:.2f}",
                      top[0][0] if top and top[0][1] > 0 else ""])


def main():
    d = Path(sys.argv[1])
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["point", "spec", "kernel", "opcode", "warp_instructions", "instruction_pct",
                  "stall_samples", "stall_pct", "top_stall_reason"])
    for sass in sorted(d.glob("*_sass.csv.gz")):
        name = sass.name.split("_sass")[0]
        log = d / f"{name}_log.txt"
        summarize(sass, spec_of(log) if log.is_file() else "", out)


if __name__ == "__main__":
    main()
