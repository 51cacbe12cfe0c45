#!/bin/bash
# In which order a burst of cold boxes lands, and the loaded latency on the same card (simfa
# issue 17, calibration.md §25).
#
#   run(command="bash tools/device/run_land.sh 2>&1 | tee $OUT/log_land.txt", timeout_s=300)
#
#   tma_land.cu    1 to 132 CTAs each issue 1-8 cold boxes at once and stamp each one's landing
#   tma_loaded.cu  the same boxes streamed through a ring of 1-8 stages (tma_loaded.csv's probe),
#                  repeated here so that both come from one card
# On an H200 it also runs run_width.sh (the gemm_width suite's data, so far from an H100) and
# issue 18's long-K ncu points (tools/device/ncu_longk18.txt, so far from an H100).
# Writes $OUT/{env_land.txt,tma_land.csv,tma_loaded.csv,land_smi.csv}, on an H200 also
# $OUT/cta_width.csv and $OUT/results.tgz. Only reads clocks; never changes a GPU setting.
set -u
OUT=${OUT:-/tmp/simfa_out}
HERE=$(cd "$(dirname "$0")" && pwd)
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu \
  --format=csv -lms 200 >"$OUT/land_smi.csv" 2>&1 &
SMI_PID=$!
{
  echo "# date_utc: $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,clocks.mem,power.limit --format=csv
  nvcc --version | tail -2
} >"$OUT/env_land.txt" 2>&1
NV="nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a"
$NV -o /tmp/tma_land "$HERE/tma_land.cu" -lcuda && timeout 120 /tmp/tma_land "$OUT/tma_land.csv"
echo "tma_land rc=$?"
$NV -o /tmp/tma_loaded "$HERE/tma_loaded.cu" -lcuda && timeout 120 /tmp/tma_loaded "$OUT/tma_loaded.csv"
echo "tma_loaded rc=$?"
kill $SMI_PID 2>/dev/null
cat "$OUT/env_land.txt"
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  bash "$HERE/run_width.sh"
  NCU_GROUPS="$HERE/ncu_longk18.txt" BUDGET=230 bash "$HERE/run_issue17.sh" ncu
fi
