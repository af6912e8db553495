#!/usr/bin/env bash
# carry ["bundle"]: issue 14's head-dim bars (D 80, 96 and 256 against fa's
# own D 128 backward and the best SDPA backend), causal and full, S 4096,
# B·S 16k, beside cuDNN (bench_gpu.py, FA_AUTOTUNE=table), after the
# persistent dQ kernel (D <= 128) and the bound backward.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
device_bench dims 230 --variants causal,full --seqs 4096 \
  --head-dims 80,96,128,256 --impls fa,sdpa-cudnn --reps 20
echo "done ${SECONDS}s" >> $S
cat $S
