#!/usr/bin/env bash
# The thirty-sixth session's second call, on main's build (carry
# ["bundle"]): wider key tiles at D 192 and 256 (FlashAttention-4's sm_90
# tiles: 128 x 80 at D 256, 128 x 112 at D 192), fa-run --mma-block-n
# against the compiler's 64, forward TFLOP/s (--repeat 30, FA_AUTOTUNE=0),
# configs alternated per case, two rounds; checks of the wider tiles
# against float64; then issue 13's D 80/96/256 row beside the SDPA
# backends (bench_gpu.py, the shipped table); and issue 18's window-128
# decode at cache lengths 128 to 128k (bench_decode.py).
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
{
  for n in 80 96; do
    echo "kernels_spec/causal.mlir|2,8,8,1000,1000,256;1,4,4,197,197,256|--dtype bf16 --mma-block-n $n"
    echo "kernels_spec/mha.mlir|1,4,4,1000,777,256;2,4,4,333,1000,256|--dtype bf16 --mma-block-n $n"
    echo "kernels_spec/swa.mlir|1,32,8,3000,3000,256|--dtype bf16 --mma-block-n $n"
    echo "kernels_spec/streaming.mlir|1,8,8,2100,2100,256|--dtype f16 --mma-block-n $n"
  done
  for n in 96 112; do
    echo "kernels_spec/causal.mlir|2,8,8,1000,1000,192;1,4,4,197,197,192|--dtype bf16 --mma-block-n $n"
    echo "kernels_spec/mha.mlir|1,4,4,1000,777,192|--dtype f16 --mma-block-n $n"
    echo "kernels_spec/gqa_causal.mlir|1,32,8,333,333,192|--dtype bf16 --mma-block-n $n"
  done
} | device_checks /tmp/checks-wide.log
T=$OUT/timings.txt
for round in 1 2; do
  for c in "mha 4,8,8,4096,4096,256" "causal 4,8,8,4096,4096,256" "causal 2,8,8,8192,8192,256" \
           "mha 4,8,8,4096,4096,192" "causal 4,8,8,4096,4096,192" "swa 2,32,8,8192,8192,256"; do
    set -- $c; d=${2##*,}
    confs=(64 80 96); [ $d = 192 ] && confs=(64 96 112)
    [ $round = 2 ] && confs=($(printf '%s\n' "${confs[@]}" | tac))
    for n in "${confs[@]}"; do
      echo "r$round $1 $2 n$n $(device_fwd_tflops $1 $2 --mma-block-n $n)" >> $T
    done
  done
  echo "round $round done (${SECONDS}s)" >> $S
done
cat $T >> $S
FA_AUTOTUNE=table FA_GPU_STAGES=bench FA_BENCH_TIME_LIMIT=90 FA_BENCH_TIMEOUT=110 \
  FA_BENCH_ARGS="--variants full,causal --seqs 4096 --head-dims 256,192 --impls fa,sdpa-cudnn,sdpa-flash2" \
  timeout 120 scripts/gpu-run.sh /tmp/dims > /tmp/dims.out 2>&1
cp /tmp/dims/bench.csv $OUT/bench-dims.csv 2>/dev/null
echo "== dims (${SECONDS}s)" >> $S; device_bench_rows $OUT/bench-dims.csv >> $S 2>&1
# Issue 18's window-128 bar: a step against a 128-key cache's, at any length.
FA_GPU_STAGES=decode FA_BENCH_TIME_LIMIT=80 \
  FA_DECODE_ARGS="--models gpt-oss_window_128 --batches 1,8 --caches 128,1024,32768,131072" \
  timeout 110 scripts/gpu-run.sh /tmp/w128 > /tmp/w128.log 2>&1; cp /tmp/w128/decode.log $OUT/decode-w128.log
echo "== window-128 decode (${SECONDS}s)" >> $S; grep -E "GB/s|copy|limit|rror|us" $OUT/decode-w128.log | tail -14 >> $S
echo "done ${SECONDS}s" >> $S
cat $S
