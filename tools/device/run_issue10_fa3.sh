#!/bin/bash
# The cuDNN kernel through simfa's fa3: route (issue 10, items 3 and 4): one device call.
#   run(command="bash tools/device/run_issue10_fa3.sh 2>&1 | tee $OUT/log.txt", timeout_s=420)
# Steps (comma-separated argument; default contention,ncu):
#   contention  wgmma_contention.py: WGMMA rate against register arithmetic in other WarpGroups
#   ncu         ncu sections (speed of light, compute, warp states, launch) of cuDNN's SDPA kernel
#               at 1 x 32 x 8 x 4096 x 128 and 4 x 16 x 16 x 4096 x 64, non-causal
# Everything lands in $OUT/r/, packed into $OUT/results_fa3.tgz. Never changes clocks or any GPU
# setting: it only reads them.
set -u
OUT=${OUT:-/tmp/simfa_out}
R=$OUT/r
mkdir -p "$R"
STEPS=${1:-contention,ncu}
HERE=$(cd "$(dirname "$0")" && pwd)
export PYTHONUNBUFFERED=1
has() { [[ ",$STEPS," == *",$1,"* ]]; }
T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv >"$R/env.txt" 2>&1
if has contention; then
  timeout ${CONTENTION_S:-120} python3 "$HERE/wgmma_contention.py" "$R/contention" || echo "contention rc=$?"
  rm -f "$R/contention/wgmma_contention"
fi
if has ncu; then
  mkdir -p "$R/ncu"
  timeout ${NCU_S:-200} ncu --clock-control none --cache-control all --replay-mode kernel \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats \
    --section LaunchStats --section Occupancy -k 'regex:cudnn_generated' -f -o "$R/ncu/ncu_cudnn" \
    python3 "$HERE/attention_suite.py" ncu "$R/ncu" cudnn:1,32,8,4096,128,0 cudnn:4,16,16,4096,64,0 \
    >"$R/ncu/ncu_log.txt" 2>&1 || echo "ncu rc=$?"
  tail -5 "$R/ncu/ncu_log.txt"
  [ -f "$R/ncu/ncu_cudnn.ncu-rep" ] && ncu --import "$R/ncu/ncu_cudnn.ncu-rep" --csv \
    --page raw --print-units base >"$R/ncu/ncu_cudnn_raw.csv" 2>/dev/null
  [ -f "$R/ncu/ncu_cudnn.ncu-rep" ] && ncu --import "$R/ncu/ncu_cudnn.ncu-rep" --print-units base \
    >"$R/ncu/ncu_cudnn_details.txt" 2>/dev/null
fi
tar czf "$OUT/results_fa3.tgz" -C "$OUT" r && rm -rf "$R"
ls -la "$OUT"
echo "total $(( $(date +%s) - T0 )) s"
