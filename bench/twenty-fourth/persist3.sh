#!/usr/bin/env bash
# Persistent wgmma forward beside the peers (bench_gpu.py, D 128, S 4k,
# B*S 16k, FA_AUTOTUNE=table), then the A/B cases persist2.sh did not
# reach (gpt-oss and full D 64, forward) against $1.
FA_AUTOTUNE=table FA_GPU_STAGES=bench FA_BENCH_ARGS="--variants causal,gqa-causal,full --seqs 4096 --head-dims 128 --impls fa,sdpa-cudnn,sdpa-flash2,flex --rounds 2" \
  timeout 150 scripts/gpu-run.sh /tmp/p3 > /tmp/p3.out 2>&1
cp /tmp/p3/bench.csv $OUT/bench-d128.csv; tail -5 /tmp/p3.out > $OUT/bench.out
AB_FLAGS= timeout 70 bash bench/twenty-third/ab.sh 1 "$1" \
  "gpt_oss|2,64,8,4096,4096,64 mha|4,32,32,4096,4096,64" | tee $OUT/ab.txt
