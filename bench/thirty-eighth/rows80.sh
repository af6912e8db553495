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
device_overlay b bundle/rows80-overlay.tar.xz || exit 1
echo "kernels_spec/mha.mlir|1,4,4,1000,777,128|--dtype bf16" | FA=/tmp/fa-b device_checks /tmp/checks-rows80.log
for v in b a; do device_build_tflops $v mha 4,16,16,4096,4096,128 --backward; done
cat $S
