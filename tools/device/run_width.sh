#!/bin/bash
# The launch's width (simfa issue 17, calibration.md §21): one short Triton TMA GEMM at grids of
# 1, 2, 4 ... 128 and 132 CTAs, one wave, cold L2, each CTA's start, end and SM cycles
# (cta_stamps.py, %globaltimer and %clock64 in the timed twin of the suite kernel).
#
#   run(command="bash tools/device/run_width.sh 2>&1 | tee $OUT/log_width.txt", timeout_s=300)
#
# Series (K = 512, 8 k-tiles): `a` M = 128 g, N = 128 at 128x128 (each CTA its own A panel, all
# one B); `b` M = 128, N = 128 g (one A, each its own B); `c` M = 64 g, N = 128 at 64x128.
# Writes $OUT/cta_width.csv. Only reads clocks; never changes a GPU setting.
set -u
OUT=${OUT:-/tmp/simfa_out}
HERE=$(cd "$(dirname "$0")" && pwd)
specs=()
for g in 1 2 4 8 16 32 64 128 132; do
  specs+=("$((128 * g)),128,512,0" "128,$((128 * g)),512,0" "$((64 * g)),128,512,2")
done
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw --format=csv -lms 200 \
  >"$OUT/width_smi.csv" 2>&1 &
SMI_PID=$!
(cd "$HERE" && timeout 240 python3 cta_stamps.py "$OUT/cta_width.csv" "${specs[@]}")
echo "cta_stamps rc=$?"
kill $SMI_PID 2>/dev/null
