#!/usr/bin/env bash
# carry ["bundle"] as final.sh, with bundle/base-overlay.tar.xz (fa-run and
# libFARuntime of db0ea28, "o"): gpt-oss 2x64/8x8k forward and backward on
# the shipped table's configs (DEVICE_AUTOTUNE=table, as bench_gpu.py runs
# fa), old build against new, alternated, after one untimed run of each.
# The fiftieth session's call (280 s) ended after the old build's first
# timing; give it 450 s.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S o bundle/base-overlay.tar.xz || exit 1
SHAPE=2,64,8,8192,8192,64
export DEVICE_AUTOTUNE=table
for v in a o; do device_build_compile $v gpt_oss $SHAPE --backward & done
wait
echo "compiled (${SECONDS}s)" >> $S
for v in o a o a; do device_build_tflops $v gpt_oss $SHAPE --backward; done
cat $S
