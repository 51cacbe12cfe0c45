#!/usr/bin/env python3
"""End-to-end checks of `simfa run --gantt` and the --timeline counter tracks (docs/pictures.md).

    pictures_test.py SIMFA CASE      CASE: svg | errors | png | counters

Exit 0 passes, 1 fails, 77 skips (png without rsvg-convert).
"""
import collections
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
H800 = os.path.join(ROOT, "configs", "h800.toml")
TINY = os.path.join(ROOT, "examples", "traces", "tiny_load_mma.trace")
PINGPONG = os.path.join(ROOT, "examples", "traces", "fa3_pingpong.trace")
GEMM = os.path.join(ROOT, "examples", "traces", "gemm_grid.trace")
SVG = "{http://www.w3.org/2000/svg}"
# Level-0 TMA at 1024 B/cycle, so that tiny_load_mma's schedule can be worked out by hand.
FIXED_TMA = ["--set", "tma.plugin=tma.fixed", "--set", "tma.bytes_per_cycle=1024"]


def simfa(binary, *args, expect=0):
    p = subprocess.run([binary, "run", H800, "-q", *args], capture_output=True, text=True)
    if expect is not None and p.returncode != expect:
        raise AssertionError(f"exit {p.returncode}, expected {expect}: {' '.join(args)}\n{p.stderr}")
    return p


def bars(svg_path):
    root = ET.parse(svg_path).getroot()  # raises on malformed XML
    assert root.tag == SVG + "svg", root.tag
    lanes = [r for r in root.iter(SVG + "rect") if r.get("class") == "lane"]
    drawn = [r for r in root.iter(SVG + "rect") if r.get("class") == "bar"]
    return root, lanes, drawn


def case_svg(binary, tmp):
    # tiny_load_mma.trace, one WarpGroup, TMA op = 40 + 130 setup cycles + bytes / 1024:
    #   0 ACQUIRE_STAGE  1 TMA_LOAD A (8 KiB: lands 171 + 8 = 179)  2 TMA_LOAD B (16 KiB, after
    #   A on the channel: 179 + 16 = 195)  3 MB_WAIT blocks until 195, issues at 195
    #   196..199 four m64n128k16 WGMMAs, 64 cycles each on one pipeline: done 260, 324, 388, 452
    #   200 WGMMA_COMMIT  201 WGMMA_WAIT blocks until 452  453 RELEASE_STAGE  454 EXIT; 455 cycles.
    out = os.path.join(tmp, "tiny.svg")
    simfa(binary, "-w", TINY, *FIXED_TMA, "--gantt", out)
    _, lanes, drawn = bars(out)
    assert len(lanes) == 1, len(lanes)
    got = sorted((b.get("data-kind"), int(b.get("data-begin")), int(b.get("data-end"))) for b in drawn)
    # 1600 pixels for 455 cycles: 3.5 pixels a cycle, nothing merges.
    want = sorted([("tma_issue", 1, 2), ("tma_issue", 2, 3), ("wait:mb", 3, 195),
                   ("wgmma", 196, 197), ("wgmma", 197, 198), ("wgmma", 198, 199), ("wgmma", 199, 200),
                   ("wait:wgmma", 201, 452), ("exit", 454, 455),
                   ("tma_flight", 1, 195), ("wgmma_flight", 196, 452)])
    assert got == want, f"{got}\n!=\n{want}"
    assert all(b.get("data-spans") == "1" and b.get("data-folded") == "0" for b in drawn)

    # Zoomed to 190..210 the spans are clipped to it.
    simfa(binary, "-w", TINY, *FIXED_TMA, "--gantt", out, "--gantt-cycles", "190..210")
    _, _, drawn = bars(out)
    got = sorted((b.get("data-kind"), int(b.get("data-begin")), int(b.get("data-end"))) for b in drawn)
    want = sorted([("wait:mb", 190, 195), ("wgmma", 196, 197), ("wgmma", 197, 198),
                   ("wgmma", 198, 199), ("wgmma", 199, 200), ("wait:wgmma", 201, 210),
                   ("tma_flight", 190, 195), ("wgmma_flight", 196, 210)])
    assert got == want, f"{got}\n!=\n{want}"

    # FA3 ping-pong on SMs 0 and 1 (one CTA each): a producer and two consumers per SM, and the
    # bars hold every span the timeline holds: merged into a bar of its kind or folded into a
    # neighbour too short to draw.
    timeline = os.path.join(tmp, "pingpong.json")
    simfa(binary, "-w", PINGPONG, "--gantt", out, "--gantt-sms", "0,1", "--timeline", timeline,
          "--timeline-sms", "0,1")
    root, lanes, drawn = bars(out)
    labels = [t.text for g in root.iter(SVG + "g") if g.get("class") == "lanes" for t in g.iter(SVG + "text")]
    ran = {int(l.get("data-sm")) for l in lanes}
    assert labels == [f"SM {sm} WG {wg}" + role for sm in sorted(ran)
                      for wg, role in enumerate([" producer", " consumer", " consumer"])], labels
    in_svg, folded = collections.Counter(), 0
    for b in drawn:
        in_svg[b.get("data-kind")] += int(b.get("data-spans"))
        folded += int(b.get("data-folded"))
    in_timeline = collections.Counter()
    for e in json.load(open(timeline))["traceEvents"]:
        if e["ph"] in ("X", "b") and e["pid"] in ran:
            in_timeline[e["name"]] += 1
    assert sum(in_svg.values()) + folded == sum(in_timeline.values()), (in_svg, folded, in_timeline)
    assert all(in_svg[k] <= in_timeline[k] for k in in_svg), f"{in_svg}\n{in_timeline}"
    assert {"tma_flight", "wgmma_flight", "wait:barrier", "bubble"} <= set(in_svg), in_svg
    # A CTA boundary per CTA that ran on those SMs (the timeline's threads are CTA x WG).
    ctas = {(int(g.get("data-sm")), int(g.get("data-cta"))) for g in root.iter(SVG + "g")
            if g.get("class") == "cta"}
    threads = {(e["pid"], int(e["args"]["name"].split()[1])) for e in json.load(open(timeline))["traceEvents"]
               if e["name"] == "thread_name"}
    assert ctas == threads, f"{ctas} != {threads}"


