#!/bin/bash
# H200 ground truth for simfa issue 17 (H200 fidelity part 1).
#
# Run through the device tool from the repository root, e.g.
#   run(command="bash tools/device/run_issue17.sh 2>&1 | tee $OUT/log.txt", timeout_s=600)
# Optional argument: comma-separated steps (default env,launch,stride,gemm,ncu). Environment:
# BUDGET (s, default 570), NCU_RESERVE (s the gemm step leaves for ncu, 150), SUITE_PASSES (1),
# NCU_ALL (profile all 135 suite points), NCU_REPEAT (repeat the default 20 ncu points N times),
# NCU_GROUPS (a file of ncu point groups, one line each, in place of the default 20 points).
#   env     versions, device properties, clocks as found
#   launch  launch overhead: CUDA events vs in-kernel span (launch_overhead.cu, launch_triton.py)
#   stride  strided DRAM traffic through 2D TMA boxes, bandwidth and latency (dram_stride.cu)
#   gemm    the Triton TMA GEMM suite (gemm_suite.py), cold L2, with the TTGIR dumped
#   ncu     ncu traffic and clock domains of GEMM points, a hot 8192^3 and a DRAM stream
#   lrc     which reads of the same lines by several SMs the L2 request coalescer merges
#           (lrc_merge.cu): timed cold and warm, then profiled by ncu cold and warm
#   first   a CTA's first TMA loads against its later ones, cold, warm, after
#           prefetch.tensormap, with the boxes' pages touched (cold_touch) or last used by another
#           SM (warm_shift), on 1, 16 and 132 CTAs (tma_first.cu)
#   load    one SM's DRAM box stream against the SMs streaming beside it, and the cost of a box's
#           rows past the tensor's edge, timed, then the edge cases under ncu (tma_load.cu)
# Everything lands in $OUT/r/, packed at the end into $OUT/results.tgz.
# Never changes clocks or any GPU setting: it only reads them (nvidia-smi queries, ncu with
# --clock-control none).
set -u
OUT=${OUT:-/tmp/simfa_out}
R=$OUT/r
mkdir -p "$R"
STEPS=${1:-env,launch,stride,gemm,ncu}
HERE=$(cd "$(dirname "$0")" && pwd)
export PYTHONUNBUFFERED=1
has() { [[ ",$STEPS," == *",$1,"* ]]; }
phase() { echo "$(date -u +%Y-%m-%dT%H:%M:%S.%3N) $*" | tee -a "$R/phases.txt"; }
T0=$(date +%s)
left() { echo $(( ${BUDGET:-570} - ($(date +%s) - T0) )); }

F=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu
if nvidia-smi --query-gpu=$F,clocks_event_reasons.active --format=csv >/dev/null 2>&1; then
  F=$F,clocks_event_reasons.active
fi
nvidia-smi --query-gpu=$F --format=csv -lms 200 >"$R/smi_samples.csv" 2>&1 &
SMI_PID=$!

# ncu's raw page of report $R/ncu_$1.ncu-rep as $R/ncu_$1_raw.csv (base units where it can)
import_raw() {
  [ -f "$R/ncu_$1.ncu-rep" ] || return 0
  ncu --import "$R/ncu_$1.ncu-rep" --csv --page raw --print-units base \
    >"$R/ncu_$1_raw.csv" 2>"$R/ncu_$1_import_err.txt"
  grep -q '^"ID"' "$R/ncu_$1_raw.csv" || ncu --import "$R/ncu_$1.ncu-rep" --csv --page raw \
    >"$R/ncu_$1_raw.csv" 2>>"$R/ncu_$1_import_err.txt"
}

