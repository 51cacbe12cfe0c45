"""Post-processing for tools/device/run_issue17.sh (simfa issue 17). Standard library only, so it
runs on the device and here on the fetched results.

  issue17_post.py metrics LISTING OUT_TXT      pick the ncu metrics that exist (one per line)
  issue17_post.py ttgir DUMPDIR OUTDIR         pick the 3 suite configs' TTGIR (and SASS)
  issue17_post.py ncu R                        R/ncu_*_raw.csv -> R/gemm_ncu.csv, R/clock_domains.csv
  issue17_post.py summary R                    the short tables printed at the end of a run
"""
import csv
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys

# ---------------------------------------------------------------- ncu metric selection
WANTED = [
    "gpu__time_duration.sum",
    "dram__bytes_read.sum", "dram__bytes_write.sum",
    "lts__t_sectors_op_read.sum", "lts__t_sectors_op_write.sum",
    "lts__t_sectors_srcunit_ltcfabric.sum", "lts__t_sectors_srcunit_ltcfabric_op_read.sum",
    "lts__t_sectors_srcunit_tex.sum", "lts__t_sectors_srcunit_tex_op_read.sum",
    "lts__t_sectors_srcunit_tex_op_write.sum",
    "lts__t_requests_srcunit_tex_op_read.sum",
    "lts__t_sectors_op_read_lookup_hit.sum", "lts__t_sectors_op_read_lookup_miss.sum",
    "lts__t_sectors_srcunit_ltcfabric_lookup_hit.sum",
    "lts__t_sectors_srcunit_ltcfabric_lookup_miss.sum",
    "lts__t_sector_hit_rate.pct", "lts__t_sector_op_read_hit_rate.pct",
    "lts__cycles_active.avg", "lts__cycles_elapsed.avg",
    "lts__cycles_active.avg.pct_of_peak_sustained_elapsed",
    "sm__cycles_active.avg", "sm__cycles_elapsed.avg",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    "lts__t_sectors.avg.pct_of_peak_sustained_elapsed",
]
LRC_MAX = 64


def base_of(metric):
    return metric.split(".")[0]


def pick_metrics(listing, out):
    names = set()
    for line in open(listing, errors="replace"):
        m = re.match(r"\s*([a-z0-9]+__[A-Za-z0-9_]+)", line)
        if m:
            names.add(m.group(1))
    chosen = [w for w in WANTED if base_of(w) in names]
    lrc = sorted(n for n in names if n.startswith("lrc__") and ("sector" in n or "request" in n))
    chosen += [n + ".sum" for n in lrc[:LRC_MAX]]
    clocks = sorted(n for n in names if n.endswith("__cycles_elapsed"))
    chosen += [n + ".avg.per_second" for n in clocks]
    for n in ("lrc__cycles_active", "ltcfabric__cycles_active", "fbpa__cycles_active",
              "dram__cycles_active", "lrc__lrc2xbar_cycles_active", "lrc__lrc2xbar_cycles_stalled",
              "lrc__xbar2lrc_cycles_active"):
        if n in names:
            chosen.append(n + ".avg")
    for n in ("lrc__cycles_elapsed", "ltcfabric__cycles_elapsed", "fbpa__cycles_elapsed",
              "dram__cycles_elapsed"):
        if n in names:
            chosen.append(n + ".avg")
    seen = []
    for c in chosen:
        if c not in seen:
            seen.append(c)
    with open(out, "w") as f:
        f.write("\n".join(seen) + "\n")
    print(f"{len(names)} base metrics listed; chose {len(seen)} "
          f"({len(lrc)} lrc sector/request bases, {len(clocks)} clock domains)")
    missing = [w for w in WANTED if base_of(w) not in names]
    if missing:
        print("not on this chip:", " ".join(missing))


