#!/bin/bash
# What a kernel's own code costs a CTA when the L2 is cold (simfa issues 10, 17; calibration.md §45).
#
#   run(command="bash tools/device/run_icache.sh 2>&1 | tee $OUT/log_icache.txt", timeout_s=300)
#
# Builds icache_cold.cu, counts each kernel's SASS instructions (cuobjdump), runs it. Writes
# $OUT/{env_icache.txt,icache_cold.csv,icache_sass_counts.txt,icache_smi.csv}. Only reads clocks;
# never changes a GPU setting.
set -u
OUT=${OUT:-/tmp/simfa_out}
HERE=$(cd "$(dirname "$0")" && pwd)
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu \
  --format=csv -lms 200 >"$OUT/icache_smi.csv" 2>&1 &
SMI_PID=$!
{
  echo "# date_utc: $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,clocks.mem,power.limit --format=csv
  nvcc --version | tail -2
} >"$OUT/env_icache.txt" 2>&1
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o /tmp/icache_cold "$HERE/icache_cold.cu" -lcuda
cuobjdump -sass /tmp/icache_cold | awk '/Function :/{if (f) print f, n; f = $3; n = 0; next}
  /^ +\/\*[0-9a-f]+\*\//{n++} END{print f, n}' >"$OUT/icache_sass_counts.txt"
cat "$OUT/icache_sass_counts.txt"
timeout 200 /tmp/icache_cold "$OUT/icache_cold.csv"
echo "icache_cold rc=$?"
kill $SMI_PID 2>/dev/null
cat "$OUT/env_icache.txt"
