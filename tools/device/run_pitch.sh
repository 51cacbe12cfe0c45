#!/bin/bash
# Is a loaded DRAM's box latency the data bus or the row activations? (simfa issue 17,
# docs/calibration.md §32.) tma_loaded.cu's `own` rings of cold 16 KiB boxes at three row pitches:
# 8192 B (tma_loaded.csv's, every line of a box in another DRAM row), 1024 B and 128 B (a box is
# contiguous and the CTAs' boxes are neighbours: a stream). Same bytes in flight, same CTAs.
#
#   run(command="bash tools/device/run_pitch.sh 2>&1 | tee $OUT/log_pitch.txt", timeout_s=300)
#   run(command="bash tools/device/run_pitch.sh ncu 2>&1 | tee $OUT/log_pitch_ncu.txt")
#
# Writes $OUT/{env_pitch.txt,tma_loaded_pitch.csv,pitch_smi.csv}; with `ncu`, instead, one ncu
# CSV per (pitch, CTAs, stages) row, $OUT/ncu_pitch.csv: the slices', the DRAM's and the SMs'
# clocks and activity and the bytes of each of the row's 5 launches (--clock-control none; the
# L2 flushed before each, as the probe's own 256 MiB write does). Only reads clocks; never
# changes a GPU setting.
set -u
OUT=${OUT:-/tmp/simfa_out}
HERE=$(cd "$(dirname "$0")" && pwd)
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu \
  --format=csv -lms 200 >"$OUT/pitch_smi.csv" 2>&1 &
SMI_PID=$!
{
  echo "# date_utc: $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,clocks.mem,power.limit --format=csv
  nvcc --version | tail -2
} >"$OUT/env_pitch.txt" 2>&1
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o /tmp/tma_loaded "$HERE/tma_loaded.cu" -lcuda || exit 1
if [ "${1:-}" = ncu ]; then
  M=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,lts__cycles_elapsed.avg.per_second
  M=$M,lts__cycles_elapsed.avg,lts__cycles_active.avg,lts__t_sectors_op_read.sum
  M=$M,lts__t_sectors_srcunit_ltcfabric.sum,lts__t_sector_hit_rate.pct,dram__bytes_read.sum
  M=$M,dram__cycles_elapsed.avg.per_second,dram__throughput.avg.pct_of_peak_sustained_elapsed
  M=$M,lts__throughput.avg.pct_of_peak_sustained_elapsed
  for pitch in 128 8192; do
    for row in "1 1" "33 1" "33 2" "33 4" "66 2" "66 4" "132 2"; do
      set -- $row
      timeout 120 ncu -k panels --clock-control none --cache-control all --metrics "$M" --csv \
        /tmp/tma_loaded /tmp/pitch_ncu_row.csv "$pitch" "$1" "$2" >"/tmp/ncu_${pitch}_$1_$2.csv" 2>&1
      echo "ncu pitch $pitch ctas $1 stages $2 rc=$?"
      grep -q '"ID"' "/tmp/ncu_${pitch}_$1_$2.csv" || tail -5 "/tmp/ncu_${pitch}_$1_$2.csv"
      sed -n '/"ID"/,$p' "/tmp/ncu_${pitch}_$1_$2.csv" |
        awk -v p="$pitch" -v c="$1" -v s="$2" 'NR == 1 { print "\"pitch\",\"ctas\",\"stages\"," $0; next }
          { print "\"" p "\",\"" c "\",\"" s "\"," $0 }' >>"$OUT/ncu_pitch_raw.csv"
    done
  done
  kill $SMI_PID 2>/dev/null
  cat "$OUT/env_pitch.txt"
  exit 0
fi
for pitch in 128 1024 8192; do
  timeout 120 /tmp/tma_loaded "/tmp/pitch_$pitch.csv" "$pitch"
  echo "pitch $pitch rc=$?"
done
{ head -1 /tmp/pitch_8192.csv; for p in 128 1024 8192; do grep '^own,' "/tmp/pitch_$p.csv"; done; } \
  >"$OUT/tma_loaded_pitch.csv"
kill $SMI_PID 2>/dev/null
cat "$OUT/env_pitch.txt"
