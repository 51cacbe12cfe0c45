#!/bin/bash
# Issue 17: a Triton GEMM's CTA in three phases (setup, copies and K loop, epilogue) by %clock64
# stamps, on one CTA and on full grids (tools/device/gemm_stamps.py).
#
#   run(command="bash tools/device/run_stamps.sh", timeout_s=420)
#
# Writes $OUT/gemm_stamps.csv, $OUT/log.txt, $OUT/smi_samples.csv and $OUT/env.txt. Only reads
# clocks; never changes a GPU setting.
set -u
OUT=${OUT:-/tmp/simfa_out}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
{
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,power.limit --format=csv
  python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, 'cuda', torch.version.cuda)"
} >"$OUT/env.txt" 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu \
  --format=csv -lms 200 >"$OUT/smi_samples.csv" 2>&1 &
SMI_PID=$!
cd "$HERE"
# one CTA of each config, K from 512 to 8192; then grids from 16 CTAs to 1024
POINTS=${POINTS:-"128,128,512,0 128,128,2048,0 128,128,8192,0 128,256,2048,1 64,128,2048,2
  512,512,512,0 1024,1024,1024,0 1024,1024,1024,2 4096,4096,512,0 4096,4096,1024,1
  128,4096,4096,2 200,7000,3000,0 2048,2048,2048,2"}
timeout 380 python3 gemm_stamps.py "$OUT/gemm_stamps.csv" $POINTS 2>&1 | tee "$OUT/log.txt"
echo "gemm_stamps rc=${PIPESTATUS[0]}" | tee -a "$OUT/log.txt"
kill $SMI_PID 2>/dev/null
