#!/usr/bin/env bash
# Checks that a change to the simulator's internals changed no result: runs a fixed corpus of
# workloads (every example trace and workload file, small gemm: and fa3: shapes, on the h800 and
# h200 manifests) and compares the stats files of two binaries, less the fields that measure the
# simulator itself (`sim`: wall time, RSS, events; `simfa`: version and git hash).
#
#   tools/stats_identity.sh dump SIMFA DIR     # write DIR/<case>.json for every case
#   tools/stats_identity.sh compare DIR1 DIR2  # exit 1 if any case differs
#   tools/stats_identity.sh list               # the cases
# Run from the repository root.
set -euo pipefail

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# A trace with `defines`, as a workload file (the inline spec cannot carry spaces).
trace_toml() {  # name path defines
  printf '[workload]\nfrontend = "trace"\npath = "%s"\ndefines = "%s"\n' "$2" "$3" >"$tmp/$1.toml"
  echo "$tmp/$1.toml"
}

# One case a line: NAME MANIFEST WORKLOAD [extra run options]
cases() {
  for m in h800 h200; do
    for t in examples/traces/*.trace; do
      echo "$m-$(basename "$t" .trace) configs/$m.toml $t"
    done
    echo "$m-gemm_loop_l2 configs/$m.toml examples/microbench/gemm_loop_l2.trace"
    echo "$m-tma_2d_panel configs/$m.toml examples/microbench/tma_2d_panel.trace"
    echo "$m-tma_2d_small configs/$m.toml $(trace_toml "2d_$m" examples/microbench/tma_2d_stream.trace 'TILES=2048')"
    echo "$m-tma_bulk_dram_small configs/$m.toml $(trace_toml "bd_$m" examples/microbench/tma_bulk_stream.trace 'TOTAL=32MiB')"
    echo "$m-tma_bulk_l2_small configs/$m.toml $(trace_toml "bl_$m" examples/microbench/tma_bulk_stream.trace 'TOTAL=32MiB SRC=4MiB')"
    echo "$m-tma_chase_small configs/$m.toml $(trace_toml "ch_$m" examples/microbench/tma_chase.trace 'WS=1MiB STEPS=2048')"
    echo "$m-gemm_1024 configs/$m.toml gemm:m=1024,n=1024,k=1024"
    echo "$m-gemm_ws configs/$m.toml gemm:m=768,n=1024,k=512,warp_specialized=true,raster=row_major"
    echo "$m-fa3_8b_512 configs/$m.toml fa3:model=llama3-8b,seqlen=512"
    echo "$m-fa3_70b_1k_causal configs/$m.toml fa3:model=llama3-70b,seqlen=1024,causal=true"
    echo "$m-gemm_ideal configs/$m.toml gemm:m=1024,n=1024,k=1024 --set memory.plugin=memory.ideal"
    # memory.ideal's TMA lines are timed by the engines (docs/performance.md §20): every trace,
    # a warp-specialized GEMM and attention through it too
    for t in examples/traces/*.trace; do
      echo "$m-$(basename "$t" .trace)_ideal configs/$m.toml $t --set memory.plugin=memory.ideal"
    done
    echo "$m-gemm_ws_ideal configs/$m.toml gemm:m=768,n=1024,k=512,warp_specialized=true,raster=row_major --set memory.plugin=memory.ideal"
    echo "$m-fa3_70b_1k_causal_ideal configs/$m.toml fa3:model=llama3-70b,seqlen=1024,causal=true --set memory.plugin=memory.ideal"
  done
  # The example files at full size, each on the manifest its comment names.
  for f in examples/microbench/*.toml; do echo "h200-$(basename "$f" .toml) configs/h200.toml $f"; done
  for f in examples/workloads/*.toml; do echo "h800-$(basename "$f" .toml) configs/h800.toml $f"; done
  echo "h200-gemm_4096 configs/h200.toml gemm:m=4096,n=4096,k=4096"
  # Reference stepping must give the event mode's stats (tests/e2e/cli_test.cpp checks the traces).
  echo "h800-fa3_8b_512_reference configs/h800.toml fa3:model=llama3-8b,seqlen=512 --stepping reference"
  echo "h200-gemm_1024_ideal_reference configs/h200.toml gemm:m=1024,n=1024,k=1024 --set memory.plugin=memory.ideal --stepping reference"
}

case "${1:-}" in
  list) cases ;;
  dump)
    simfa="$2" out="$3"
    mkdir -p "$out"
    cases | while read -r name manifest workload extra; do
      # shellcheck disable=SC2086  # extra options are words
      "$simfa" run "$manifest" -q --workload "$workload" --stats "$out/$name.json" $extra
      echo "$name" >&2
    done
    ;;
  compare)
    python3 - "$2" "$3" <<'PY'
import json, os, sys
a, b = sys.argv[1], sys.argv[2]
names = sorted(set(os.listdir(a)) | set(os.listdir(b)))
bad = 0
for n in names:
    try:
        x, y = (json.load(open(os.path.join(d, n))) for d in (a, b))
    except FileNotFoundError:
        print(f"{n}: missing on one side"); bad += 1; continue
    ex, ey = x.get("sim", {}).get("events"), y.get("sim", {}).get("events")
    for s in (x, y):
        s.pop("sim", None); s.pop("simfa", None)
    same = x == y
    bad += not same
    print(f"{n}: {'identical' if same else 'DIFFERENT'} (events {ex} -> {ey})")
print(f"{len(names) - bad} of {len(names)} identical")
sys.exit(1 if bad else 0)
PY
    ;;
  *) sed -n 2,10p "$0"; exit 2 ;;
esac
