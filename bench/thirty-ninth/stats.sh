#!/usr/bin/env bash
# The thirty-ninth session's second call (carry ["bundle"]): the dK/dV
# kernel's row statistics (lse, D) loaded before the tile's wait for Q/dO
# and stored to shared memory after S^T and dP^T (b:
# bundle/stats-overlay.tar.xz), and that with 80-row query tiles at D 128
# (c: bundle/both-overlay.tar.xz), against main's bundle (a).
#  1. checks against float64 of b and c (every masked spec, D 64/80/96/128/
#     192/256, gpt-oss, f16, --dq-atomics), racecheck of b;
#  2. backward TFLOP/s (fa-run --repeat 30, FA_AUTOTUNE=0) a, b, c in turn;
#  3. ncu source counters of b's causal D 128 dK/dV kernel.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
device_overlay b bundle/stats-overlay.tar.xz || exit 1
device_overlay c bundle/both-overlay.tar.xz || exit 1
jobs='kernels_spec/mha.mlir|1,4,4,1000,777,128|--dtype bf16
kernels_spec/causal.mlir|1,4,4,1000,1000,128|--dtype bf16
kernels_spec/causal.mlir|1,4,4,1000,1000,64|--dtype bf16
kernels_spec/gqa_causal.mlir|2,32,8,333,333,96|--dtype f16
kernels_spec/swa.mlir|1,8,2,1500,1500,80|--dtype bf16
kernels_spec/streaming.mlir|1,8,8,1100,1100,128|--dtype bf16
kernels_spec/mha.mlir|1,4,4,333,555,192|--dtype bf16
kernels_spec/causal.mlir|1,4,4,500,500,256|--dtype bf16
kernels_spec/gpt_oss.mlir|1,64,8,700,700,64|--dtype bf16
kernels_spec/causal.mlir|1,4,4,1000,1000,128|--dtype bf16 --dq-atomics
kernels_spec/mha.mlir|2,4,4,1000,1000,64|--dtype f16 --dq-atomics'
echo "$jobs" | FA=/tmp/fa-b LD_LIBRARY_PATH=/tmp/fa-b/lib device_checks /tmp/checks-b.log
echo "$jobs" | FA=/tmp/fa-c LD_LIBRARY_PATH=/tmp/fa-c/lib device_checks /tmp/checks-c.log
R=/tmp/fa-b/bin/fa-run LD_LIBRARY_PATH=/tmp/fa-b/lib device_sanitize causal 1,4,4,1000,1000,128 --backward
ab_round() {
  for job in mha:4,16,16,4096,4096,128 causal:4,16,16,4096,4096,128 causal:4,32,32,4096,4096,64; do
    for v in a b c; do
      [ $v = c ] && [ ${job##*,} != 128 ] && continue
      device_build_tflops $v ${job%%:*} ${job#*:} --backward
    done
  done
}
ab_round
R=/tmp/fa-b/bin/fa-run LD_LIBRARY_PATH=/tmp/fa-b/lib DEVICE_CACHE_DIR=/tmp/c-b \
  device_ncu ncu-causal-128-b wgmma_dk_dv causal 1,16,16,8192,8192,128
[ $SECONDS -lt 440 ] && ab_round
cat $S
