#!/usr/bin/env bash
# carry ["bundle"] (main with the 64-byte box bank fix): issue 14's D 80
# and 96 row (>= 0.85x fa's own D 128 backward rate at the same tokens,
# >= 1.0x the best SDPA backend), causal S 4k, beside cuDNN, one run.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S || exit 1
device_bench d80 ${1:-120} --variants causal --seqs 4096 --head-dims 80,96,128 \
  --impls fa,sdpa-cudnn --reps 20
echo "done ${SECONDS}s" >> $S
cat $S
