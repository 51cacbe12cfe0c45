#!/bin/bash
# A launch's first TMA boxes with and without their pages translated (simfa issues 17 and 10,
# docs/calibration.md §46): tma_first.cu's modes, `cold_touch` and `warm_shift` among them.
#
#   run(command="bash tools/device/run_tlb.sh 2>&1 | tee $OUT/log_tlb.txt", timeout_s=300)
#
# Writes $OUT/{env_tlb.txt,tma_first_tlb.csv,tlb_smi.csv}. Only reads clocks; never changes a GPU
# setting.
set -u
OUT=${OUT:-/tmp/simfa_out}
HERE=$(cd "$(dirname "$0")" && pwd)
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu \
  --format=csv -lms 200 >"$OUT/tlb_smi.csv" 2>&1 &
SMI_PID=$!
{
  echo "# date_utc: $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,clocks.mem,power.limit --format=csv
  nvcc --version | tail -2
} >"$OUT/env_tlb.txt" 2>&1
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o /tmp/tma_first "$HERE/tma_first.cu" -lcuda
timeout 200 /tmp/tma_first "$OUT/tma_first_tlb.csv"
echo "tma_first rc=$?"
kill $SMI_PID 2>/dev/null
grep -E "^(cold|warm|cold_touch|warm_shift),132," "$OUT/tma_first_tlb.csv"
cat "$OUT/env_tlb.txt"
