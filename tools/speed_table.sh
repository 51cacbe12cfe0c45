#!/usr/bin/env bash
# The speed figures of issue 11 / DESIGN.md §11 for two simfa builds, side by side, as a markdown
# table on stdout: simulated cycles per second, events per line request, ns per line request and
# peak RSS on the fixed reference workloads. Both builds run in one invocation, interleaved (A, B,
# A, B, ...), so that a loaded machine slows both alike; each figure is the best of REPS runs.
#
#   tools/speed_table.sh BASE NEW [REPS]
#
# BASE and NEW are simfa binaries (their plugins are found beside them, as for any install), or a
# git revision, which is built (Release, simfa only) in a worktree under ${SPEED_BUILD_ROOT:-/tmp}.
# Run from the repository root. SPEED_WORKLOADS=name,name picks rows (default: all of them).
# SPEED_EXTRA_A / SPEED_EXTRA_B: run options for one side only, e.g. BASE and NEW the same binary
# and SPEED_EXTRA_B="--set memory.bursts=true" (an option against its default; the "cycles"
# column then shows A / B where they differ).
#
# Times are CPU seconds (user + system, from /usr/bin/time) of the whole process: on a machine
# shared with other jobs, wall time measures the neighbours too. The stats' sim.wall_seconds (the
# run loop alone, wall clock) is printed as well. "requests" are the SMs' line requests
# (sum of sm[*].tma.lines); "events" are the model events (sim.events) and, where the build
# reports them, all events the queue fired (sim.queue_events: the issue phases included).
set -euo pipefail

if [[ $# -lt 2 ]]; then sed -n 2,18p "$0"; exit 2; fi
reps="${3:-1}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# A revision name becomes a built binary.
resolve() {
  if [[ -x "$1" && -f "$1" ]]; then echo "$1"; return; fi
  local rev hash dir
  rev="$1"
  hash="$(git rev-parse --short=12 "$rev^{commit}")"
  dir="${SPEED_BUILD_ROOT:-/tmp}/simfa-speed-$hash"
  if [[ ! -x "$dir/build/release/bin/simfa" ]]; then
    [[ -d "$dir" ]] || git worktree add --detach "$dir" "$hash" >&2
    (cd "$dir" && cmake --preset release >&2 && cmake --build build/release --target simfa -j"${SPEED_JOBS:-2}" >&2)
  fi
  echo "$dir/build/release/bin/simfa"
}
a="$(resolve "$1")"
b="$(resolve "$2")"

printf '[workload]\nfrontend = "trace"\npath = "examples/microbench/tma_bulk_stream.trace"\ndefines = "OP=16KiB STAGES=8 TOTAL=256MiB SRC=16MiB"\n' \
  >"$tmp/l2_stream.toml"

# NAME MANIFEST WORKLOAD [run options]
workloads() {
  cat <<EOF
fa3_70b_4k_h800 configs/h800.toml examples/workloads/fa3_llama3_70b_4k.toml
fa3_70b_4k_h800_ideal configs/h800.toml examples/workloads/fa3_llama3_70b_4k.toml --set memory.plugin=memory.ideal
gemm_4096_h200 configs/h200.toml gemm:m=4096,n=4096,k=4096
gemm_4096_h200_ideal configs/h200.toml gemm:m=4096,n=4096,k=4096 --set memory.plugin=memory.ideal
l2_stream_h200 configs/h200.toml $tmp/l2_stream.toml
dram_stream_h200 configs/h200.toml examples/microbench/tma_bulk_dram_16k.toml
EOF
}

selected() {
  [[ -z "${SPEED_WORKLOADS:-}" ]] || [[ ",$SPEED_WORKLOADS," == *",$1,"* ]]
}

for ((rep = 0; rep < reps; ++rep)); do
  while read -r name manifest workload extra; do
    selected "$name" || continue
    for side in a b; do
      bin="$a"; side_extra="${SPEED_EXTRA_A:-}"
      [[ $side == b ]] && bin="$b" && side_extra="${SPEED_EXTRA_B:-}"
      out="$tmp/$name.$side.$rep"
      # shellcheck disable=SC2086  # extra options are words
      /usr/bin/time -f '%U %S %M' -o "$out.time" \
        "$bin" run "$manifest" -q --workload "$workload" --stats "$out.json" $extra $side_extra
      echo "$name $side $rep" >&2
    done
  done < <(workloads)
done

python3 - "$tmp" "$reps" "$a" "$b" <<'PY'
import glob, json, os, sys
tmp, reps, a, b = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]

def figures(name, side):
    best = None
    for rep in range(reps):
        base = os.path.join(tmp, f"{name}.{side}.{rep}")
        if not os.path.exists(base + ".json"):
            return None
        s = json.load(open(base + ".json"))
        user, system, maxrss_kib = open(base + ".time").read().split()
        cpu = float(user) + float(system)
        requests = sum(v["tma"]["lines"] for k, v in s.items() if k.startswith("sm[") and "tma" in v)
        f = {
            "cycles": s["kernel"]["cycles"],
            "cpu": cpu,
            "wall": s["sim"]["wall_seconds"],
            "requests": requests,
            "events": s["sim"]["events"],
            "queue_events": s["sim"].get("queue_events"),
            "rss": int(maxrss_kib) * 1024,
            "result": {k: v for k, v in s.items() if k not in ("sim", "simfa")},
        }
        if best is None or cpu < best["cpu"]:
            best = f
    return best

print(f"A = `{a}`, B = `{b}`; best of {reps} run(s) each, interleaved; CPU time of the whole process.\n")
print("| workload | cycles | requests | cycles / CPU s A | B | B / A | ns / request A | B "
      "| events / request A | B | queue events / request A | B | peak RSS MiB A | B | same stats |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
names = []
for path in sorted(glob.glob(os.path.join(tmp, "*.a.0.json"))):
    names.append(os.path.basename(path)[: -len(".a.0.json")])
order = ["fa3_70b_4k_h800", "fa3_70b_4k_h800_ideal", "gemm_4096_h200", "gemm_4096_h200_ideal",
         "l2_stream_h200", "dram_stream_h200"]
names.sort(key=lambda n: order.index(n) if n in order else len(order))
for n in names:
    x, y = figures(n, "a"), figures(n, "b")
    req = max(x["requests"], 1)
    qe = lambda f: f"{f['queue_events'] / req:.2f}" if f["queue_events"] is not None else "n/a"
    cycles = x["cycles"] if x["cycles"] == y["cycles"] else f"{x['cycles']} / {y['cycles']}"
    print(f"| {n} | {cycles} | {x['requests']} | {x['cycles'] / x['cpu']:,.0f} | "
          f"{y['cycles'] / y['cpu']:,.0f} | {x['cpu'] / y['cpu']:.2f} | "
          f"{x['cpu'] * 1e9 / req:.0f} | {y['cpu'] * 1e9 / req:.0f} | "
          f"{x['events'] / req:.2f} | {y['events'] / req:.2f} | {qe(x)} | {qe(y)} | "
          f"{x['rss'] / 2**20:.0f} | {y['rss'] / 2**20:.0f} | "
          f"{'yes' if x['result'] == y['result'] else 'NO'} |")
print("\nRun-loop wall seconds (sim.wall_seconds), A / B: " + ", ".join(
    f"{n} {figures(n, 'a')['wall']:.2f} / {figures(n, 'b')['wall']:.2f}" for n in names))
PY
