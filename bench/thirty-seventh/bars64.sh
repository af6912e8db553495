#!/usr/bin/env bash
# Issue 13's and 14's D 64 bars after 128-row dK/dV query tiles (2e38f41;
# carry ["bundle"] packed there): bench_gpu.py with FA_AUTOTUNE=table,
# bf16, B*S 16k, 20 single calls per row, dense D 64 at S 4k against cuDNN
# and flex, the windowed and gpt-oss variants at D 64, S 8k, against flex
# (the thirty-sixth session's bars.sh at D 64); bench/bars.py over the
# CSVs. Then the gpt-oss layers' backward with dQ's own kernel (128-row
# tiles) against dQ by TMA reduce-adds (64-row tiles; the shipped table's
# choice for the window-128 layer), fa-run, FA_AUTOTUNE=0.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
device_bench dense 200 --variants causal,gqa-causal,full --seqs 4096 --head-dims 64 --impls fa,sdpa-cudnn,flex --reps 20
device_bench variants 230 --variants window-4096,window-1024+4-sinks,gpt-oss-full,gpt-oss-window-128 --seqs 8192 --head-dims 64 --impls fa,flex --reps 20
python3 bench/bars.py $OUT/bench-*.csv >> $S 2>&1
for flags in "" "--dq-atomics"; do
  echo "gpt_oss 2,64,8,8192,8192,64 backward $flags: $(device_tflops gpt_oss 2,64,8,8192,8192,64 --backward $flags)" >> $S
done
echo "done ${SECONDS}s" >> $S
cat $S
