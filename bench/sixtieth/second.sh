#!/usr/bin/env bash
# Second device call of the sixtieth session. carry ["bundle"] (b412972's
# build): float64 checks of the forward (o and lse) where a window's edges
# run apart, at every head dim; memcheck and racecheck of swa's and
# streaming's forwards at odd shapes; then the windowed and gpt-oss bars
# against flex with bench_gpu.py --alternate.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S || exit 1
device_forward_checks a <<'LINES'
bf16 kernels_spec/swa.mlir --shape 1,4,4,5000,5000,64
bf16 kernels_spec/swa.mlir --shape 1,4,2,3001,5003,128
f16 kernels_spec/swa.mlir --shape 1,4,4,4700,4300,96
bf16 kernels_spec/swa.mlir --shape 1,4,4,4500,4500,32
bf16 kernels_spec/swa.mlir --shape 1,4,4,4400,4400,80
bf16 kernels_spec/swa.mlir --shape 1,2,2,4400,4400,192
bf16 kernels_spec/swa.mlir --shape 1,2,2,4400,4400,256
bf16 kernels_spec/streaming.mlir --shape 1,4,4,2000,2000,64
bf16 kernels_spec/streaming.mlir --shape 1,4,4,1500,2100,128
f16 kernels_spec/streaming.mlir --shape 1,4,4,2100,1500,96
bf16 kernels_spec/streaming.mlir --shape 1,4,4,2000,2000,80
bf16 kernels_spec/streaming.mlir --shape 1,2,2,2000,2000,256
bf16 kernels_spec/gpt_oss.mlir --kernel gpt_oss_sliding --shape 1,64,8,1000,1000,64
LINES
device_sanitize swa 1,2,2,4397,4397,64
device_sanitize streaming 1,2,2,1997,1997,128
echo "== checks done (${SECONDS}s)" >> $S
A="--alternate --rounds 4 --reps 10"
device_bench variants 150 --variants window-4096,window-1024+4-sinks,gpt-oss-full,gpt-oss-window-128 \
  --seqs 8192 --head-dims 64 --impls fa,flex $A
device_bench variants128 100 --variants window-4096,window-1024+4-sinks --seqs 8192 --head-dims 128 \
  --impls fa,flex $A
python3 bench/bars.py "$OUT"/bench-variants.csv >> "$S" 2>&1
echo "done (${SECONDS}s)" >> $S
cat $S
