#!/bin/bash
# The GEMM suite's first points timed after each way of emptying the L2: a 256 MiB write
# (zero_, as gemm_suite.py and do_bench do) and a 256 MiB read (SUITE_FLUSH=read). The
# difference is the write-back of the dirty lines a write flush leaves (docs/calibration.md §42).
#   run(command="bash tools/device/run_flush_ab.sh 2>&1 | tee $OUT/log.txt", timeout_s=600)
# BUDGET_EACH (s, default 230) bounds each pass; both passes time the same points, in the suite's
# order (tiny, skinny, long K, ...). Writes $OUT/r/{gemm_suite_write.csv,gemm_suite_read.csv,
# meta_write.json,meta_read.json,env.txt}. Only reads clocks; never changes a GPU setting.
set -u
OUT=${OUT:-/tmp/simfa_out}
R=$OUT/r
mkdir -p "$R"
HERE=$(cd "$(dirname "$0")" && pwd)
{
  echo "# date_utc: $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,clocks.mem,power.limit --format=csv
} >"$R/env.txt" 2>&1
for mode in write read; do
  SUITE_FLUSH=$mode SUITE_BUDGET_S=${BUDGET_EACH:-230} timeout 290 \
    python3 "$HERE/gemm_suite.py" suite "/tmp/flush_$mode" >"/tmp/flush_$mode.log" 2>&1
  echo "$mode rc=$?"
  cp "/tmp/flush_$mode/gemm_suite.csv" "$R/gemm_suite_$mode.csv"
  cp "/tmp/flush_$mode/gemm_suite_meta.json" "$R/meta_$mode.json"
  tail -3 "/tmp/flush_$mode.log"
done
wc -l "$R"/gemm_suite_*.csv
