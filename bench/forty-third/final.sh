#!/usr/bin/env bash
# carry ["bundle"]: the eager backward's gradients from one allocation:
# the torch tests on CUDA, then the gpt-oss rows and causal D 64 beside
# the peers (bench_gpu.py, FA_AUTOTUNE=table).
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
device_python /tmp/py.log || exit 1
device_torch_tests 240 "bound or repeated or against_float64 or deterministic or sink or grad"
echo "tests done ${SECONDS}s" >> $S
device_bench variants 200 --variants gpt-oss-full,gpt-oss-window-128 \
  --seqs 8192 --head-dims 64 --impls fa,flex --reps 20
device_bench dense 150 --variants causal --seqs 4096 --head-dims 64 \
  --impls fa,sdpa-cudnn --reps 20
python3 bench/bars.py "$OUT"/bench-*.csv >> "$S" 2>&1
echo "done ${SECONDS}s" >> $S
cat $S
