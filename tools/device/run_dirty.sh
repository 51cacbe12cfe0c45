#!/bin/bash
# The dirty L2 a write flush leaves (tools/device/dirty_l2.py; docs/calibration.md §42).
#   run(command="bash tools/device/run_dirty.sh 2>&1 | tee $OUT/log.txt", timeout_s=400)
# Writes $OUT/r/{env.txt,dirty_l2.csv,dirty_l2_order.csv,dirty_l2_ncu.csv,smi_samples.csv}.
# Only reads clocks; never changes a GPU setting (ncu with --clock-control none).
set -u
OUT=${OUT:-/tmp/simfa_out}
R=$OUT/r
mkdir -p "$R"
HERE=$(cd "$(dirname "$0")" && pwd)
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu \
  --format=csv -lms 200 >"$R/smi_samples.csv" 2>&1 &
SMI_PID=$!
{
  echo "# date_utc: $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,clocks.mem,power.limit --format=csv
  python3 -c "import torch; print('torch', torch.__version__, torch.version.cuda)"
  ncu --version | tail -1
} >"$R/env.txt" 2>&1
timeout 150 python3 "$HERE/dirty_l2.py" "$R/dirty_l2.csv"
echo "timed rc=$?"
timeout 200 ncu --cache-control none --clock-control none --nvtx --nvtx-include "measure/" \
  --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,gpc__cycles_elapsed.avg.per_second \
  --csv python3 "$HERE/dirty_l2.py" --ncu "$R/dirty_l2_order.csv" >"$R/dirty_l2_ncu.csv" 2>"$R/ncu_err.txt"
echo "ncu rc=$?"
kill $SMI_PID 2>/dev/null
cat "$R/env.txt" "$R/dirty_l2.csv"
grep -c dram__bytes_write "$R/dirty_l2_ncu.csv"
