#!/usr/bin/env bash
# Issue 13's forward bars at D 64 on the H200 with the committed build,
# bench_gpu.py timing fa's forward after its background backward compile
# (fa.wait_for_compiles in the warm-up) and the shipped table: dense rows
# beside cuDNN (S 4k), the variants beside flex (S 8k); then probe.py's
# single / queued / kernel times for the same rows with --settle.
S=$OUT/summary.txt; : > $S; W=/tmp/bars; rm -rf $W; mkdir -p $W
FA_AUTOTUNE=table FA_GPU_STAGES=bench FA_BENCH_TIME_LIMIT=110 FA_BENCH_TIMEOUT=130 \
  FA_BENCH_ARGS="--variants causal,gqa-causal,full --seqs 4096 --head-dims 64 --impls fa,sdpa-cudnn" \
  timeout 140 scripts/gpu-run.sh $W/dense > /dev/null 2>&1
FA_AUTOTUNE=table FA_GPU_STAGES=bench FA_BENCH_TIME_LIMIT=200 FA_BENCH_TIMEOUT=220 \
  FA_BENCH_ARGS="--variants gpt-oss-window-128,window-1024+4-sinks,window-4096,gpt-oss-full --seqs 8192 --head-dims 64 --impls fa,flex" \
  timeout 230 scripts/gpu-run.sh $W/variants > /dev/null 2>&1
cp $W/dense/bench.csv $OUT/bench-dense.csv; cp $W/variants/bench.csv $OUT/bench-variants.csv
cut -d, -f1,2,5,9,10,11,12,13 $OUT/bench-dense.csv $OUT/bench-variants.csv >> $S
PYTHONPATH=/tmp/fa-python FA_CACHE_DIR=/tmp/c-probe timeout 120 python3 bench/twenty-sixth/probe.py --settle \
  --variants causal,full --seqs 4096 --impls fa,sdpa-cudnn 2>/dev/null | grep -v Warn | cut -c1-130 >> $S
cat $S
