#!/usr/bin/env bash
# carry ["bundle"] (the bundle of a29e172, that of the last bench_gpu rows).
# gpt-oss window 128's forward (2x64/8x8k, D 64): fa-run's kernel on the
# shipped table and on the default config; w128_single.py's single, queued
# and host times under both; then the table's rows for that case tuned
# again on this build (the rows were made before the GQA-group packing).
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S || exit 1
device_python $OUT/py.log || exit 1
for t in table 0; do
  echo "fa-run FA_AUTOTUNE=$t: $(FA_AUTOTUNE=$t FA_CACHE_DIR=/tmp/cr-$t timeout 120 $R kernels_spec/gpt_oss.mlir \
    --target gpu --dtype bf16 --repeat 30 --shape 2,64,8,8192,8192,64 2>&1 | grep -oE 'fwd=[0-9.]+ms|fwd_tflops=[0-9.]+|rror.*' | tr '\n' ' ')" >> $S
done
for t in table 0; do
  echo "== w128_single FA_AUTOTUNE=$t" >> $S
  PYTHONPATH=$PY_DIR FA_AUTOTUNE=$t FA_CACHE_DIR=/tmp/cp-$t timeout 120 python3 bench/fifty-second/w128_single.py 2>&1 | grep -v -i warn >> $S
done
device_retune gpt-oss-window-128:64 190
echo "done (${SECONDS}s)" >> $S
cat $S
