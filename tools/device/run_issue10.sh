#!/bin/bash
# H200 ground truth for simfa issue 10 (H200 fidelity part 2: attention and the compute model).
#
# Run through the device tool from the repository root, e.g.
#   run(command="bash tools/device/run_issue10.sh 2>&1 | tee $OUT/log.txt", timeout_s=600)
# Optional argument: comma-separated steps (default env,wgmma,micro,suite).
#   env     versions, device properties, clocks as found
#   wgmma   the tensor core: sustained WGMMA rate and latency (wgmma_bench.py)
#   micro   softmax and register-arithmetic microbenchmarks (attention_suite.py micro)
#   suite   Triton TMA attention (3 tile configs) and cuDNN SDPA (attention_suite.py suite)
#   variants  the attention loop with one stage left out (attention_suite.py variants)
#   ncu     ncu DRAM/L2 traffic of attention across the L2, L 4K-64K (attention_suite.py ncu)
#   clocks  ncu's SM clock and duration of every suite point, two launches each
#           (attention_suite.py clocks): NVML's 10 ms samples miss what the SM runs at
#   opcodes ncu's instruction mix (InstructionStats, per SASS opcode) and pipe utilization of
#           cuDNN's kernel at D = 128 and 64 and of Triton's 128x64 kernel, one launch each
# Everything lands in $OUT/r/, packed at the end into $OUT/results.tgz. Never changes clocks or
# any GPU setting: it only reads them.
set -u
OUT=${OUT:-/tmp/simfa_out}
R=$OUT/r
mkdir -p "$R"
STEPS=${1:-env,wgmma,micro,suite}
HERE=$(cd "$(dirname "$0")" && pwd)
export PYTHONUNBUFFERED=1
has() { [[ ",$STEPS," == *",$1,"* ]]; }
phase() { echo "$(date -u +%Y-%m-%dT%H:%M:%S.%3N) $*" | tee -a "$R/phases.txt"; }
T0=$(date +%s)

F=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu,clocks_event_reasons.active
nvidia-smi --query-gpu=$F --format=csv -lms 200 >"$R/smi_samples.csv" 2>&1 &
SMI_PID=$!

phase start steps=$STEPS
if has env; then
  {
    echo "# date_utc: $(date -u +%FT%TZ)"
    nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,clocks.sm,clocks.mem,power.limit,power.draw,temperature.gpu --format=csv
    echo "# nvcc"; nvcc --version | tail -2
    python3 -c "import sys, torch, triton; print('python', sys.version.split()[0]); print('torch', torch.__version__, 'cuda', torch.version.cuda, 'cudnn', torch.backends.cudnn.version()); print('triton', triton.__version__)"
  } >"$R/env.txt" 2>&1
  cat "$R/env.txt"
fi
if has wgmma; then
  phase wgmma
  timeout ${WGMMA_S:-200} python3 "$HERE/wgmma_bench.py" "$R/wgmma" | tail -60 || echo "wgmma_bench rc=$?"
  rm -f "$R/wgmma/wgmma_bench"
fi
if has micro; then
  phase micro
  timeout ${MICRO_S:-150} python3 "$HERE/attention_suite.py" micro "$R/attn" || echo "micro rc=$?"
fi
if has suite; then
  phase suite
  timeout ${SUITE_S:-220} python3 "$HERE/attention_suite.py" suite "$R/attn" || echo "suite rc=$?"
fi
if has variants; then
  phase variants
  timeout ${VARIANTS_S:-150} python3 "$HERE/attention_suite.py" variants "$R/attn" || echo "variants rc=$?"
fi
# ncu over one attention_suite.py command: ncu_attn NAME "NCU ARGS" SUITE-ARGS... profiles the
# attention kernels it launches into $R/attn/NAME.ncu-rep, and its raw page into NAME_raw.csv.
ncu_attn() {
  local name=$1 args=$2
  shift 2
  mkdir -p "$R/attn"
  # shellcheck disable=SC2086  # $args holds several options
  timeout ${NCU_S:-500} ncu --clock-control none --cache-control all --replay-mode kernel $args \
    -k 'regex:attn_fwd|cudnn_generated' -f -o "$R/attn/$name" \
    python3 "$HERE/attention_suite.py" "$@" >"$R/attn/${name}_log.txt" 2>&1 || echo "$name rc=$?"
  tail -3 "$R/attn/${name}_log.txt"
  [ -f "$R/attn/$name.ncu-rep" ] && ncu --import "$R/attn/$name.ncu-rep" --csv \
    --page raw --print-units base >"$R/attn/${name}_raw.csv" 2>/dev/null
}
if has ncu; then
  # DRAM and L2 traffic of attention across the L2 (issue 18), one launch per point.
  phase ncu
  MET=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sector_hit_rate.pct,sm__cycles_elapsed.avg.per_second,lts__cycles_elapsed.avg.per_second
  PTS=""
  for L in 4096 8192 16384 32768 65536; do PTS="$PTS cudnn:1,32,8,$L,128,0 triton:1,32,8,$L,128,0"; done
  PTS="$PTS cudnn:1,32,8,16384,128,1 cudnn:1,32,8,65536,128,1 cudnn:1,64,8,16384,128,0 cudnn:1,64,8,65536,128,0 cudnn:1,8,8,32768,128,0 cudnn:1,16,16,32768,64,0"
  ncu_attn ncu_attention "--metrics $MET" ncu "$R/attn" $PTS
fi
if has clocks; then
  phase clocks
  MET=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__cycles_elapsed.max,lts__cycles_elapsed.avg.per_second
  ncu_attn ncu_clocks "--metrics $MET" clocks "$R/attn" 2
fi
if has opcodes; then
  phase opcodes
  PTS="cudnn:1,32,8,4096,128,0 cudnn:1,32,8,4096,128,1 cudnn:4,16,16,4096,64,0 cudnn:4,16,16,4096,64,1 triton:1,32,8,4096,128,0"
  ncu_attn ncu_opcodes "--section InstructionStats --section ComputeWorkloadAnalysis --section SpeedOfLight" \
    ncu "$R/attn" $PTS
  mv "$R/attn/ncu_points.csv" "$R/attn/ncu_opcodes_points.csv" 2>/dev/null
  [ -f "$R/attn/ncu_opcodes.ncu-rep" ] && ncu --import "$R/attn/ncu_opcodes.ncu-rep" --page details \
    --print-details all >"$R/attn/ncu_opcodes_details.txt" 2>/dev/null
fi
phase end
kill "$SMI_PID" 2>/dev/null
wait "$SMI_PID" 2>/dev/null
tar czf "$OUT/results.tgz" -C "$OUT" r && rm -rf "$R"
ls -la "$OUT"
echo "total $(( $(date +%s) - T0 )) s"
