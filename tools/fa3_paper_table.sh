#!/usr/bin/env bash
# The paper's 15 FA3 configurations (Llama-3 8B / 70B / 405B x seqlen 512..6144) on one manifest:
# simulated cycles, microseconds, simulated cycles per wall second and peak memory, as a markdown
# table on stdout. Usage: tools/fa3_paper_table.sh [MANIFEST] [SIMFA_BINARY]
set -euo pipefail
manifest="${1:-configs/h800.toml}"
simfa="${2:-build/release/bin/simfa}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

echo "| model | seqlen | cycles | time (us) | sim cycles / wall s | wall (s) | peak RSS (MiB) |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
for model in llama3-8b llama3-70b llama3-405b; do
  for seqlen in 512 1024 2048 4096 6144; do
    "$simfa" run "$manifest" -q --workload "fa3:model=$model,seqlen=$seqlen" --stats "$tmp/s.json"
    python3 - "$tmp/s.json" "$model" "$seqlen" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
k, m = s["kernel"], s["sim"]
print(f"| {sys.argv[2]} | {sys.argv[3]} | {k['cycles']} | {k['time_us']:.1f} | "
      f"{m['cycles_per_second']:.0f} | {m['wall_seconds']:.1f} | {m['peak_rss_bytes'] / 2**20:.0f} |")
PY
  done
done
