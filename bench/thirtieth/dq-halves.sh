#!/usr/bin/env bash
# The thirtieth session's sixth call (H200), a build with
# patches/dq-halves.patch: the dQ kernel at D 256 with its two consumers
# sharing 64 query rows (64-key tiles split between them, dS through shared
# memory, dQ's columns halved; before: 128 rows, 32-key tiles).
# 1. checks against float64, forward and backward, every masked spec at
#    D 256 (and causal D 192, whose dQ is unchanged) on odd shapes;
# 2. memcheck and racecheck of causal and streaming D 256 backward;
# 3. A/B of the backward (bench/twenty-third/ab.sh), FA_AUTOTUNE=0: the
#    bundle (new) against bundle/old-overlay.tar.xz (the column halves of
#    the dK/dV kernel alone, 9fa6db9) over it;
# 4. bench_gpu.py, D 256, S 4096, causal and full, beside cuDNN.
# Run from the device tool with carry ["bundle"].
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
checks() {
  for dt in bf16 f16; do
    echo "kernels_spec/causal.mlir|1,4,4,197,197,256;2,4,2,300,700,256;1,2,2,1000,1000,256|--backward --dtype $dt"
    echo "kernels_spec/mha.mlir|2,4,4,1000,777,256;1,4,4,63,1025,256|--backward --dtype $dt"
  done
  echo "kernels_spec/gqa_causal.mlir|1,32,8,700,1100,256|--backward --dtype bf16"
  echo "kernels_spec/swa.mlir|1,32,8,1500,1500,256|--backward --dtype bf16"
  echo "kernels_spec/streaming.mlir|1,8,8,2100,2100,256;2,4,4,300,300,256|--backward --dtype bf16"
  echo "kernels_spec/causal.mlir|2,4,2,300,700,192|--backward --dtype bf16"
}
device_checks /tmp/checks.log < <(checks)
for spec in causal streaming; do
  device_sanitize $spec 1,2,2,197,300,256 --backward
done
echo "before A/B: ${SECONDS}s" >> $S
AB_OVERLAY_A=bundle/old-overlay.tar.xz timeout $((330 - SECONDS)) bash bench/twenty-third/ab.sh 2 - \
  "causal|1,16,16,8192,8192,256 mha|2,16,16,4096,4096,256" >> $S 2>&1
echo "before bench: ${SECONDS}s" >> $S
FA_AUTOTUNE=table FA_GPU_STAGES=bench FA_BENCH_TIME_LIMIT=120 FA_BENCH_TIMEOUT=$((560 - SECONDS)) \
  FA_BENCH_ARGS="--variants causal,full --seqs 4096 --head-dims 256 --impls fa,sdpa-cudnn --rounds 1" \
  scripts/gpu-run.sh $OUT > $OUT/gpu-run.log 2>&1
device_bench_rows $OUT/bench.csv >> $S
echo "end: ${SECONDS}s" >> $S
cat $S
