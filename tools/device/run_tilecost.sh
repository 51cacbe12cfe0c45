#!/bin/bash
# A KV step's and a tile's cost of cuDNN's sm90 flash kernel, apart (issue 10, docs/calibration.md
# §25): Nsight Compute's sm__cycles_active (average, least, most over the SMs), the duration and
# the SM clock of cuDNN's SDPA at a fixed tile count and 2 to 32 KV steps a tile (seqlen_q fixed,
# seqlen_k varied: the same tiles, a different step count) and at 1.9 to 31 tiles an SM (seqlen_q
# varied), D = 128 and 64; each point launched NCU_REPEAT (2) times, caches flushed before each
# (--cache-control all). Then one point with the SASS page (per-PC warp-stall samples), 4 steps
# a tile, D = 128, for where a tile's time goes. Never changes clocks or any GPU setting.
#
#   run(command="bash tools/device/run_tilecost.sh", timeout_s=300)
# Results in $OUT/: tilecost_raw.csv (one row a launch, the points in tilecost_points.csv's
# order), tilecost_log.txt, sassN_sass.csv.gz and sassN_log.txt, env.txt. PTS and SASS_PTS
# replace the points (cudnn:Z,HQ,HKV,LQ,LK,D,CAUSAL each, space-separated).
set -u
OUT=${OUT:-/tmp/simfa_out}
HERE=$(cd "$(dirname "$0")" && pwd)
export PYTHONUNBUFFERED=1 NCU_REPEAT=${NCU_REPEAT:-2}
T0=$(date +%s)
{
  echo "# date_utc: $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv
  ncu --version | tail -1
  python3 -c "import torch; print('torch', torch.__version__, 'cudnn', torch.backends.cudnn.version())"
} >"$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
# cudnn:Z,HQ,HKV,LQ,LK,D,CAUSAL. D = 128: 1 x 32 x 8 (Llama-3 8B's GQA); D = 64: 4 x 16 x 16.
PTS=${PTS:-"cudnn:1,32,8,4096,512,128,0 cudnn:1,32,8,4096,1024,128,0 cudnn:1,32,8,4096,2048,128,0
cudnn:1,32,8,4096,4096,128,0 cudnn:1,32,8,1024,512,128,0 cudnn:1,32,8,1024,4096,128,0
cudnn:1,32,8,2048,2048,128,0 cudnn:1,32,8,8192,512,128,0 cudnn:1,32,8,16384,256,128,0
cudnn:4,16,16,4096,512,64,0 cudnn:4,16,16,4096,4096,64,0 cudnn:4,16,16,1024,512,64,0
cudnn:4,16,16,16384,256,64,0"}
M=sm__cycles_active.avg,sm__cycles_active.min,sm__cycles_active.max,gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__cycles_elapsed.max,launch__grid_size
timeout 120 ncu --clock-control none --cache-control all --replay-mode kernel \
  -k 'regex:cudnn_generated' --metrics $M -f -o "$OUT/tc" \
  python3 "$HERE/attention_suite.py" ncu "$OUT/pts" $PTS >"$OUT/tilecost_log.txt" 2>&1 \
  || echo "metrics rc=$?"
ncu --import "$OUT/tc.ncu-rep" --csv --page raw >"$OUT/tilecost_raw.csv" 2>>"$OUT/tilecost_log.txt"
rm -f "$OUT/tc.ncu-rep"
cp "$OUT/pts/ncu_points.csv" "$OUT/tilecost_points.csv" 2>/dev/null; rm -rf "$OUT/pts"
echo "metrics done in $(( $(date +%s) - T0 )) s"
# The SASS page: where a 4-step tile's time goes at D = 128.
SECS="--section InstructionStats --section SourceCounters --metrics sm__cycles_elapsed.avg.per_second,gpu__time_duration.sum,sm__cycles_active.avg"
i=0
for p in ${SASS_PTS:-cudnn:1,32,8,8192,512,128,0}; do
  [ $(( $(date +%s) - T0 )) -gt 130 ] && { echo "sass $p skipped (time)"; continue; }
  NCU_REPEAT=1 timeout 60 ncu --clock-control none --cache-control all --replay-mode kernel $SECS \
    -k 'regex:cudnn_generated' -f -o "$OUT/sass$i" \
    python3 "$HERE/attention_suite.py" ncu "$OUT/p$i" "$p" >"$OUT/sass${i}_log.txt" 2>&1 || echo "sass$i rc=$?"
  ncu --import "$OUT/sass$i.ncu-rep" --csv --page source --print-source sass >"$OUT/sass${i}_sass.csv" 2>>"$OUT/sass${i}_log.txt"
  gzip -f "$OUT/sass${i}_sass.csv"; rm -rf "$OUT/sass$i.ncu-rep" "$OUT/p$i"
  i=$((i + 1))
done
python3 - "$OUT/tilecost_raw.csv" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
if rows:
    h = rows[0]
    for r in rows[2:]:
        g = lambda k: r[h.index(k)] if k in h else "?"
        print(g("ID"), g("sm__cycles_active.avg"), g("sm__cycles_active.min"), g("sm__cycles_active.max"),
              g("gpu__time_duration.sum"), g("sm__cycles_elapsed.avg.per_second"), g("Kernel Name")[-40:])
PY
ls -la "$OUT"
echo "done in $(( $(date +%s) - T0 )) s"
