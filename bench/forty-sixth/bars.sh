#!/usr/bin/env bash
# carry ["bundle"]: issue 14's dense rows on the landed build (the dQ
# tile's stores without bank conflicts, the faster zero and copy kernels),
# beside cuDNN and flex in one run (bench_gpu.py, shipped table).
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S || exit 1
device_bench dense 330 --variants causal,full,gqa-causal --seqs 4096 --head-dims 64,128 \
  --impls fa,sdpa-cudnn --reps 20
echo "done ${SECONDS}s" >> $S
cat $S
