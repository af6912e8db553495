#!/usr/bin/env bash
# gpt-oss's sliding layer (window 128, sinks, D 64, S 8k) beside flex in
# one call, bench_gpu.py, bf16, B*S 16k, 20 single calls: fa on the table
# 2e38f41 shipped (its backward: dQ by TMA reduce-adds, 64-row tiles),
# fa with FA_AUTOTUNE=0 (the compiler's tiles: dQ's own kernel, 128-row
# dK/dV tiles: the retuned table's choice), flex. Carry ["bundle"] at 2e38f41.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
for mode in table 0; do
  impls=fa; [ $mode = table ] && impls=fa,flex
  FA_AUTOTUNE=$mode FA_GPU_STAGES=bench FA_BENCH_TIME_LIMIT=100 FA_BENCH_TIMEOUT=120 \
    FA_BENCH_ARGS="--variants gpt-oss-window-128 --seqs 8192 --head-dims 64 --impls $impls --reps 20" \
    timeout 130 scripts/gpu-run.sh /tmp/w-$mode > /tmp/w-$mode.out 2>&1
  cp /tmp/w-$mode/bench.csv $OUT/bench-w128-autotune-$mode.csv
  echo "== FA_AUTOTUNE=$mode (${SECONDS}s)" >> $S
  device_bench_rows $OUT/bench-w128-autotune-$mode.csv >> $S 2>&1
done
echo "done ${SECONDS}s" >> $S
cat $S
