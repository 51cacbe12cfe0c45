#!/bin/bash
# Ground-truth measurements on the H200 for simfa issues 4 and 7.
#
# Run through the device tool from the repository root, e.g.
#   run(command="bash tools/device/run_all.sh 2>&1 | tee $OUT/log.txt", timeout_s=600)
# Optional argument: comma-separated steps (default env,bw,chase,triton,trace; also clockprobe,
# and tchase = the bulk-copy chase alone, which the chase step also runs).
# Everything lands in $OUT/r/, packed at the end into $OUT/results.tgz (unpack into
# validation/h200/raw/ or pick the CSVs; see validation/h200/README.md).
# Never changes clocks or any GPU setting: it only reads them (nvidia-smi queries).
set -u
OUT=${OUT:-/tmp/simfa_out}
R=$OUT/r
mkdir -p "$R"
STEPS=${1:-env,bw,chase,triton,trace}
HERE=$(cd "$(dirname "$0")" && pwd)
export PYTHONUNBUFFERED=1
has() { [[ ",$STEPS," == *",$1,"* ]]; }
phase() { echo "$(date -u +%Y-%m-%dT%H:%M:%S.%3N) $*" | tee -a "$R/phases.txt"; }

# clock/power sampler for the whole run (200 ms); phases.txt gives the step boundaries
F=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu
if nvidia-smi --query-gpu=$F,clocks_event_reasons.active --format=csv >/dev/null 2>&1; then
  F=$F,clocks_event_reasons.active
fi
nvidia-smi --query-gpu=$F --format=csv -lms 200 >"$R/smi_samples.csv" 2>&1 &
SMI_PID=$!

phase start steps=$STEPS
if has env; then
  {
    echo "# date_utc: $(date -u +%FT%TZ)"
    echo "# uname: $(uname -a)"
    nvidia-smi --query-gpu=name,driver_version,pci.bus_id,memory.total,clocks.max.sm,clocks.max.mem,clocks.sm,clocks.mem,power.limit,power.draw,temperature.gpu,persistence_mode,compute_mode --format=csv
    nvidia-smi | head -15
    echo "# nvcc"; nvcc --version | tail -2
    echo "# python"; python3 - <<'EOF'
import sys, torch, triton
print("python", sys.version.split()[0])
print("torch", torch.__version__, "cuda", torch.version.cuda)
print("triton", triton.__version__)
p = torch.cuda.get_device_properties(0)
print("torch_props", p)
EOF
  } >"$R/env.txt" 2>&1
fi

phase build
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v -o /tmp/membench \
  "$HERE/membench.cu" -lcuda >"$R/membench_build.txt" 2>&1 || { echo "BUILD FAILED"; cat "$R/membench_build.txt"; }
if [ -x /tmp/membench ]; then
  { echo "# membench props (cudaGetDeviceProperties)"; /tmp/membench props; } >>"$R/env.txt" 2>&1
  cuobjdump --dump-sass /tmp/membench >"$R/membench.sass" 2>&1 || true
fi

if has bw && [ -x /tmp/membench ]; then
  phase bw
  timeout 90 /tmp/membench bw "$R/bandwidth.csv" || echo "bw rc=$?"
  python3 - "$R/bandwidth_torch.csv" <<'EOF' || echo "torch copy failed"
import sys, statistics, torch
n = 4 << 30
a = torch.empty(n, dtype=torch.uint8, device="cuda"); a.fill_(3)
b = torch.empty_like(a)
ms = []
for i in range(8):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record(); b.copy_(a); e.record(); e.synchronize()
    if i: ms.append(s.elapsed_time(e))
assert bool((b[-1024:] == 3).all())
m = statistics.median(ms)
open(sys.argv[1], "w").write("kind,bytes,median_ms,GBps_read_plus_write,reps\n"
                             f"torch_copy_d2d,{n},{m:.4f},{2*n/(m*1e-3)/1e9:.1f},{len(ms)}\n")
print(f"torch d2d copy 4 GiB: {m:.3f} ms, {2*n/(m*1e-3)/1e9:.1f} GB/s (read+write)")
EOF
fi

if has chase && [ -x /tmp/membench ]; then
  phase chase
  timeout 150 /tmp/membench chase "$R/pointer_chase.csv" "$R/pointer_chase_latency_samples.csv" \
    "$R/tma_chase.csv" || echo "chase rc=$?"
fi

if has tchase && [ -x /tmp/membench ]; then
  phase tchase
  timeout 120 /tmp/membench tchase "$R/tma_chase.csv" || echo "tchase rc=$?"
fi

if has triton; then
  phase triton
  TRITON_ALWAYS_COMPILE=1 TRITON_KERNEL_DUMP=1 TRITON_DUMP_DIR="$R/dump_bench" \
    timeout 200 python3 "$HERE/triton_bench.py" "$R" || echo "triton_bench rc=$?"
fi

if has clockprobe; then
  phase clockprobe
  timeout 120 python3 "$HERE/triton_bench.py" "$R" clockprobe || echo "clockprobe rc=$?"
fi

if has trace; then
  phase trace
  timeout 160 python3 "$HERE/triton_trace.py" "$R/trace" || echo "triton_trace rc=$?"
fi

phase end
kill "$SMI_PID" 2>/dev/null
wait "$SMI_PID" 2>/dev/null
# keep the dumps small: drop cubins and llir (the .ttgir/.ttir/.ptx/.json stay)
find "$R" -name '*.cubin' -delete 2>/dev/null
find "$R" -name '*.llir' -size +2M -delete 2>/dev/null
python3 "$HERE/summarize.py" "$R" || true
tar czf "$OUT/results.tgz" -C "$OUT" r && rm -rf "$R"
ls -la "$OUT"