# ---------------------------------------------------------------- TTGIR selection
def ttgir_features(path):
    t = open(path).read()
    f = {}
    m = re.search(r"tt\.func public @(\w+)\(", t)
    f["name"] = m.group(1) if m else "?"
    for d, key in (("a_desc", "a"), ("b_desc", "b"), ("c_desc", "c")):
        m = re.search(r"%" + d + r": !tt\.tensordesc<tensor<(\d+)x(\d+)x", t)
        f[key] = (int(m.group(1)), int(m.group(2))) if m else None
    m = re.search(r'"ttg\.num-warps" = (\d+)', t)
    f["warps"] = int(m.group(1)) if m else 0
    div = []
    for arg in ("M", "N", "K"):
        div.append(bool(re.search(r"%" + arg + r": i32 \{tt\.divisibility = 16", t)))
    f["div16"] = tuple(div)
    f["grouped"] = "num_pid_in_group = arith.muli" in t
    # num_stages: the depth of the A operand's multi-buffered allocation (the dump's .json has
    # no num_stages in Triton 3.6)
    f["stages"] = 0
    if f["a"]:
        m = re.search(r"local_alloc : \(\) -> !ttg\.memdesc<(\d+)x%dx%dxf16" % f["a"], t)
        if m:
            f["stages"] = int(m.group(1))
    return f


