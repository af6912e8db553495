#!/usr/bin/env bash
# The thirtieth session's third call (H200): bench_gpu.py beside the peers,
# causal and full at D 128, 192 and 256, S 4096, B*S 16k, forward and
# backward, FA_AUTOTUNE=table, one round (the call's time). Run from the
# device tool with carry ["bundle"].
FA_AUTOTUNE=table FA_GPU_STAGES=bench FA_BENCH_TIME_LIMIT=420 FA_BENCH_TIMEOUT=480 \
  FA_BENCH_ARGS="--variants causal,full --seqs 4096 --head-dims 128,192,256 --impls fa,sdpa-cudnn,sdpa-flash2,flex --rounds 1" \
  scripts/gpu-run.sh $OUT > $OUT/gpu-run.log 2>&1
echo "rc=$? ${SECONDS}s"
tail -5 $OUT/gpu-run.log
cat $OUT/bench*.csv 2>/dev/null | cut -d, -f1-12 | head -40
