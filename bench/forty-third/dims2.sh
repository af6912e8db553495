#!/usr/bin/env bash
# carry ["bundle"]: full D 80 and 96 beside cuDNN and fa's D 128 after
# their table rows were made again (dQ by TMA reduce-adds).
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
device_bench dims2 150 --variants full --seqs 4096 \
  --head-dims 80,96,128 --impls fa,sdpa-cudnn --reps 20
echo "done ${SECONDS}s" >> $S
cat $S
