#!/usr/bin/env bash
# carry ["bundle"] (15e5446's C++ but the mends). Where gpt-oss-full's
# forward stands against the same shape without its mask, GQA and sinks
# (fa-run on the shipped table's configs, two rounds), ncu of its kernel
# and of the unmasked one, then issue 13's and 14's D 80/96/256 rows
# beside D 128 (bench_gpu.py, fa, cuDNN, FA2). (The call ran the ncu steps
# written out, before device.sh's device_ncu_forward.)
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S || exit 1
export DEVICE_AUTOTUNE=table DEVICE_CACHE_DIR=/tmp/c-table
CASES=("mha 2,64,64,8192,8192,64" "causal 2,64,64,8192,8192,64"
       "gqa_causal 4,32,8,8192,8192,64" "gpt_oss 2,64,8,8192,8192,64")
for c in "${CASES[@]}"; do
  # shellcheck disable=SC2086
  device_fa_run 200 $c > /dev/null 2>&1 &
done
wait
echo "compiled (${SECONDS}s)" >> $S
for round in 1 2; do
  for c in "${CASES[@]}"; do
    # shellcheck disable=SC2086
    echo "$c: $(device_tflops $c) (${SECONDS}s)" >> $S
  done
done
device_ncu_forward ncu-gptoss-full gpt_oss_full_forward_wgmma_d64$ gpt_oss 2,64,8,8192,8192,64
device_ncu_forward ncu-mha-d64 mha_forward_wgmma_d64$ mha 2,64,64,8192,8192,64
device_bench dims 200 --variants causal,full --seqs 4096 --head-dims 80,96,128,256 \
  --impls fa,sdpa-cudnn,sdpa-flash2 --reps 20
python3 bench/bars.py "$OUT"/bench-dims.csv >> $S 2>&1
echo "done (${SECONDS}s)" >> $S
cat $S
