#!/usr/bin/env bash
# carry ["bundle"] (the fiftieth session's bundle of a29e172): issue 13's
# and 14's gpt-oss window-128 rows (bench_gpu.py, fa on the shipped table
# and flex, bf16, 2x64/8x8k, 20 single calls a row), to see whether the fiftieth session's 1.28x / 1.34x flex (1.46x / 1.66x the
# session before) is the machine's spread or the build's.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S || exit 1
device_bench w128 120 --variants gpt-oss-window-128 --seqs 8192 --head-dims 64 \
  --impls fa,flex --reps 20
python3 bench/bars.py "$OUT"/bench-w128.csv >> $S 2>&1
cat $S