def pick_ttgir(dump, outdir):
    os.makedirs(outdir, exist_ok=True)
    lines = []
    chosen = {}
    for p in sorted(glob.glob(os.path.join(dump, "*", "*.ttgir"))):
        f = ttgir_features(p)
        h = os.path.basename(os.path.dirname(p))
        if not f["name"].startswith("gemm_tma") or not f["a"] or not f["b"]:
            lines.append(f"{h} {f['name']}")
            continue
        bm, bk = f["a"]
        bn = f["b"][0]
        g = 8 if f["grouped"] else 1
        tag = f"bm{bm}_bn{bn}_bk{bk}_s{f['stages']}_w{f['warps']}_g{g}"
        dv = "".join("1" if x else "0" for x in f["div16"])
        lines.append(f"{h} {f['name']} {tag} div16(M,N,K)={dv}")
        if f["name"] == "gemm_tma_kernel" and all(f["div16"]):
            chosen.setdefault(tag, p)
    for tag, p in chosen.items():
        dst = os.path.join(outdir, f"gemm_{tag}.ttgir")
        shutil.copy(p, dst)
        cub = p[:-len(".ttgir")] + ".cubin"
        if os.path.exists(cub) and shutil.which("cuobjdump"):
            with open(os.path.join(outdir, f"gemm_{tag}.sass"), "w") as fo:
                subprocess.run(["cuobjdump", "--dump-sass", cub], stdout=fo,
                               stderr=subprocess.STDOUT)
        print("ttgir", tag, "<-", os.path.basename(os.path.dirname(p)))
    with open(os.path.join(outdir, "dump_hashes_issue17.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


# ---------------------------------------------------------------- ncu CSV
def read_ncu_raw(path):
    """Rows of an `ncu --import X --csv --page raw` file as dicts of str; units dict."""
    if not os.path.exists(path):
        return [], {}
    text = open(path, errors="replace").read().splitlines()
    start = next((i for i, l in enumerate(text) if l.startswith('"ID"')), None)
    if start is None:
        return [], {}
    rd = list(csv.reader(text[start:]))
    hdr = rd[0]
    units = {}
    rows = []
    for r in rd[1:]:
        if len(r) != len(hdr):
            continue
        d = dict(zip(hdr, r))
        if d.get("ID", "") == "":
            units = d
            continue
        rows.append(d)
    return rows, units


_PFX = {"": 1.0, "n": 1e-9, "u": 1e-6, "m": 1e-3, "K": 1e3, "k": 1e3, "M": 1e6, "G": 1e9,
        "T": 1e12}


def _scale(u, base):
    """prefix factor of unit u with base name base ('byte', 'second', 'cycle', 'sector')."""
    if u.endswith(base):
        p = u[:-len(base)]
        if p in _PFX:
            return _PFX[p]
    return None


def to_num(v, unit):
    """value in base units: bytes, sectors, cycles, ns for times, MHz for rates, % as is."""
    v = v.replace(",", "").strip()
    if v in ("", "n/a", "N/A"):
        return None
    try:
        x = float(v)
    except ValueError:
        return None
    u = (unit or "").strip()
    if u in ("", "%", "byte", "sector", "cycle", "request", "inst", "warp"):
        return x
    if "/" in u:  # rate: cycle/second, cycle/nsecond, ...
        num, den = u.split("/", 1)
        fn = _scale(num, "cycle") or 1.0
        fd = _scale(den, "second")
        if fd:
            return x * fn / fd / 1e6  # MHz
        return x
    if u.lower().endswith("hz"):
        p = u[:-2]
        return x * _PFX.get(p, 1.0) / 1e6
    for base in ("second",):
        f = _scale(u, base)
        if f:
            return x * f * 1e9  # ns
    for base in ("byte", "sector", "cycle", "request"):
        f = _scale(u, base)
        if f:
            return x * f
    return x


def col_name(m):
    """gemm_ncu.csv column of an ncu metric: rates of cycles_elapsed become <unit>_mhz (MHz),
    gpu__time_duration.sum becomes gpu_time_us; the rest keep the metric's name (bytes,
    sectors, cycles, percent)."""
    if m.endswith("__cycles_elapsed.avg.per_second"):
        return m.split("__")[0] + "_mhz"
    if m == "gpu__time_duration.sum":
        return "gpu_time_us"
    return m


def metric_cols(rows):
    if not rows:
        return []
    return [k for k in rows[0].keys() if "__" in k]


def ncu_tables(R):
    pts, g_rows, g_units = [], [], {}
    for G in range(1, 30):
        rr, uu = read_ncu_raw(os.path.join(R, f"ncu_gemm{G}_raw.csv"))
        pj = os.path.join(R, f"ncu_gemm{G}_points.json")
        pp = json.load(open(pj)) if os.path.exists(pj) else []
        pp = (pp + [{}] * len(rr))[:len(rr)]
        for r in rr:
            r["ncu_group"] = str(G)
        g_rows += rr
        pts += pp
        g_units.update(uu)
    mets = []
    for r in g_rows:
        for m in metric_cols([r]):
            if m not in mets:
                mets.append(m)
    # keep the requested metrics (ncu_metrics.txt) and a few launch facts; the raw CSV keeps
    # everything ncu wrote (device attributes, all launch__ columns)
    asked = os.path.join(R, "ncu_metrics.txt")
    if os.path.exists(asked):
        want = set(l.strip() for l in open(asked) if l.strip())
        keep = {"launch__grid_size", "launch__registers_per_thread",
                "launch__shared_mem_per_block_dynamic", "launch__shared_mem_per_block_static",
                "launch__waves_per_multiprocessor", "launch__occupancy_limit_shared_mem"}
        mets = [m for m in mets if m in want or m in keep]
    out_rows = []
    for i, r in enumerate(g_rows):
        p = pts[i] if i < len(pts) else {}
        o = {k: p.get(k, "") for k in ("M", "N", "K", "block_m", "block_n", "block_k", "stages",
                                       "warps", "group_m", "grid", "category")}
        o["ncu_group"] = r.get("ncu_group", "")
        o["ncu_id"] = r.get("ID", "")
        o["ncu_grid"] = r.get("Grid Size", "")
        if p:
            o["min_read_bytes"] = 2 * (p["M"] * p["K"] + p["N"] * p["K"])
            o["min_write_bytes"] = 2 * p["M"] * p["N"]
            gs = re.findall(r"\d+", r.get("Grid Size", ""))
            o["grid_match"] = int(bool(gs) and int(gs[0]) == p["grid"])
        vals = {m: to_num(r.get(m, ""), g_units.get(m, "")) for m in mets}
        a, e = vals.get("lts__cycles_active.avg"), vals.get("lts__cycles_elapsed.avg")
        o["lts_busy_pct"] = round(100.0 * a / e, 2) if a and e else ""
        for m in mets:
            v = vals[m]
            o[col_name(m)] = "" if v is None else (round(v, 4) if abs(v) < 1e6 else int(round(v)))
        if o.get("gpu_time_us", "") != "":
            o["gpu_time_us"] = round(o["gpu_time_us"] / 1000.0, 3)
        out_rows.append(o)
    write(os.path.join(R, "gemm_ncu.csv"), out_rows)
    # clock domains: every profiled kernel (GEMM points, the hot 8192^3, the DRAM stream)
    crow = []
    sets = [("gemm", g_rows, g_units, pts), ]
    for tag in ("hot", "stream"):
        rr, uu = read_ncu_raw(os.path.join(R, f"ncu_{tag}_raw.csv"))
        sets.append((tag, rr, uu, []))
    for tag, rows, units, pp in sets:
        for i, r in enumerate(rows):
            p = pp[i] if i < len(pp) else {}
            if tag == "gemm":
                desc = f"gemm {p.get('M')}x{p.get('N')}x{p.get('K')} " \
                       f"{p.get('block_m')}x{p.get('block_n')}x{p.get('block_k')}"
                state = "cold (single launch)"
            elif tag == "hot":
                desc = "gemm 8192x8192x8192 128x128x64"
                state = "hot (after 200 back-to-back launches)"
            else:
                desc = "TMA 2D DRAM stream 2 GiB (pitch 4096, 64x64 boxes)"
                state = "second launch"
            o = dict(kernel=r.get("Kernel Name", "")[:40], desc=desc, state=state)
            for m in metric_cols(rows):
                if m.endswith("cycles_elapsed.avg.per_second"):
                    v = to_num(r[m], units.get(m, ""))
                    o[m.split("__")[0] + "_mhz"] = "" if v is None else round(v, 1)
            for m in ("gpu__time_duration.sum", "dram__bytes_read.sum",
                      "lts__t_sectors_op_read.sum"):
                if m in r:
                    v = to_num(r[m], units.get(m, ""))
                    o[m] = "" if v is None else round(v, 1)
            a = to_num(r.get("lts__cycles_active.avg", ""), "")
            e = to_num(r.get("lts__cycles_elapsed.avg", ""), "")
            o["lts_busy_pct"] = round(100.0 * a / e, 2) if a and e else ""
            crow.append(o)
    write(os.path.join(R, "clock_domains.csv"), crow)
    return out_rows, crow


def write(path, rows):
    if not rows:
        return
    keys = []
    for r in rows:
        for k in r:
            if k not in keys:
                keys.append(k)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        for r in rows:
            w.writerow(r)


# ---------------------------------------------------------------- summary
def rows_of(path):
    if not os.path.exists(path):
        return []
    return list(csv.DictReader(open(path)))


def summary(R):
    rs = rows_of(os.path.join(R, "launch_overhead.csv"))
    if rs:
        print("== launch overhead (us): event median, span median, event-span median")
        for r in rs:
            print(f"  {r['method']:16s} {r['kernel']:12s} grid {r['grid']:>5s} spin {r['spin_cycles']:>7s}"
                  f" {r['preceded_by']:20s} ev {r['event_us_med']:>9s} span {r['span_us_med']:>9s}"
                  f" ev-span {r['event_minus_span_us_med']:>8s} {r['inkernel_sm_mhz']:>7s} MHz")
    rs = rows_of(os.path.join(R, "dram_stride.csv"))
    if rs:
        print("== dram stride: GB/s (vertical 64-row, vertical 128-row, horizontal 64-row, panel "
              "132 CTAs, 1-CTA panel st6 [cycles/box]); latency cycles (1, 64, 128 rows)")
        by = {}
        for r in rs:
            d = by.setdefault(int(r["pitch_bytes"]), {})
            if r["mode"] == "bw":
                d[("bw", r["order"], r["box_rows"], r["stages"])] = r["GBps"]
                if r.get("cycles_per_box"):
                    d[("cpb", r["order"], r["stages"])] = r["cycles_per_box"]
            else:
                d[("lat", r["box_rows"])] = r["lat_cycles_med"]
            d["mhz"] = r["sm_clock_mhz"]
            d["err"] = d.get("err", 0) + int(r["errors"])
        for p in sorted(by):
            d = by[p]
            print(f"  pitch {p:8d}: {d.get(('bw', 'vertical', '64', '8'), '-'):>7s} "
                  f"{d.get(('bw', 'vertical', '128', '8'), '-'):>7s} "
                  f"{d.get(('bw', 'horizontal', '64', '8'), '-'):>7s} "
                  f"{d.get(('bw', 'panel', '128', '6'), '-'):>7s} "
                  f"{d.get(('bw', 'panel_1cta', '128', '6'), '-'):>6s} "
                  f"[{d.get(('cpb', 'panel_1cta', '6'), '-'):>6s}] GB/s | lat "
                  f"{d.get(('lat', '1'), '-'):>6s} {d.get(('lat', '64'), '-'):>6s} "
                  f"{d.get(('lat', '128'), '-'):>6s} cyc @{d['mhz']} MHz err {d['err']}")
    rs = rows_of(os.path.join(R, "gemm_suite.csv"))
    if rs:
        bad = [r for r in rs if r["rel_err"] in ("inf", "nan") or float(r["rel_err"]) > 1e-2]
        print(f"== gemm suite: {len(rs)} points, {len(set((r['M'], r['N'], r['K']) for r in rs))} "
              f"shapes, {len(bad)} with rel_err > 1e-2")
        for r in rs:
            if r["config"].startswith("bm128_bn128"):
                print(f"  {r['category']:6s} {r['M']:>5s}x{r['N']:>5s}x{r['K']:>5s}: event "
                      f"{r['event_us']:>9s} do_bench {r['dobench_us']:>9s} span {r['span_us']:>9s} "
                      f"twin-span {r.get('twin_event_minus_span_us', ''):>6s} us "
                      f"{r['inkernel_sm_mhz']:>6s} MHz (NVML {r['nvml_sm_mhz_med']}) "
                      f"{r['power_w_max']} W")
    p1 = rows_of(os.path.join(R, "gemm_suite.csv"))
    p2 = rows_of(os.path.join(R, "gemm_suite_pass2.csv"))
    if p1 and p2:
        k = lambda r: (r["M"], r["N"], r["K"], r["config"])  # noqa: E731
        d2 = {k(r): r for r in p2}
        diffs = []
        for r in p1:
            q = d2.get(k(r))
            if q:
                diffs.append((abs(float(q["event_us"]) / float(r["event_us"]) - 1) * 100, r, q))
        diffs.sort(key=lambda x: -x[0])
        print(f"== pass 2 (reverse order) vs pass 1, event_us: {len(diffs)} points, median |diff| "
              f"{statistics.median(x[0] for x in diffs):.2f}%, worst:")
        for dd, r, q in diffs[:8]:
            print(f"  {r['M']}x{r['N']}x{r['K']} {r['config'][:14]}: {r['event_us']} vs "
                  f"{q['event_us']} us ({dd:.1f}%), in-kernel {r['inkernel_sm_mhz']} vs "
                  f"{q['inkernel_sm_mhz']} MHz")
    rs = rows_of(os.path.join(R, "gemm_ncu.csv"))
    if rs:
        print("== ncu GEMM traffic (MB = 1e6 B): DRAM read/write, L2 read sectors x32, fabric x32")
        for r in rs:
            def mb(k, mul=1.0):
                try:
                    return f"{float(r[k]) * mul / 1e6:9.1f}"
                except (KeyError, ValueError):
                    return "        -"
            print(f"  {r['M']:>5}x{r['N']:>5}x{r['K']:>5} {r['block_m']}x{r['block_n']}: "
                  f"dram r {mb('dram__bytes_read.sum')} w {mb('dram__bytes_write.sum')} "
                  f"L2 rd {mb('lts__t_sectors_op_read.sum', 32)} fabric "
                  f"{mb('lts__t_sectors_srcunit_ltcfabric.sum', 32)} min rd "
                  f"{mb('min_read_bytes')} busy {r.get('lts_busy_pct', '')}%")
    rs = rows_of(os.path.join(R, "clock_domains.csv"))
    if rs:
        keys = [k for k in rs[0] if k.endswith("_mhz")]
        pref = [k for k in ("sm_mhz", "lts_mhz", "lrc_mhz", "ltcfabric_mhz", "fbpa_mhz",
                            "dram_mhz", "gpc_mhz", "sys_mhz") if k in keys]
        print("== clock domains (MHz) " + " ".join(pref))
        for r in rs:
            print(f"  {r['desc'][:44]:44s} {r['state'][:12]:12s} " +
                  " ".join(f"{r.get(k, ''):>8}" for k in pref) + f" L2 busy {r['lts_busy_pct']}%")


def main():
    cmd = sys.argv[1]
    if cmd == "metrics":
        pick_metrics(sys.argv[2], sys.argv[3])
    elif cmd == "ttgir":
        pick_ttgir(sys.argv[2], sys.argv[3])
    elif cmd == "ncu":
        ncu_tables(sys.argv[2])
    elif cmd == "summary":
        summary(sys.argv[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
