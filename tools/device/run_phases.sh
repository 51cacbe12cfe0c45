#!/bin/bash
# The GEMM loop's costs in situ, beside the microbenchmarks that isolate them (simfa issue 17).
#
#   run(command="bash tools/device/run_phases.sh 2>&1 | tee $OUT/log.txt", timeout_s=540)
#
#   1. run_loaded.sh: tma_loaded, loop_costs and tma_issue (the copy's issue alone, behind another
#      copy, in a train, after a ring's wait)
#   2. triton_trace.py: Proton traces (warp 0 of every CTA, each TMA, WGMMA and barrier op timed)
#      of the suite's three tile configs, one CTA at K = 1024 and the full 4096x4096x512 grid
# Writes $OUT/r/ (run_loaded.sh's files) and $OUT/t/ (the traces, gzipped, the instrumented
# TTGIRs, the SASS of both builds of each config), packed as $OUT/results.tgz. Only reads clocks;
# never changes a GPU setting.
set -u
OUT=${OUT:-/tmp/simfa_out}
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=$OUT NO_PACK=1 bash "$HERE/run_loaded.sh"
T=$OUT/t
mkdir -p "$T"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu \
  --format=csv -lms 200 >"$T/smi_samples.csv" 2>&1 &
SMI_PID=$!
timeout 400 python3 "$HERE/triton_trace.py" "$T/work" \
  gemm:128,128,1024:0 gemm:128,256,1024:1 gemm:64,128,1024:2 \
  gemm:4096,4096,512:0 gemm:4096,4096,512:1 gemm:4096,4096,512:2
echo "triton_trace rc=$?"
kill $SMI_PID 2>/dev/null
for f in "$T"/work/*chrome_trace*; do gzip -c "$f" >"$T/$(basename "$f").gz"; done
# The SASS of each config, as compiled (dump0) and instrumented (dump1): whether the records
# change ptxas's schedule of the WGMMAs (docs/calibration.md §19).
for d in dump0 dump1; do
  for c in "$T"/work/$d/*/gemm_tma_kernel.cubin; do
    [ -f "$c" ] || continue
    h=$(basename "$(dirname "$c")")
    cuobjdump -sass "$c" | gzip >"$T/sass_${d}_${h:0:8}.sass.gz"
  done
done
cp "$T"/work/*.instrumented.ttgir "$T"/work/*.sites.json "$T"/work/trace_summary.json "$T/" 2>/dev/null
ls -la "$T"
(cd "$OUT" && tar -czf results.tgz r t/*.gz t/*.ttgir t/*.json t/smi_samples.csv)
rm -rf "$OUT/r" "$T"
