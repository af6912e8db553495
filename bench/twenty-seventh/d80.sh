#!/usr/bin/env bash
# The twenty-seventh session's D 80/96 experiment (H200; an experiment
# build: three consumers allowed up to D 96, and FA_EXP_BN64=1 gives a
# three-consumer block 64-key tiles past D 64, =2 from D 64): checks
# against float64 of the three-consumer form, then fa-run forward TFLOP/s,
# two consumers of 128-key tiles (the default) against three of 64-key
# tiles, alternating, FA_AUTOTUNE=0, each form its own kernel cache.
S=$OUT/summary.txt; : > $S
FA_GPU_STAGES=none scripts/gpu-run.sh /tmp/g0 > /dev/null 2>&1
NEW=/tmp/fa-bundle
export LD_LIBRARY_PATH=$NEW/lib FA_AUTOTUNE=0
for d in 80 96; do
  for spec in causal mha; do
    out=$(FA_EXP_BN64=1 FA_CACHE_DIR=/tmp/c3 timeout 90 $NEW/bin/fa-run kernels_spec/$spec.mlir --target gpu --dtype bf16 \
      --wgmma-groups 3 --shape "1,8,8,197,197,$d;2,8,2,1000,1000,$d;1,16,16,2100,2100,$d" 2>&1 | grep -oE "o=[0-9.e-]+|FAIL.*|error.*" | tr '\n' ' ')
    echo "check g3 bn64 $spec D$d: $out" >> $S
  done
done
for r in 1 2; do
  for c in "causal|2,16,16,8192,8192,80" "causal|2,16,16,8192,8192,96" "mha|2,16,16,8192,8192,80" "mha|2,16,16,8192,8192,96" "causal|2,16,16,8192,8192,64" "causal|2,16,16,8192,8192,128"; do
    IFS='|' read -r spec shape <<< "$c"
    a=$(FA_CACHE_DIR=/tmp/c2 timeout 60 $NEW/bin/fa-run kernels_spec/$spec.mlir --target gpu --dtype bf16 --repeat 30 \
      --wgmma-groups 2 --shape $shape 2>&1 | grep -oE 'fwd_tflops=[0-9.]+|error.*' | tr '\n' ' ')
    bb=$(FA_EXP_BN64=2 FA_CACHE_DIR=/tmp/c3b timeout 60 $NEW/bin/fa-run kernels_spec/$spec.mlir --target gpu --dtype bf16 --repeat 30 \
      --wgmma-groups 3 --shape $shape 2>&1 | grep -oE 'fwd_tflops=[0-9.]+|error.*' | tr '\n' ' ')
    g3=$(FA_CACHE_DIR=/tmp/c3c timeout 60 $NEW/bin/fa-run kernels_spec/$spec.mlir --target gpu --dtype bf16 --repeat 30 \
      --wgmma-groups 3 --shape $shape 2>&1 | grep -oE 'fwd_tflops=[0-9.]+|error.*' | tr '\n' ' ')
    echo "r$r $spec $shape g2-bn128 $a | g3-bn64 $bb | g3-bn128 $g3" >> $S
  done
done
cat $S
