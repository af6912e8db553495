#!/usr/bin/env bash
# The thirty-ninth session's first call (carry ["bundle"]: the bundle of
# main, and bundle/rows80-overlay.tar.xz, a build whose wgmmaDkDvQueryRows
# gives 80 query rows at D 128 where dQ has its own kernel).
#  1. rows80: checks against float64 (mha, causal D 128), then backward
#     TFLOP/s A/B (fa-run --repeat 30, FA_AUTOTUNE=0), a, b, a, b.
#  2. ncu of main's dK/dV kernel (causal and mha D 128, causal D 64): one
#     launch each with the source counters, so that each SASS instruction's
#     stall samples say where the warps wait (the 26% tensor-pipe idle that
#     the twenty-third session's ablation left unexplained).
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
device_overlay b bundle/rows80-overlay.tar.xz || exit 1
printf '%s\n' "kernels_spec/mha.mlir|1,4,4,1000,777,128|--dtype bf16" \
  "kernels_spec/causal.mlir|1,4,4,1000,1000,128|--dtype bf16" \
  "kernels_spec/gqa_causal.mlir|2,8,2,333,333,128|--dtype f16" \
  | FA=/tmp/fa-b LD_LIBRARY_PATH=/tmp/fa-b/lib device_checks /tmp/checks-rows80.log
ab_round() {
  for spec in mha causal; do
    for v in a b; do device_build_tflops $v $spec 4,16,16,4096,4096,128 --backward; done
  done
}
ab_round
for job in causal:1,16,16,8192,8192,128 mha:1,16,16,8192,8192,128 causal:1,32,32,8192,8192,64; do
  spec=${job%%:*} shape=${job#*:}
  DEVICE_CACHE_DIR=/tmp/c-a device_ncu ncu-$spec-${shape##*,} wgmma_dk_dv $spec $shape
done
[ $SECONDS -lt 420 ] && ab_round
cat $S
