#!/usr/bin/env bash
# Issue 13's forward bars on the H200 with this session's build (narrow
# sink tile, two consumers under windows < 4096 at D 64), bench_gpu.py
# with the shipped table (FA_AUTOTUNE=table), fa settled after its first
# call: the variants beside flex at D 64 and D 128 (S 8k), the dense D 64
# rows beside cuDNN (S 4k). Backward columns come from the same rows.
S=$OUT/summary.txt; : > $S; W=/tmp/bars; rm -rf $W; mkdir -p $W
FA_AUTOTUNE=table FA_GPU_STAGES=bench FA_BENCH_TIME_LIMIT=200 FA_BENCH_TIMEOUT=220 \
  FA_BENCH_ARGS="--variants window-1024+4-sinks,window-4096,gpt-oss-full,gpt-oss-window-128 --seqs 8192 --head-dims 64 --impls fa,flex" \
  timeout 230 scripts/gpu-run.sh $W/v64 > /dev/null 2>&1
cp $W/v64/bench.csv $OUT/bench-variants-d64.csv
FA_AUTOTUNE=table FA_GPU_STAGES=bench FA_BENCH_TIME_LIMIT=150 FA_BENCH_TIMEOUT=170 \
  FA_BENCH_ARGS="--variants window-1024+4-sinks,window-4096,gpt-oss-full --seqs 8192 --head-dims 128 --impls fa,flex" \
  timeout 180 scripts/gpu-run.sh $W/v128 > /dev/null 2>&1
cp $W/v128/bench.csv $OUT/bench-variants-d128.csv
FA_AUTOTUNE=table FA_GPU_STAGES=bench FA_BENCH_TIME_LIMIT=110 FA_BENCH_TIMEOUT=130 \
  FA_BENCH_ARGS="--variants causal,gqa-causal,full --seqs 4096 --head-dims 64 --impls fa,sdpa-cudnn" \
  timeout 140 scripts/gpu-run.sh $W/dense > /dev/null 2>&1
cp $W/dense/bench.csv $OUT/bench-dense-d64.csv
cut -d, -f1,2,5,9,10,11,12,13 $OUT/bench-*.csv >> $S
cat $S
