#!/usr/bin/env bash
# The fortieth session's first call (carry ["bundle"]): the dK/dV kernel
# that adds dQ (--dq-atomics) with dQ a tile late behind dV and dK, its
# consumers synchronised by an mbarrier per dS^T buffer in place of a
# named barrier each tile (this build's bundle).
#  1. checks against float64 with --dq-atomics (D 32/64/128, every masked
#     spec, GQA groups, Sq != Sk, ragged tails, f16) and of the default;
#  2. memcheck and racecheck of two --dq-atomics shapes;
#  3. backward TFLOP/s (fa-run --repeat 30, FA_AUTOTUNE=0), the dQ kernel
#     (default) against --dq-atomics, two rounds;
#  4. ncu of the fused kernel, causal 1x16x8k D 128.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
jobs='kernels_spec/causal.mlir|1,4,4,1000,1000,128|--dtype bf16 --dq-atomics
kernels_spec/mha.mlir|1,4,4,1000,777,128|--dtype bf16 --dq-atomics
kernels_spec/mha.mlir|2,4,4,333,1000,64|--dtype f16 --dq-atomics
kernels_spec/causal.mlir|1,4,4,1000,1000,64|--dtype bf16 --dq-atomics
kernels_spec/causal.mlir|2,4,4,555,555,32|--dtype bf16 --dq-atomics
kernels_spec/gqa_causal.mlir|2,32,8,333,333,64|--dtype bf16 --dq-atomics
kernels_spec/gqa_causal.mlir|1,32,4,700,700,128|--dtype f16 --dq-atomics
kernels_spec/swa.mlir|1,8,2,1500,1500,128|--dtype bf16 --dq-atomics
kernels_spec/streaming.mlir|1,8,8,1100,1100,64|--dtype bf16 --dq-atomics
kernels_spec/gpt_oss.mlir|1,64,8,700,700,64|--dtype bf16 --dq-atomics
kernels_spec/causal.mlir|1,4,4,1000,1000,80|--dtype bf16 --dq-atomics
kernels_spec/causal.mlir|1,4,4,1000,1000,128|--dtype bf16
kernels_spec/gqa_causal.mlir|2,32,8,333,333,96|--dtype f16'
echo "$jobs" | device_checks /tmp/checks.log
device_sanitize causal 1,4,4,1000,1000,128 --backward --dq-atomics
device_sanitize gqa_causal 1,32,8,333,333,64 --backward --dq-atomics
ab_round() {
  for job in causal:4,16,16,4096,4096,128 mha:4,16,16,4096,4096,128 \
      causal:4,32,32,4096,4096,64 mha:4,32,32,4096,4096,64 gqa_causal:4,32,8,4096,4096,128; do
    device_build_tflops a ${job%%:*} ${job#*:} --backward
    echo "  dq-atomics: $(device_tflops ${job%%:*} ${job#*:} --backward --dq-atomics)" >> $S
  done
}
ab_round
DEVICE_CACHE_DIR=/tmp/c-ncu device_ncu ncu-causal-128-dq wgmma_dk_dv causal 1,16,16,8192,8192,128 --dq-atomics
[ $SECONDS -lt 420 ] && ab_round
cat $S
