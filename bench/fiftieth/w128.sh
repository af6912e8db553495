#!/usr/bin/env bash
# carry ["bundle"] as final.sh, with bundle/base-overlay.tar.xz (fa-run and
# libFARuntime of db0ea28, "o"): gpt-oss 2x64/8x8k forward and backward on
# the shipped table's configs (FA_AUTOTUNE unset, as bench_gpu.py runs fa),
# old build against new, alternated, after one untimed run of each.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S o bundle/base-overlay.tar.xz || exit 1
table_run() {
  FA_CACHE_DIR=/tmp/c-$1 device_on "$1" bash -c 'timeout 100 "$R" kernels_spec/gpt_oss.mlir --target gpu --dtype bf16 --backward --repeat 30 --shape 2,64,8,8192,8192,64 2>&1' |
    grep -oE 'fwd_tflops=[0-9.]+|bwd_tflops=[0-9.]+|rror.*' | tr '\n' ' '
}
table_run a > /dev/null & table_run o > /dev/null & wait
echo "compiled (${SECONDS}s)" >> $S
for v in o a o a; do echo "$v $(table_run $v) (${SECONDS}s)" >> $S; done
cat $S