phase start steps=$STEPS
if has env; then
  {
    echo "# date_utc: $(date -u +%FT%TZ)"
    echo "# uname: $(uname -a)"
    nvidia-smi --query-gpu=name,uuid,driver_version,pci.bus_id,memory.total,clocks.max.sm,clocks.max.mem,clocks.sm,clocks.mem,power.limit,power.draw,temperature.gpu,persistence_mode,compute_mode --format=csv
    nvidia-smi -q -d CLOCK,POWER,PERFORMANCE 2>&1 | head -120
    echo "# nvcc"; nvcc --version | tail -2
    echo "# ncu"; ncu --version 2>&1 | tail -2
    echo "# python"; python3 - <<'EOF'
import sys, torch, triton
print("python", sys.version.split()[0])
print("torch", torch.__version__, "cuda", torch.version.cuda)
print("triton", triton.__version__)
print("torch_props", torch.cuda.get_device_properties(0))
EOF
  } >"$R/env.txt" 2>&1
fi

phase build
NV="nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v"
( $NV -o /tmp/launch_overhead "$HERE/launch_overhead.cu" >"$R/build_launch.txt" 2>&1 || echo "BUILD launch_overhead FAILED" ) &
B1=$!
( $NV -o /tmp/dram_stride "$HERE/dram_stride.cu" -lcuda >"$R/build_stride.txt" 2>&1 || echo "BUILD dram_stride FAILED" ) &
B2=$!
( $NV -o /tmp/lrc_merge "$HERE/lrc_merge.cu" -lcuda >"$R/build_lrc.txt" 2>&1 || echo "BUILD lrc_merge FAILED" ) &
B3=$!
if has first; then
  ( $NV -o /tmp/tma_first "$HERE/tma_first.cu" -lcuda >"$R/build_first.txt" 2>&1 || echo "BUILD tma_first FAILED" ) &
  B4=$!
fi
if has load; then
  ( $NV -o /tmp/tma_load "$HERE/tma_load.cu" -lcuda >"$R/build_load.txt" 2>&1 || echo "BUILD tma_load FAILED" ) &
  B5=$!
fi
wait $B1 $B2 $B3 ${B4:-} ${B5:-}

if has launch; then
  phase launch
  [ -x /tmp/launch_overhead ] && { timeout 60 /tmp/launch_overhead "$R/launch_overhead.csv" || echo "launch_overhead rc=$?"; }
  timeout 90 python3 "$HERE/launch_triton.py" "$R/launch_overhead.csv" || echo "launch_triton rc=$?"
fi

if has stride && [ -x /tmp/dram_stride ]; then
  phase stride
  timeout 120 /tmp/dram_stride run "$R/dram_stride.csv" || echo "dram_stride rc=$?"
fi

if has gemm; then
  phase gemm
  T=$(( $(left) - ${NCU_RESERVE:-150} )); [ $T -gt 360 ] && T=360
  export SUITE_BUDGET_S=$(( T - 40 ))
  echo "gemm step: timeout $T s, suite budget $SUITE_BUDGET_S s"
  TRITON_ALWAYS_COMPILE=1 TRITON_KERNEL_DUMP=1 TRITON_DUMP_DIR="$R/dump" \
    timeout $T python3 "$HERE/gemm_suite.py" suite "$R" || echo "gemm_suite rc=$?"
  python3 "$HERE/issue17_post.py" ttgir "$R/dump" "$R/ttgir" || echo "ttgir pick failed"
  rm -rf "$R/dump"
fi

