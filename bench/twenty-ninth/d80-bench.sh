#!/usr/bin/env bash
# The twenty-ninth session's fourth call (H200): the D 80 default (three
# consumers, 112-key tiles) beside the peers, and the GQA check the third
# call's script got wrong (gqa_causal fixes 32/8 heads).
# 1. fa-run checks of gqa_causal at D 80 against float64;
# 2. bench_gpu.py: causal and full at D 80, 96 and 128, S 4096, B*S 16k,
#    fa with the shipped table (FA_AUTOTUNE=table) beside sdpa-cudnn,
#    sdpa-flash2 and flex, two rounds.
# Run from the device tool with carry ["bundle"].
S=$OUT/summary.txt; : > $S; W=/tmp/d80b; rm -rf $W; mkdir -p $W
FA_GPU_STAGES=none scripts/gpu-run.sh /tmp/g0 > /dev/null 2>&1
FA=/tmp/fa-bundle R=$FA/bin/fa-run
export LD_LIBRARY_PATH=$FA/lib
for dt in bf16 f16; do
  echo "gqa_causal $dt: $(FA_AUTOTUNE=0 timeout 150 $R kernels_spec/gqa_causal.mlir --target gpu --check --backward \
    --dtype $dt --shape '1,32,8,1500,1500,80;2,32,8,700,1100,80' 2>&1 | grep -oE ' o=[0-9.e+-]+| dq=[0-9.e+-]+|FAIL.*|rror.*' | tr '\n' ' ')" >> $S
done
FA_AUTOTUNE=table FA_GPU_STAGES=bench FA_BENCH_TIME_LIMIT=330 FA_BENCH_TIMEOUT=350 \
  FA_BENCH_ARGS="--variants causal,full --seqs 4096 --head-dims 80,96,128 --impls fa,sdpa-cudnn,sdpa-flash2,flex --rounds 2" \
  timeout 400 scripts/gpu-run.sh $W/b > /dev/null 2>&1
cp $W/b/bench.csv $OUT/bench-d80-96-128.csv; cp $W/b/bench*.log $OUT/ 2>/dev/null
cut -d, -f1,2,5,9,10,11,12,13 $OUT/bench-d80-96-128.csv >> $S
cat $S
