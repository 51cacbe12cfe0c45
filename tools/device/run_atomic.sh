#!/bin/bash
# The first tile index of a persistent grid from one atomic counter (atomic_tile.cu), then the
# tile-cost points run_tilecost.sh leaves out: cuDNN under the causal mask (seqlen_q = seqlen_k,
# D = 128 and 64) with the light metric set, and the SASS page of the D = 64 4-step point
# (issue 10, docs/calibration.md §25). Never changes clocks or any GPU setting.
#
#   run(command="bash tools/device/run_atomic.sh", timeout_s=200)
# Results in $OUT/: atomic_tile.csv, atomic_log.txt, tilecost_raw.csv, tilecost_points.csv,
# tilecost_log.txt, sass0_sass.csv.gz, sass0_log.txt, env.txt.
set -u
OUT=${OUT:-/tmp/simfa_out}
HERE=$(cd "$(dirname "$0")" && pwd)
{
  echo "# nvcc"; nvcc --version | tail -2
  nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o /tmp/atomic_tile "$HERE/atomic_tile.cu" \
    && /tmp/atomic_tile "$OUT/atomic_tile.csv"
} >"$OUT/atomic_log.txt" 2>&1 || echo "atomic rc=$?"
cat "$OUT/atomic_log.txt"
PTS="cudnn:1,32,8,2048,2048,128,1 cudnn:1,32,8,8192,8192,128,1 cudnn:4,16,16,2048,2048,64,1" \
  SASS_PTS="cudnn:4,16,16,8192,512,64,0" bash "$HERE/run_tilecost.sh"