if has ncu; then
  phase ncu
  ncu --query-metrics >"$R/ncu_query_metrics.txt" 2>&1 || echo "ncu --query-metrics rc=$?"
  grep -iE "^ *lrc__" "$R/ncu_query_metrics.txt" >"$R/ncu_query_metrics_lrc.txt"
  LRC=$(awk '{print $1}' "$R/ncu_query_metrics_lrc.txt" | paste -sd, -)
  [ -n "$LRC" ] && ncu --query-metrics-mode suffix --metrics "$LRC" >>"$R/ncu_query_metrics_lrc.txt" 2>&1
  python3 "$HERE/issue17_post.py" metrics "$R/ncu_query_metrics.txt" "$R/ncu_metrics.txt"
  MET=$(paste -sd, "$R/ncu_metrics.txt")
  NCU="ncu --clock-control none --cache-control all --replay-mode kernel --metrics $MET"
  G=0
  if [ -n "${NCU_GROUPS:-}" ]; then
    cp "$NCU_GROUPS" "$R/ncu_groups.txt"
  elif [ -n "${NCU_ALL:-}" ]; then
    python3 "$HERE/gemm_suite.py" specs 15 >"$R/ncu_groups.txt"
  else
    for rep in $(seq 1 ${NCU_REPEAT:-1}); do
    printf '%s\n' "1024,1024,1024,0 128,128,32768,0 2048,2048,2048,0 3072,3072,3072,0 4096,4096,1024,0" \
      "4096,1024,4096,0 640,5120,5120,0 16384,1024,1024,0 1024,1024,16384,0 4096,4096,4096,0" \
      "8192,1024,8192,0 8192,8192,2048,0 6144,6144,6144,0 4096,14336,4096,0 4096,4096,16384,0" \
      "8192,8192,8192,0 128,16384,4096,0 4096,4096,4096,1 8192,8192,8192,1 4096,4096,4096,2"
    done >"$R/ncu_groups.txt"
  fi
  while read -r grp; do
    G=$((G + 1))
    T=$(( $(left) - 60 )); [ $T -gt 150 ] && T=150
    if [ $T -lt 25 ]; then echo "ncu gemm group $G skipped (time): $grp"; continue; fi
    echo "ncu gemm group $G: timeout $T s"
    timeout $T $NCU -k 'regex:^gemm_tma_kernel$' -f -o "$R/ncu_gemm$G" \
      python3 "$HERE/gemm_suite.py" ncu "$R/ncu_gemm${G}_points.json" $grp </dev/null >"$R/ncu_gemm${G}_log.txt" 2>&1 \
      || echo "ncu gemm group $G rc=$?"
    tail -2 "$R/ncu_gemm${G}_log.txt"
    if [ $G = 1 ] && [ ! -f "$R/ncu_gemm1.ncu-rep" ]; then
      echo "ncu failed with the chosen metrics; retrying group 1 with the minimal list"
      MET=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,lts__t_sectors_srcunit_ltcfabric.sum,lts__t_sector_hit_rate.pct,lts__cycles_active.avg,lts__cycles_elapsed.avg,sm__cycles_elapsed.avg.per_second,lts__cycles_elapsed.avg.per_second,dram__cycles_elapsed.avg.per_second
      NCU="ncu --clock-control none --cache-control all --replay-mode kernel --metrics $MET"
      timeout 100 $NCU -k 'regex:^gemm_tma_kernel$' -f -o "$R/ncu_gemm$G" \
        python3 "$HERE/gemm_suite.py" ncu "$R/ncu_gemm${G}_points.json" $grp </dev/null >"$R/ncu_gemm${G}_retry_log.txt" 2>&1 \
        || echo "ncu gemm group $G retry rc=$?"
    fi
  done <"$R/ncu_groups.txt"
  T=$(( $(left) - 25 )); [ $T -gt 60 ] && T=60
  [ -n "${NCU_GROUPS:-}" ] && T=0   # a chosen set of points: no hot GEMM, no stream
  if [ $T -gt 10 ]; then
    timeout $T $NCU -k 'regex:^gemm_tma_kernel$' --launch-skip 200 --launch-count 1 -f -o "$R/ncu_hot" \
      python3 "$HERE/gemm_suite.py" hot 8192,8192,8192,0 200 >"$R/ncu_hot_log.txt" 2>&1 || echo "ncu hot rc=$?"
  fi
  T=$(( $(left) - 15 )); [ $T -gt 40 ] && T=40
  [ -n "${NCU_GROUPS:-}" ] && T=0
  if [ $T -gt 10 ] && [ -x /tmp/dram_stride ]; then
    timeout $T $NCU -k 'regex:stride_bw' --launch-skip 1 --launch-count 1 -f -o "$R/ncu_stream" \
      /tmp/dram_stride ncu >"$R/ncu_stream_log.txt" 2>&1 || echo "ncu stream rc=$?"
  fi
  for t in $(seq -f gemm%g 1 $G) hot stream; do
    import_raw "$t"
  done
  python3 "$HERE/issue17_post.py" ncu "$R" || echo "ncu post failed"
