#!/usr/bin/env bash
# Issue 13's forward bars beside the peers in one call (bench_gpu.py,
# FA_AUTOTUNE unset: the shipped table, as users get it; bf16, B*S 16k):
# causal, GQA-causal and full at D 64 and 128, S 4k, against cuDNN and
# flex; the windowed and gpt-oss variants at D 64, S 8k, against flex.
FA_GPU_STAGES=bench FA_BENCH_TIME_LIMIT=270 FA_BENCH_TIMEOUT=290 FA_BENCH_ARGS="--variants causal,gqa-causal,full --seqs 4096 --head-dims 64,128 --impls fa,sdpa-cudnn,flex" \
  timeout 300 scripts/gpu-run.sh /tmp/b1 > /tmp/b1.out 2>&1
cp /tmp/b1/bench.csv $OUT/bench-dense.csv; cp /tmp/b1/bench.log $OUT/bench-dense.log 2>/dev/null
FA_GPU_STAGES=bench FA_BENCH_TIME_LIMIT=230 FA_BENCH_TIMEOUT=250 FA_BENCH_ARGS="--variants window-4096,window-1024+4-sinks,gpt-oss-full,gpt-oss-window-128 --seqs 8192 --head-dims 64 --impls fa,flex" \
  timeout 260 scripts/gpu-run.sh /tmp/b2 > /tmp/b2.out 2>&1
cp /tmp/b2/bench.csv $OUT/bench-variants.csv; cp /tmp/b2/bench.log $OUT/bench-variants.log 2>/dev/null
cat $OUT/bench-dense.csv $OUT/bench-variants.csv | cut -d, -f1-14
