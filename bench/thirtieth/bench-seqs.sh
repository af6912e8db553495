#!/usr/bin/env bash
# The thirtieth session's fifth call (H200): bench_gpu.py at D 256, S 1024
# and 16384 (B*S 16k), causal and full, beside cuDNN and FA2, one round.
# Run from the device tool with carry ["bundle"].
source bench/lib/device.sh
FA_AUTOTUNE=table FA_GPU_STAGES=bench FA_BENCH_TIME_LIMIT=170 FA_BENCH_TIMEOUT=200 \
  FA_BENCH_ARGS="--variants causal,full --seqs 1024,16384 --head-dims 256 --impls fa,sdpa-cudnn,sdpa-flash2 --rounds 1" \
  scripts/gpu-run.sh $OUT > $OUT/gpu-run.log 2>&1
echo "rc=$? ${SECONDS}s"
device_bench_rows $OUT/bench.csv
