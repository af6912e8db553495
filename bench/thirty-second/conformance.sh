#!/usr/bin/env bash
# The thirty-second session's second call: the GPU conformance grid's
# tensor-core part (every variant, bf16 and f16, forward and backward,
# against float64) at every head dim, three runs at a time; then the
# autotuner's new wgmma candidates (block-n, three stages) tuned and
# checked on one causal D 128 and one D 64 shape. carry ["bundle"].
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
device_conformance 32,80 96,192 256,64,128
for c in "causal 2,16,16,2048,2048,128" "streaming 2,16,16,2048,2048,64"; do
  set -- $c
  FA_CACHE_DIR=/tmp/c-tune FA_AUTOTUNE=1 timeout 150 "$R" kernels_spec/$1.mlir --target gpu --dtype bf16 --check --shape $2 \
    > $OUT/tune-$1.log 2>&1
  echo "tune $c rc=$? (${SECONDS}s)" >> $S
  grep -i -E "tun|block-n|stages|o=" $OUT/tune-$1.log | head -20 >> $S
done
echo "done ${SECONDS}s" >> $S
cat $S
