#!/bin/bash
# The Triton attention kernel's phases, per CTA (simfa issue 10, docs/calibration.md §30):
#   run(command="bash tools/device/run_attention_phases.sh [attention,gemm] 2>&1 | tee $OUT/log.txt", timeout_s=420)
# attention_phases.py's %clock64 probe of the timed kernel, an nvidia-smi sampler beside it, the
# versions; everything packed into $OUT/results.tgz. Only reads clocks; never changes a GPU setting.
set -u
OUT=${OUT:-/tmp/simfa_out}
R=$OUT/r
mkdir -p "$R"
HERE=$(cd "$(dirname "$0")" && pwd)
export PYTHONUNBUFFERED=1
{
  echo "# date_utc: $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,clocks.sm,clocks.mem,power.limit,power.draw,temperature.gpu --format=csv
  python3 -c "import sys, torch, triton; print('python', sys.version.split()[0]); print('torch', torch.__version__, 'cuda', torch.version.cuda); print('triton', triton.__version__)"
} >"$R/env.txt" 2>&1
cat "$R/env.txt"
F=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active
nvidia-smi --query-gpu=$F --format=csv -lms 200 >"$R/smi_samples.csv" 2>&1 &
SMI_PID=$!
STEPS=${1:-attention}
if [[ ",$STEPS," == *",attention,"* ]]; then
  timeout ${PHASES_S:-330} python3 "$HERE/attention_phases.py" "$R" || echo "attention_phases rc=$?"
fi
if [[ ",$STEPS," == *",gemm,"* ]]; then  # the GEMMs' prologue and store wait (gemm_phases.py)
  (cd "$HERE" && timeout ${GEMM_S:-200} python3 gemm_phases.py "$R/gemm_phases.csv") || echo "gemm_phases rc=$?"
fi
kill $SMI_PID 2>/dev/null
(cd "$OUT" && tar -czf results.tgz r)
ls -la "$R"
