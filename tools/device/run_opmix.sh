#!/bin/bash
# The instruction-level profile of the kernels simfa validates against (issues 10 and 17): for
# each point, one launch under ncu with the InstructionStats and SourceCounters sections, so that
# the report holds every SASS instruction with its executed count and its warp-stall samples.
# Exported per point: the raw page with the per-opcode instances (NAME_raw.csv) and the SASS
# source page (NAME_sass.csv: address, opcode, executed warp instructions, stall samples).
#
# Run through the device tool from the repository root:
#   run(command="bash tools/device/run_opmix.sh 2>&1 | tail -40", timeout_s=600)
# Points: cuDNN's SDPA at D = 128 and 64 and Triton's 128x64 attention (attention_suite.py ncu
# specs), Triton's TMA GEMM at three tiles (gemm_suite.py ncu specs M,N,K,CONFIG). Results in
# $OUT/r/. Other points: ATTN="SPEC ..." and GEMM="SPEC ..." (either may be empty), their files
# named with PREFIX (e.g. PREFIX=causal_ gives causal_attn0_*); NCU_SECTIONS="--section Occupancy
# ..." adds sections. Never changes clocks or any GPU setting.
set -u
OUT=${OUT:-/tmp/simfa_out}
R=$OUT/r
mkdir -p "$R"
HERE=$(cd "$(dirname "$0")" && pwd)
export PYTHONUNBUFFERED=1
T0=$(date +%s)
left() { echo $(( ${BUDGET:-540} - ($(date +%s) - T0) )); }
NCU="ncu --clock-control none --cache-control all --replay-mode kernel --section InstructionStats --section SourceCounters --section SpeedOfLight --metrics sass__inst_executed_per_opcode,sm__cycles_elapsed.avg.per_second,gpu__time_duration.sum ${NCU_SECTIONS:-}"

{
  echo "# date_utc: $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv
  ncu --version | tail -1
  python3 -c "import torch, triton; print('torch', torch.__version__, 'cudnn', torch.backends.cudnn.version(), 'triton', triton.__version__)"
} >"$R/env.txt" 2>&1

# export NAME: the raw page with metric instances and the SASS source page of $R/NAME.ncu-rep
export_rep() {
  local rep=$R/$1.ncu-rep
  [ -f "$rep" ] || { echo "$1: no report"; return 0; }
  ncu --import "$rep" --csv --page raw --print-metric-instances details >"$R/$1_raw.csv" 2>"$R/$1_err.txt"
  ncu --import "$rep" --csv --page source --print-source sass >"$R/$1_sass.csv" 2>>"$R/$1_err.txt"
  gzip -f "$R/$1_raw.csv" "$R/$1_sass.csv"
  rm -f "$rep"
  echo "$1: $(ls -la "$R/$1_sass.csv.gz" | awk '{print $5}') bytes of SASS page"
}

ATTN=${ATTN-"cudnn:4,16,16,4096,64,0 cudnn:1,32,8,4096,128,0 cudnn:1,32,8,4096,128,1 triton:1,32,8,4096,128,0"}
PREFIX=${PREFIX:-}
i=0
for p in $ATTN; do
  [ "$(left)" -lt 60 ] && { echo "attention $p skipped (time)"; continue; }
  name=${PREFIX}attn$i; i=$((i + 1))
  timeout 120 $NCU -k 'regex:attn_fwd|cudnn_generated' -f -o "$R/$name" \
    python3 "$HERE/attention_suite.py" ncu "$R/${name}_pts" "$p" >"$R/${name}_log.txt" 2>&1 || echo "$name rc=$?"
  echo "$name = $p"; export_rep "$name"
done
GEMM=${GEMM-"128,4096,4096,0 128,4096,4096,1 16384,128,4096,1 128,128,256,1 128,128,256,0 4096,4096,4096,0"}
i=0
for p in $GEMM; do
  [ "$(left)" -lt 40 ] && { echo "gemm $p skipped (time)"; continue; }
  name=${PREFIX}gemm$i; i=$((i + 1))
  timeout 90 $NCU -k 'regex:^gemm_tma_kernel$' -f -o "$R/$name" \
    python3 "$HERE/gemm_suite.py" ncu "$R/${name}_points.json" "$p" </dev/null >"$R/${name}_log.txt" 2>&1 || echo "$name rc=$?"
  echo "$name = $p"; export_rep "$name"
done
echo "done in $(( $(date +%s) - T0 )) s"
