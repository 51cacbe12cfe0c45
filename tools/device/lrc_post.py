"""Joins lrc_merge.cu's runs into validation/h200/lrc_merge.csv (run_issue17.sh step `lrc`).

  python3 tools/device/lrc_post.py R CLUSTERS.csv OUT.csv

R holds lrc_cases.csv, lrc_merge_{cold,warm}.csv (the timed runs) and ncu_lrc_{cold,warm}_raw.csv
(ncu's raw page, one profile per case in case order: --cache-control all for cold, none for warm);
CLUSTERS.csv is sm_map.cu's `clusters` output. One row per case and L2 state: the participants,
by SM id and as counts per GPC (the GPCs in the order the block scheduler fills them, SM ids
sharing a thread-block cluster being one GPC), the ncu sectors and the timing.
"""
import csv
import sys
from collections import defaultdict


def ncu_rows(path):
    rows = list(csv.reader(open(path)))
    header, out = rows[0], []
    for r in rows[1:]:
        if not r or not r[0].isdigit():
            continue  # the units row
        row = {}
        for k, v in zip(header, r):
            try:
                row[k] = float(v.replace(",", ""))
            except ValueError:
                row[k] = v
        out.append(row)
    return out


def gpcs(clusters_csv):
    """SM id -> GPC index. SMs of one cluster share a GPC; a TPC pair never seen in a cluster
    larger than 2 (the last SMs, 124-131 on the H200 measured) joins the GPC whose SMs the block
    scheduler fills together with it (the GPC of SM 0 there: lrc_merge's pair 0-131 merges)."""
    parent = {}

    def find(x):
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x
    groups = defaultdict(list)
    for r in csv.DictReader(open(clusters_csv)):
        groups[(r["cluster_size"], r["launch"], r["cluster"])].append(int(r["smid"]))
    for members in groups.values():
        for s in members[1:]:
            parent[find(s)] = find(members[0])
    comps = defaultdict(list)
    for s in list(parent):
        comps[find(s)].append(s)
    big = sorted((sorted(c) for c in comps.values() if len(c) > 2), key=lambda c: c[0])
    small = [c for c in comps.values() if len(c) <= 2]
    gpc_of = {s: g for g, c in enumerate(big) for s in c}
    for c in small:
        for s in c:
            gpc_of[s] = 0
    return gpc_of


def main(r, clusters_csv, out_csv):
    gpc_of = gpcs(clusters_csv)
    cases = list(csv.DictReader(open(f"{r}/lrc_cases.csv")))
    fields = ["case", "set", "mode", "l2", "participants", "sms", "gpc_counts", "delays_cycles",
              "region_bytes", "requested_sectors", "lts_tex_read_sectors", "lrc2xbar_read_sectors",
              "xbar2gpc_read_sectors", "dram_read_bytes", "read_ns_med", "read_cycles_med", "sm_mhz"]
    with open(out_csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        for l2 in ("cold", "warm"):
            ncu = ncu_rows(f"{r}/ncu_lrc_{l2}_raw.csv")
            timed = list(csv.DictReader(open(f"{r}/lrc_merge_{l2}.csv")))
            if len(ncu) != len(cases) or len(timed) != len(cases):
                sys.exit(f"{l2}: {len(cases)} cases, {len(ncu)} ncu profiles, {len(timed)} timed runs")
            for c, n, t in zip(cases, ncu, timed):
                counts = [0] * (max(gpc_of.values()) + 1)
                for s in c["sms"].split(";"):
                    counts[gpc_of[int(s)]] += 1
                p, region = int(c["participants"]), int(c["region_bytes"])
                w.writerow({"case": c["case"], "set": c["set"], "mode": c["mode"], "l2": l2,
                            "participants": p, "sms": c["sms"],
                            "gpc_counts": ";".join(map(str, counts)),
                            "delays_cycles": c["delays_cycles"], "region_bytes": region,
                            "requested_sectors": p * region // 32,
                            "lts_tex_read_sectors": int(n["lts__t_sectors_srcunit_tex_op_read.sum"]),
                            "lrc2xbar_read_sectors": int(n["lrc__lrc2xbar_sectors_op_read.sum"]),
                            "xbar2gpc_read_sectors": int(n["lrc__xbar2gpc_sectors_op_read.sum"]),
                            "dram_read_bytes": int(n["dram__bytes_read.sum"]),
                            "read_ns_med": t["read_ns_med"], "read_cycles_med": t["read_cycles_med"],
                            "sm_mhz": t["sm_mhz"]})


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
