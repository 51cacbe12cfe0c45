#!/bin/bash
# What a box row that starts inside a line costs the TMA (simfa issue 17, docs/calibration.md §44):
# tma_loaded.cu's three modes (cold `own` rings, warm `own_warm`, all SMs the `same` lines) at a
# row pitch of 8192 B (rows on line boundaries, tma_loaded.csv's), 8208 B (rows at every 16-byte
# offset, as the GEMM suite's K = 1000, 1544, 3000) and 8256 B (every other row at 64 bytes, as
# K = 1504). The H200 sends such a row to the L2 as up to three requests (gemm_ncu.csv); these
# rings say whether the SM's side pays for them.
#
#   run(command="bash tools/device/run_misaligned.sh 2>&1 | tee $OUT/log_misaligned.txt", timeout_s=600)
#
# Writes $OUT/{env_misaligned.txt,tma_loaded_misaligned.csv,misaligned_smi.csv}. Only reads
# clocks; never changes a GPU setting.
set -u
OUT=${OUT:-/tmp/simfa_out}
HERE=$(cd "$(dirname "$0")" && pwd)
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu \
  --format=csv -lms 200 >"$OUT/misaligned_smi.csv" 2>&1 &
SMI_PID=$!
{
  echo "# date_utc: $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,clocks.mem,power.limit --format=csv
  nvcc --version | tail -2
} >"$OUT/env_misaligned.txt" 2>&1
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o /tmp/tma_loaded "$HERE/tma_loaded.cu" -lcuda || exit 1
for pitch in 8192 8208 8256; do
  ALL_MODES=1 timeout 170 /tmp/tma_loaded "/tmp/misaligned_$pitch.csv" "$pitch"
  echo "pitch $pitch rc=$?"
done
{ head -1 /tmp/misaligned_8192.csv; for p in 8192 8208 8256; do tail -n +2 "/tmp/misaligned_$p.csv"; done; } \
  >"$OUT/tma_loaded_misaligned.csv"
kill $SMI_PID 2>/dev/null
cat "$OUT/env_misaligned.txt"
wc -l "$OUT/tma_loaded_misaligned.csv"
