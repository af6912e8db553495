#!/usr/bin/env bash
# The twenty-ninth session's sixth call (H200): three K/V stages in the
# wgmma forward (fa-run --mma-kv-stages 3) against the default two. The
# ncu of the D 80 default (ncu-d80.sh) had 7.6% of the consumers' stall
# samples on the K and V stage waits (long scoreboard on the mbarrier
# try-wait loops): with three consumers on two stages, a stage comes free
# only once the last consumer's P V on it is done.
# 1. checks against float64 with three stages (forward and backward);
# 2. fa-run A/B, two rounds, FA_AUTOTUNE=0. carry ["bundle"].
S=$OUT/summary.txt; : > $S
FA_GPU_STAGES=none scripts/gpu-run.sh /tmp/g0 > /dev/null 2>&1
FA=/tmp/fa-bundle R=$FA/bin/fa-run
export LD_LIBRARY_PATH=$FA/lib FA_AUTOTUNE=0
for d in 64 80 96 128; do
  echo "check D$d stages 3: $(FA_CACHE_DIR=/tmp/c3 timeout 100 $R kernels_spec/causal.mlir --target gpu --dtype bf16 \
    --check --mma-kv-stages 3 --shape "1,8,2,1000,1000,$d;2,16,4,3000,3000,$d" 2>&1 |
    grep -oE " o=[0-9.e+-]+|FAIL.*|rror.*" | tr '\n' ' ')" >> $S
done
for r in 1 2; do
  for c in causal\|4,32,32,4096,4096,64 mha\|4,32,32,4096,4096,64 causal\|2,16,16,8192,8192,80 \
      mha\|4,16,16,4096,4096,80 causal\|2,16,16,8192,8192,96 causal\|2,16,16,8192,8192,128 mha\|4,16,16,4096,4096,128; do
    IFS='|' read -r spec shape <<< "$c"
    a=$(FA_CACHE_DIR=/tmp/c2 timeout 60 $R kernels_spec/$spec.mlir --target gpu --dtype bf16 --repeat 30 \
      --shape $shape 2>&1 | grep -oE 'fwd_tflops=[0-9.]+|rror.*')
    b=$(FA_CACHE_DIR=/tmp/c3 timeout 60 $R kernels_spec/$spec.mlir --target gpu --dtype bf16 --repeat 30 \
      --mma-kv-stages 3 --shape $shape 2>&1 | grep -oE 'fwd_tflops=[0-9.]+|rror.*')
    echo "r$r $spec $shape: two stages $a | three $b" >> $S
  done
done
cat $S
