#!/usr/bin/env bash
# w128-bench.sh's two fa modes again, alternating (0, table, 0, table), fa
# alone: gpt-oss's sliding layer, bench_gpu.py, 20 single calls a row.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
for mode in 0 table 0 table; do
  FA_AUTOTUNE=$mode FA_GPU_STAGES=bench FA_BENCH_TIME_LIMIT=60 FA_BENCH_TIMEOUT=80 \
    FA_BENCH_ARGS="--variants gpt-oss-window-128 --seqs 8192 --head-dims 64 --impls fa --reps 20" \
    timeout 90 scripts/gpu-run.sh /tmp/w-$mode > /tmp/w-$mode.out 2>&1
  echo "FA_AUTOTUNE=$mode (${SECONDS}s) $(device_bench_rows /tmp/w-$mode/bench.csv 2>&1)" >> $S
done
echo "done ${SECONDS}s" >> $S
cat $S
