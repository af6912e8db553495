#!/usr/bin/env bash
# The thirtieth session's fifth call (H200): bench_gpu.py at D 256, S 1024
# and 16384 (B*S 16k), causal and full, beside cuDNN and FA2, one round.
# Run from the device tool with carry ["bundle"].
FA_AUTOTUNE=table FA_GPU_STAGES=bench FA_BENCH_TIME_LIMIT=170 FA_BENCH_TIMEOUT=200 \
  FA_BENCH_ARGS="--variants causal,full --seqs 1024,16384 --head-dims 256 --impls fa,sdpa-cudnn,sdpa-flash2 --rounds 1" \
  scripts/gpu-run.sh $OUT > $OUT/gpu-run.log 2>&1
echo "rc=$? ${SECONDS}s"
python3 - $OUT/bench.csv <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print(r['impl'].ljust(12), r['variant'].ljust(7), r['d'], r['s'], r['fwd_tflops'], r['bwd_tflops'], r['status'])
PY
