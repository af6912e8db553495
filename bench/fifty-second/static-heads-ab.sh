#!/usr/bin/env bash
# carry ["bundle"] (the bundle of a29e172). Whether fixing the head counts
# (as the Python API now does on the GPU) changes the dense wgmma kernels:
# fa-run forward and backward (FA_AUTOTUNE=0, bf16, --repeat 30) of causal
# and mha with dynamic head counts (kernels_spec/) against copies fixing
# them (causal_h16.mlir ...), alternated over two rounds after a compile
# round.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S || exit 1
run() {
  FA_AUTOTUNE=0 FA_CACHE_DIR=/tmp/cab timeout 100 $R $1 --target gpu --dtype bf16 --repeat 30 --backward \
    --shape $2 2>&1 | grep -oE 'fwd_tflops=[0-9.]+|bwd_tflops=[0-9.]+|rror.*' | tr '\n' ' '
}
cases="kernels_spec/causal.mlir|bench/fifty-second/causal_h16.mlir|4,16,16,4096,4096,128
kernels_spec/causal.mlir|bench/fifty-second/causal_h32.mlir|4,32,32,4096,4096,64
kernels_spec/mha.mlir|bench/fifty-second/mha_h32.mlir|4,32,32,4096,4096,64"
while IFS='|' read -r dyn fixed shape; do
  ( FA_AUTOTUNE=0 FA_CACHE_DIR=/tmp/cab timeout 100 $R $dyn --target gpu --dtype bf16 --backward --shape 1,${shape#*,} > /dev/null 2>&1 ) &
  ( FA_AUTOTUNE=0 FA_CACHE_DIR=/tmp/cab timeout 100 $R $fixed --target gpu --dtype bf16 --backward --shape 1,${shape#*,} > /dev/null 2>&1 ) &
done <<< "$cases"
wait
echo "compiled (${SECONDS}s)" >> $S
for r in 1 2; do
  while IFS='|' read -r dyn fixed shape; do
    echo "r$r $shape dynamic $(run $dyn $shape)" >> $S
    echo "r$r $shape fixed   $(run $fixed $shape)" >> $S
  done <<< "$cases"
done
echo "done (${SECONDS}s)" >> $S
cat $S
