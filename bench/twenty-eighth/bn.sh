#!/usr/bin/env bash
# The twenty-eighth session's fifth call (H200): wider key tiles for the
# two-consumer wgmma forward at D 80, 96 and 128 (fa-run --mma-block-n:
# 128 is the default; 160 and 192 (176 at D 128, where 192 would not
# fit two stages) put more columns under each tile's
# fixed softmax cost: row-max shuffles, alpha, O's rescale, the waits).
# Checks against float64 of the wide tiles, then forward TFLOP/s,
# FA_AUTOTUNE=0, each block-n its own kernel cache. carry ["bundle"].
S=$OUT/summary.txt; : > $S
FA_GPU_STAGES=none scripts/gpu-run.sh /tmp/g0 > /dev/null 2>&1
FA=/tmp/fa-bundle R=$FA/bin/fa-run
export LD_LIBRARY_PATH=$FA/lib FA_AUTOTUNE=0
for d in 80 96 128; do
  bns="160 192"; [ $d = 128 ] && bns="160 176"
  for bn in $bns; do
    out=$(FA_CACHE_DIR=/tmp/c$bn timeout 60 $R kernels_spec/causal.mlir --target gpu --dtype bf16 --check \
      --mma-block-n $bn --shape "1,8,2,1000,1000,$d;2,16,4,1000,1000,$d" 2>&1 | grep -oE " o=[0-9.e+-]+|FAIL.*|rror.*" | tr '\n' ' ')
    echo "check D$d bn$bn: $out" >> $S
  done
done
for c in "causal|2,16,16,8192,8192" "mha|4,16,16,4096,4096"; do
  IFS='|' read -r spec shape <<< "$c"
  for d in 80 96 128; do
    bns="128 160 192"; [ $d = 128 ] && bns="128 160 176"
    for bn in $bns; do
      out=$(FA_CACHE_DIR=/tmp/c$bn timeout 60 $R kernels_spec/$spec.mlir --target gpu --dtype bf16 --repeat 30 \
        --mma-block-n $bn --shape $shape,$d 2>&1 | grep -oE 'fwd_tflops=[0-9.]+|rror.*' | tr '\n' ' ')
      echo "$spec $shape,$d bn$bn $out" >> $S
    done
  done
done
cat $S
