#!/bin/bash
# What a loaded SM's copies and a GEMM loop's code cost on the H200 (simfa issue 17).
#
#   run(command="bash tools/device/run_loaded.sh 2>&1 | tee $OUT/log.txt", timeout_s=300)
#
#   tma_loaded.cu  1 to 264 CTAs each streaming its own 128-row panels through 1-8 stages, cold
#   loop_costs.cu  bar.sync, try-wait, expect-tx, TMA issue and the 64x128 loop without WGMMAs
#   tma_issue.cu   how long a copy's issue holds its thread: alone, behind a 256-row copy, in a
#                  train, after a ring's wait, by the copy's rows
# Writes $OUT/r/{env.txt,tma_loaded.csv,loop_costs.csv,tma_issue.csv,smi_samples.csv}, packed as
# $OUT/results.tgz. Only reads clocks; never changes a GPU setting.
set -u
OUT=${OUT:-/tmp/simfa_out}
R=$OUT/r
mkdir -p "$R"
HERE=$(cd "$(dirname "$0")" && pwd)
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu \
  --format=csv -lms 200 >"$R/smi_samples.csv" 2>&1 &
SMI_PID=$!
{
  echo "# date_utc: $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,clocks.mem,power.limit --format=csv
  nvcc --version | tail -2
} >"$R/env.txt" 2>&1
NV="nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a"
$NV -o /tmp/tma_loaded "$HERE/tma_loaded.cu" -lcuda && timeout 120 /tmp/tma_loaded "$R/tma_loaded.csv"
echo "tma_loaded rc=$?"
$NV -o /tmp/loop_costs "$HERE/loop_costs.cu" -lcuda && timeout 120 /tmp/loop_costs "$R/loop_costs.csv"
echo "loop_costs rc=$?"
$NV -o /tmp/tma_issue "$HERE/tma_issue.cu" -lcuda && timeout 120 /tmp/tma_issue "$R/tma_issue.csv"
echo "tma_issue rc=$?"
kill $SMI_PID 2>/dev/null
cat "$R/tma_loaded.csv" "$R/loop_costs.csv" "$R/tma_issue.csv"
[ -n "${NO_PACK:-}" ] || tar -C "$OUT" -czf "$OUT/results.tgz" r