fi

if has lrc && [ -x /tmp/lrc_merge ]; then
  phase lrc
  /tmp/lrc_merge list "$R/lrc_cases.csv"
  for l2 in cold warm; do
    timeout 60 /tmp/lrc_merge run "$R/lrc_merge_$l2.csv" $l2 || echo "lrc_merge $l2 rc=$?"
  done
  LRC_MET=lts__t_sectors_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_read.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_read_lookup_hit.sum,lts__t_sectors_srcunit_ltcfabric_op_read.sum,lrc__lrc2xbar_sectors_op_read.sum,lrc__lrc2xbar_sectors_op_read_coalescing_achieved.sum,lrc__xbar2gpc_sectors_op_read.sum,lrc__request_sectors_op_read_coalescable.sum,lrc__lts2lrc_sectors_op_read.sum,dram__bytes_read.sum,gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,lts__cycles_elapsed.avg.per_second
  for cc in all:cold none:warm; do
    T=$(( $(left) - 20 )); [ $T -gt 200 ] && T=200
    [ $T -lt 20 ] && { echo "ncu lrc ${cc#*:} skipped (time)"; continue; }
    timeout $T ncu --clock-control none --cache-control ${cc%:*} --replay-mode kernel --metrics $LRC_MET \
      -k regex:shared_read -f -o "$R/ncu_lrc_${cc#*:}" /tmp/lrc_merge run "$R/lrc_merge_ncu_${cc#*:}.csv" warm \
      >"$R/ncu_lrc_${cc#*:}_log.txt" 2>&1 || echo "ncu lrc ${cc#*:} rc=$?"
    tail -2 "$R/ncu_lrc_${cc#*:}_log.txt"
    import_raw "lrc_${cc#*:}"
  done
fi

if has first && [ -x /tmp/tma_first ]; then
  phase first
  timeout 120 /tmp/tma_first "$R/tma_first.csv" || echo "tma_first rc=$?"
  cat "$R/tma_first.csv"
fi

if has load && [ -x /tmp/tma_load ]; then
  phase load
  timeout 120 /tmp/tma_load run "$R/tma_load.csv" || echo "tma_load rc=$?"
  LOAD_MET=lts__t_sectors_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_read.sum,lts__t_sectors_op_read.sum,lrc__request_sectors_op_read_coalescable.sum,lrc__lrc2xbar_sectors_op_read.sum,lrc__xbar2gpc_sectors_op_read.sum,lrc__lts2lrc_sectors_op_read.sum,dram__bytes_read.sum,gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,lts__cycles_elapsed.avg.per_second
  T=$(( $(left) - 20 )); [ $T -gt 120 ] && T=120
  if [ $T -gt 20 ]; then
    timeout $T ncu --clock-control none --cache-control none --replay-mode kernel --metrics $LOAD_MET \
      -k regex:box_stream -f -o "$R/ncu_load" /tmp/tma_load ncu >"$R/ncu_load_log.txt" 2>&1 || echo "ncu load rc=$?"
    tail -4 "$R/ncu_load_log.txt"
    import_raw load
  fi
fi

phase end
kill "$SMI_PID" 2>/dev/null
wait "$SMI_PID" 2>/dev/null
python3 "$HERE/issue17_post.py" summary "$R" || true
find "$R" -name '*.cubin' -delete 2>/dev/null
tar czf "$OUT/results.tgz" -C "$OUT" r && rm -rf "$R"
ls -la "$OUT"
echo "total $(( $(date +%s) - T0 )) s"
