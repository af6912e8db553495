#!/usr/bin/env bash
# carry ["bundle"]: the launch path after 62c0118 (one record lookup per
# launch): backward and split-KV decode checks against float64 (kernels
# past 48 KiB of shared memory among them), with programmatic launch on
# and with FA_PROGRAMMATIC_LAUNCH=0.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
for pdl in 1 0; do
for a in "kernels_spec/causal.mlir --backward --shape 2,8,8,1531,1531,128" \
         "kernels_spec/mha.mlir --backward --dq-atomics --shape 2,8,8,1531,1531,64" \
         "kernels_spec/causal.mlir --shape 1,28,4,1,8191,128"; do
  echo "pdl=$pdl check $a: $(FA_PROGRAMMATIC_LAUNCH=$pdl FA_CACHE_DIR=/tmp/c-chk FA_AUTOTUNE=0 timeout 100 $R $a --target gpu --dtype bf16 --check 2>&1 | grep -E 'shape=|rror|FAIL' | tr '\n' ' ' | cut -c1-300)" >> $S
done
done
cat $S
