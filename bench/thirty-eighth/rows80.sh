#!/usr/bin/env bash
# 80-row query tiles in the wgmma dK/dV kernel at D 128 (FlashAttention-3's
# non-causal hdim-128 backward tile): bundle/rows80-overlay.tar.xz (b: a
# build of branch next/rows80-d128, whose wgmmaDkDvQueryRows gives 80 at D
# 128 where dQ has its own kernel; not run yet, the thirty-eighth session's
# device time ran out) over the bundle of 5d20aa7 (a). Carry ["bundle"].
# One check against float64, then one backward TFLOP/s pair (fa-run
# --repeat 30, FA_AUTOTUNE=0), each line into $OUT/summary.txt as it comes
# (the call may be cut short).
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader) (${SECONDS}s)" >> $S
device_overlay b bundle/rows80-overlay.tar.xz || exit 1
echo "kernels_spec/mha.mlir|1,4,4,1000,777,128|--dtype bf16" | FA=/tmp/fa-b device_checks /tmp/checks-rows80.log
for v in b a; do
  d=$FA
  [ $v = b ] && d=/tmp/fa-b
  echo "mha 4,16,16,4096,4096,128 $v $(R=$d/bin/fa-run LD_LIBRARY_PATH=$d/lib DEVICE_CACHE_DIR=/tmp/c-$v \
    device_tflops mha 4,16,16,4096,4096,128 --backward) (${SECONDS}s)" >> $S
done
cat $S
