#!/usr/bin/env bash
# The fortieth session's last call, on main's build with the retuned table
# rows (retune-d128.sh, retune-rest.sh; carry ["bundle"]): issue 14's dense
# bars beside cuDNN and flex (bench_gpu.py, FA_AUTOTUNE=table, bf16, B*S
# 16k, 20 single calls a row; causal, GQA causal, full at D 64 and 128, S
# 4k), as device_bars's first half.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
device_bench dense "${1:-200}" --variants causal,gqa-causal,full --seqs 4096 --head-dims 64,128 \
  --impls fa,sdpa-cudnn,flex --reps 20
echo "done ${SECONDS}s" >> $S
cat $S
