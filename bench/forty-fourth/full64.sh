#!/usr/bin/env bash
# carry ["bundle"]: full D 64 beside cuDNN with the table's new full D 64
# rows (dQ's kernel, which computes D).
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
device_bench full64 100 --variants full,causal --seqs 4096 --head-dims 64 --impls fa,sdpa-cudnn --reps 20
echo "done ${SECONDS}s" >> $S
cat $S
