#!/usr/bin/env bash
# The twenty-eighth session's second call (H200): the wgmma forward with a
# clock read pinned before each pipelined tile's P V wait (FA_EXP_PIN=1,
# an experiment switch of this build), so that ptxas keeps the softmax
# between the two waits (it otherwise hoists the P V wait to the row max).
# 1. checks against float64 with the pin: odd shapes, every head dim,
#    multi-item grids, bf16 and f16;
# 2. fa-run forward A/B, pin off / on, alternating processes, two rounds,
#    FA_AUTOTUNE=0.
# Run from the device tool with carry ["bundle"].
S=$OUT/summary.txt; : > $S; W=/tmp/pin; rm -rf $W; mkdir -p $W
FA_GPU_STAGES=none scripts/gpu-run.sh /tmp/g0 > /dev/null 2>&1
FA=/tmp/fa-bundle R=$FA/bin/fa-run
export LD_LIBRARY_PATH=$FA/lib
source /dev/stdin <<<"$(sed -n '/^check_jobs() {/,/^}/p' scripts/gpu-run.sh)"
checks() {
  for dt in bf16 f16; do
    echo "kernels_spec/causal.mlir|1,8,8,197,197,64;2,8,2,300,700,128;1,4,4,1000,1000,256|--dtype $dt"
    echo "kernels_spec/streaming.mlir|1,8,8,2100,2100,128;1,8,2,197,197,64|--dtype $dt"
  done
  for d in 32 80 96 192; do
    echo "kernels_spec/causal.mlir|1,8,2,1500,1500,$d;1,4,4,700,1100,$d|--dtype bf16"
  done
  echo "kernels_spec/gpt_oss.mlir|1,64,8,1000,1000,64;1,64,8,700,300,64|--dtype bf16"
  echo "kernels_spec/swa.mlir|1,32,8,3000,3000,64|--dtype bf16"
  echo "kernels_spec/mha.mlir|2,4,4,1000,777,128;1,8,8,63,1025,64|--dtype bf16"
  echo "kernels_spec/causal.mlir|2,32,8,1000,1000,64;2,16,4,1000,1000,128|--dtype bf16"
}
FA_EXP_PIN=1 FA_CACHE_DIR=/tmp/c-pin-check FA_CHECK_PREFIX="timeout 100" FA_CHECK_JOBS=8 \
  check_jobs $W/checks.log < <(checks) > /dev/null 2>&1
echo "checks (pin): $(grep -c '^== ' $W/checks.log) runs, $(grep -c FAILED $W/checks.log) failed" >> $S
grep -E "FAILED|error" $W/checks.log | head -20 >> $S
gzip -c $W/checks.log > $OUT/checks.log.gz
export FA_AUTOTUNE=0
cases="causal|4,32,32,4096,4096,64 mha|4,32,32,4096,4096,64 gpt_oss|2,64,8,8192,8192,64
causal|2,16,16,8192,8192,128 mha|4,16,16,4096,4096,128 gqa_causal|2,32,8,8192,8192,128
causal|2,16,16,8192,8192,80 causal|2,16,16,8192,8192,96 causal|2,8,8,8192,8192,256
streaming|2,32,32,8192,8192,64 swa|2,32,8,8192,8192,128"
for r in 1 2; do
  for c in $cases; do
    IFS='|' read -r spec shape <<< "$c"
    for m in off on; do
      pin=; [ $m = on ] && pin=1
      out=$(env ${pin:+FA_EXP_PIN=1} FA_CACHE_DIR=/tmp/ab-$m timeout 100 $R kernels_spec/$spec.mlir \
        --target gpu --dtype bf16 --repeat 30 --shape $shape 2>&1 |
        grep -oE 'fwd_tflops=[0-9.]+|error.*' | tr '\n' ' ')
      echo "r$r $spec $shape $m $out" >> $S
    done
  done
done
cat $S
