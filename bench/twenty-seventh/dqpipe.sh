#!/usr/bin/env bash
# The twenty-seventh session's dQ-pipelining experiment (H200; an
# experiment build: FA_EXP_DQ_PIPE=1 makes the wgmma dQ kernel issue tile
# t's S and dP before tile t - 1's dQ product, waited after tile t's math).
# Checks against float64 of the pipelined form, then fa-run --backward,
# serial against pipelined, alternating, FA_AUTOTUNE=0, own kernel caches.
S=$OUT/summary.txt; : > $S
FA_GPU_STAGES=none scripts/gpu-run.sh /tmp/g0 > /dev/null 2>&1
NEW=/tmp/fa-bundle
export LD_LIBRARY_PATH=$NEW/lib FA_AUTOTUNE=0
for c in "causal|1,8,8,197,197,64" "causal|2,8,2,300,700,128" "gqa_causal|1,32,8,333,333,128" "mha|2,4,4,1000,777,128" \
         "gpt_oss|1,64,8,700,300,64" "streaming|1,8,8,2100,2100,128" "swa|1,8,2,5000,5000,64" "causal|1,8,8,197,197,96"; do
  IFS='|' read -r spec shape <<< "$c"
  out=$(FA_EXP_DQ_PIPE=1 FA_CACHE_DIR=/tmp/cp timeout 60 $NEW/bin/fa-run kernels_spec/$spec.mlir --target gpu --dtype bf16 \
    --backward --shape $shape 2>&1 | grep -oE "dq=[0-9.e+-]+|dk=[0-9.e+-]+|FAIL[^ ]*|error.*" | tr '\n' ' ')
  echo "check pipelined $spec $shape: $out" >> $S
done
for r in 1 2; do
  for c in "causal|4,32,32,4096,4096,64" "causal|2,16,16,8192,8192,128" "gqa_causal|2,32,8,8192,8192,128" "mha|4,16,16,4096,4096,128" "streaming|2,16,16,8192,8192,128"; do
    IFS='|' read -r spec shape <<< "$c"
    a=$(FA_CACHE_DIR=/tmp/cs timeout 90 $NEW/bin/fa-run kernels_spec/$spec.mlir --target gpu --dtype bf16 --repeat 20 \
      --backward --shape $shape 2>&1 | grep -oE 'bwd_tflops=[0-9.]+|error.*' | tr '\n' ' ')
    p=$(FA_EXP_DQ_PIPE=1 FA_CACHE_DIR=/tmp/cp timeout 90 $NEW/bin/fa-run kernels_spec/$spec.mlir --target gpu --dtype bf16 --repeat 20 \
      --backward --shape $shape 2>&1 | grep -oE 'bwd_tflops=[0-9.]+|error.*' | tr '\n' ' ')
    echo "r$r $spec $shape serial $a | pipelined $p" >> $S
  done
done
cat $S
