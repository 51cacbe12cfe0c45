#!/bin/bash
# Is a loaded DRAM's box latency the data bus or the row activations? (simfa issue 17,
# docs/calibration.md §32.) tma_loaded.cu's `own` rings of cold 16 KiB boxes at three row pitches:
# 8192 B (tma_loaded.csv's, every line of a box in another DRAM row), 1024 B and 128 B (a box is
# contiguous and the CTAs' boxes are neighbours: a stream). Same bytes in flight, same CTAs.
#
#   run(command="bash tools/device/run_pitch.sh 2>&1 | tee $OUT/log_pitch.txt", timeout_s=300)
#
# Writes $OUT/{env_pitch.txt,tma_loaded_pitch.csv,pitch_smi.csv}. Only reads clocks; never
# changes a GPU setting.
set -u
OUT=${OUT:-/tmp/simfa_out}
HERE=$(cd "$(dirname "$0")" && pwd)
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu \
  --format=csv -lms 200 >"$OUT/pitch_smi.csv" 2>&1 &
SMI_PID=$!
{
  echo "# date_utc: $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,clocks.mem,power.limit --format=csv
  nvcc --version | tail -2
} >"$OUT/env_pitch.txt" 2>&1
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o /tmp/tma_loaded "$HERE/tma_loaded.cu" -lcuda || exit 1
for pitch in 128 1024 8192; do
  timeout 120 /tmp/tma_loaded "/tmp/pitch_$pitch.csv" "$pitch"
  echo "pitch $pitch rc=$?"
done
{ head -1 /tmp/pitch_8192.csv; for p in 128 1024 8192; do grep '^own,' "/tmp/pitch_$p.csv"; done; } \
  >"$OUT/tma_loaded_pitch.csv"
kill $SMI_PID 2>/dev/null
cat "$OUT/env_pitch.txt"
