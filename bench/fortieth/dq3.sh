#!/usr/bin/env bash
# The fortieth session's second call (carry ["bundle"]): dQ a tile late
# with three dS^T buffers, each tile's dS^T stored while its dV, dK and
# the previous tile's dQ run (bundle/three-overlay.tar.xz), against the
# two-buffer form (the bundle, a) and main's dK/dV kernel that adds dQ in
# the same tile behind a named barrier (bundle/old-overlay.tar.xz).
#  1. checks against float64 of three with --dq-atomics, racecheck;
#  2. backward TFLOP/s (fa-run --repeat 30, FA_AUTOTUNE=0): the dQ kernel
#     (a, default), then --dq-atomics of three and old.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
device_overlay three bundle/three-overlay.tar.xz || exit 1
device_overlay old bundle/old-overlay.tar.xz || exit 1
jobs='kernels_spec/causal.mlir|1,4,4,1000,1000,128|--dtype bf16 --dq-atomics
kernels_spec/mha.mlir|1,4,4,1000,777,128|--dtype bf16 --dq-atomics
kernels_spec/mha.mlir|2,4,4,333,1000,64|--dtype f16 --dq-atomics
kernels_spec/causal.mlir|2,4,4,555,555,32|--dtype bf16 --dq-atomics
kernels_spec/gqa_causal.mlir|2,32,8,333,333,64|--dtype bf16 --dq-atomics
kernels_spec/gqa_causal.mlir|1,32,8,700,700,128|--dtype f16 --dq-atomics
kernels_spec/swa.mlir|1,8,2,1500,1500,128|--dtype bf16 --dq-atomics
kernels_spec/gpt_oss.mlir|1,64,8,700,700,64|--dtype bf16 --dq-atomics'
echo "$jobs" | FA=/tmp/fa-three LD_LIBRARY_PATH=/tmp/fa-three/lib device_checks /tmp/checks-three.log
R=/tmp/fa-three/bin/fa-run LD_LIBRARY_PATH=/tmp/fa-three/lib device_sanitize gqa_causal 1,32,8,333,333,128 --backward --dq-atomics
for job in causal:4,16,16,4096,4096,128 gqa_causal:4,32,8,4096,4096,128 mha:4,16,16,4096,4096,128 \
    causal:4,32,32,4096,4096,64 mha:4,32,32,4096,4096,64; do
  device_build_tflops a ${job%%:*} ${job#*:} --backward
  device_build_tflops three ${job%%:*} ${job#*:} --backward --dq-atomics
  device_build_tflops old ${job%%:*} ${job#*:} --backward --dq-atomics
done
cat $S