def case_errors(binary, tmp):
    out = os.path.join(tmp, "x.svg")
    for args, words in [
        (["--gantt", out, "--gantt-cycles", "5..2"], ["--gantt-cycles", "5..2", "after the start"]),
        (["--gantt", out, "--gantt-cycles", "abc"], ["--gantt-cycles", "expected A..B"]),
        (["--gantt", out, "--gantt-cycles", "100000000..100000001"], ["--gantt-cycles", "end of the run"]),
        (["--gantt", out, "--gantt-sms", "500"], ["--gantt-sms", "SM 500 is not in the run", "132 SMs"]),
        (["--gantt", out, "--gantt-sms", "0,x"], ["--gantt-sms", "0,x"]),
        (["--gantt-sms", "0"], ["--gantt"]),
        (["--timeline", os.path.join(tmp, "t.json"), "--timeline-window", "0"], ["--timeline-window"]),
    ]:
        p = simfa(binary, "-w", TINY, *args, expect=None)
        assert p.returncode == 1, f"{args}: exit {p.returncode}\n{p.stderr}"
        for w in words:
            assert w in p.stderr, f"{args}: {w!r} not in {p.stderr!r}"


def png_pixels(path):
    """(width, height, rows of RGBA bytes) of an 8-bit RGBA or RGB, non-interlaced PNG."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, color, _, _, interlace = header
    assert depth == 8 and color in (2, 6) and interlace == 0, header
    bpp = 4 if color == 6 else 3
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


def case_png(binary, tmp):
    rsvg = shutil.which("rsvg-convert")
    if not rsvg:
        print("rsvg-convert not found (Debian: librsvg2-bin): skipped")
        return 77
    svg, png = os.path.join(tmp, "p.svg"), os.path.join(tmp, "p.png")
    simfa(binary, "-w", PINGPONG, "--gantt", svg)
    subprocess.run([rsvg, svg, "-o", png], check=True)
    width, height, bpp, rows = png_pixels(png)
    assert width > 1000 and height > 100, (width, height)
    colors = collections.Counter()
    for row in rows:
        for x in range(0, width * bpp, bpp):
            colors[row[x:x + 3]] += 1
    white = colors.get(b"\xff\xff\xff", 0)
    assert len(colors) >= 8, f"only {len(colors)} colours"
    assert white < 0.95 * width * height, f"{white} of {width * height} pixels white"
    # The bars' own colours are there (WGMMA in flight, bubble).
    for hex_color in ("fc9272", "2ca02c"):
        assert bytes.fromhex(hex_color) in colors, hex_color


def case_counters(binary, tmp):
    stats_path = os.path.join(tmp, "s.json")
    traces = {}
    for stepping in ("event", "reference"):
        traces[stepping] = os.path.join(tmp, f"t_{stepping}.json")
        simfa(binary, "-w", GEMM, "--timeline", traces[stepping], "--timeline-sms", "0,1",
              "--timeline-window", "100", "--stats", stats_path, "--stepping", stepping)
    # Both steppings give the same trace, counter tracks included.
    assert open(traces["event"], "rb").read() == open(traces["reference"], "rb").read()
    stats = json.load(open(stats_path))
    # Observing changes nothing: the same statistics with and without the timeline and the Gantt
    # chart (the simulator's own `sim` object aside).
    plain_path = os.path.join(tmp, "plain.json")
    simfa(binary, "-w", GEMM, "--stats", plain_path)
    simfa(binary, "-w", GEMM, "--stats", stats_path + ".g", "--gantt", os.path.join(tmp, "g.svg"),
          "--gantt-sms", "0,1,2")
    plain = json.load(open(plain_path))
    for observed in (stats, json.load(open(stats_path + ".g"))):
        assert {k: v for k, v in observed.items() if k != "sim"} == \
               {k: v for k, v in plain.items() if k != "sim"}, "observing changed the statistics"
    trace = json.load(open(traces["event"]))
    clock = trace["otherData"]["clock_mhz"]
    tracks = collections.defaultdict(list)
    for e in trace["traceEvents"]:
        if e["ph"] == "C":
            (value,) = e["args"].values()
            (unit,) = e["args"].keys()
            tracks[(e["pid"], f"{e['name']} ({unit})")].append((e["ts"], value))
    names = {name for _, name in tracks}

    def integral(key, scale=1.0):
        points = tracks[key]
        assert points[-1][0] == stats["kernel"]["cycles"], points[-1]
        return sum(v * (points[i + 1][0] - points[i][0]) for i, (_, v) in enumerate(points[:-1])) / scale

    def close(a, b):
        return abs(a - b) <= 1e-6 * max(1.0, abs(b))

    memory = stats["memory"]
    for sm in (0, 1):
        key = (sm, f"SM {sm} tensor core busy (%)")
        busy = stats[f"sm[{sm}]"]["tensor_core"]["busy_cycles"]
        assert busy > 0
        assert close(integral(key, 100.0), busy), (integral(key, 100.0), busy)
        assert all(0 <= v <= 100 for _, v in tracks[key])
        flight = tracks[(sm, f"SM {sm} TMA bytes in flight (bytes)")]
        assert min(v for _, v in flight) >= 0 and flight[-1][1] == 0 and max(v for _, v in flight) > 0
    gpu = 2  # after the SMs' processes
    gb = clock / 1e3
    assert close(integral((gpu, "L2 bandwidth (GB/s)"), gb), memory["llc_read_bytes"] + memory["llc_write_bytes"])
    assert close(integral((gpu, "DRAM bandwidth (GB/s)"), gb), memory["dram_read_bytes"] + memory["dram_write_bytes"])
    rate = tracks[(gpu, "L2 hit rate (%)")]
    assert all(0 <= v <= 100 for _, v in rate) and max(v for _, v in rate) > 0
    assert (gpu, "TMA bytes in flight (all SMs) (bytes)") in tracks, names


def main():
    binary, case = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        try:
            rc = {"svg": case_svg, "errors": case_errors, "png": case_png, "counters": case_counters}[case](binary, tmp)
        except AssertionError as e:
            print(f"FAIL {case}: {e}")
            return 1
    print(f"ok {case}")
    return rc or 0


if __name__ == "__main__":
    sys.exit(main())
