#!/usr/bin/env bash
# 80-row query tiles in the wgmma dK/dV kernel at D 128 (FlashAttention-3's
# non-causal hdim-128 backward tile): bundle/rows80-overlay.tar.xz (b: a
# build of branch next/rows80-d128, whose wgmmaDkDvQueryRows gives 80 at D
# 128 where dQ has its own kernel; not run yet, the thirty-eighth session's device
# time ran out) over the bundle of 5d20aa7 (a). Carry ["bundle"]. One check against float64,
# then one backward TFLOP/s pair (fa-run --repeat 30, FA_AUTOTUNE=0), each
# line into $OUT/summary.txt as it comes (the call may be cut short).
S=$OUT/summary.txt
mkdir -p /tmp/fa-a /tmp/fa-b
tar -xJf bundle/fa-bundle.tar.xz -C /tmp/fa-a && cp -r /tmp/fa-a/. /tmp/fa-b && tar -xJf bundle/rows80-overlay.tar.xz -C /tmp/fa-b || exit 1
echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader) (${SECONDS}s)" >> $S
export FA_AUTOTUNE=0
LD_LIBRARY_PATH=/tmp/fa-b/lib timeout 60 /tmp/fa-b/bin/fa-run kernels_spec/mha.mlir --target gpu --dtype bf16 --check --backward \
  --shape 1,4,4,1000,777,128 > /tmp/check.log 2>&1
echo "check mha 1,4,4,1000,777,128 b rc=$? $(grep -iE 'rel|error|pass|fail' /tmp/check.log | tr '\n' ' ' | cut -c1-300) (${SECONDS}s)" >> $S
for v in b a; do
  out=$(LD_LIBRARY_PATH=/tmp/fa-$v/lib FA_CACHE_DIR=/tmp/c-$v timeout 90 /tmp/fa-$v/bin/fa-run kernels_spec/mha.mlir --target gpu \
    --dtype bf16 --repeat 30 --backward --shape 4,16,16,4096,4096,128 2>&1 | grep -oE 'bwd_tflops=[0-9.]+|error.*' | tr '\n' ' ')
  echo "mha 4,16,16,4096,4096,128 $v $out (${SECONDS}s)" >> $S
done
cat $S
