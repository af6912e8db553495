#!/usr/bin/env bash
# The twenty-eighth session's third call (H200):
# 1. the wgmma forward without the zero-P P V at each item's first
#    pipelined tile (FA_EXP_BRANCH=1, an experiment switch of this build:
#    a uniform branch around the P V group, the wait count chosen by the
#    same branch): checks against float64, then fa-run forward A/B against
#    the default, alternating processes, FA_AUTOTUNE=0;
# 2. the GPU conformance grid on the default build, with the time left.
# Run from the device tool with carry ["bundle"].
START=$SECONDS
S=$OUT/summary.txt; : > $S; W=/tmp/zp; rm -rf $W; mkdir -p $W
FA_GPU_STAGES=none scripts/gpu-run.sh /tmp/g0 > /dev/null 2>&1
FA=/tmp/fa-bundle R=$FA/bin/fa-run M=bench/twenty-sixth/windows_wgmma.mlir
export LD_LIBRARY_PATH=$FA/lib
source /dev/stdin <<<"$(sed -n '/^check_jobs() {/,/^}/p' scripts/gpu-run.sh)"
checks() {
  echo "kernels_spec/streaming.mlir|1,8,8,2100,2100,128;1,8,2,197,197,64;2,4,4,300,1300,64|--dtype bf16"
  echo "kernels_spec/streaming.mlir|1,32,8,3000,3000,64;1,16,16,2100,2100,128|--dtype f16"
  echo "kernels_spec/causal.mlir|2,32,8,1000,1000,64;1,4,4,1000,1000,256;1,8,2,1500,1500,80|--dtype bf16"
  echo "kernels_spec/swa.mlir|1,32,8,3000,3000,64|--dtype bf16"
  echo "kernels_spec/gpt_oss.mlir|1,64,8,1000,1000,64|--dtype bf16"
}
FA_EXP_BRANCH=1 FA_CACHE_DIR=/tmp/c-zp-check FA_CHECK_PREFIX="timeout 100" FA_CHECK_JOBS=5 \
  check_jobs $W/checks.log < <(checks) > /dev/null 2>&1
echo "checks (branch): $(grep -c '^== ' $W/checks.log) runs, $(grep -c FAILED $W/checks.log) failed ($((SECONDS-START)) s)" >> $S
grep -E "FAILED|error" $W/checks.log | head -10 >> $S
gzip -c $W/checks.log > $OUT/checks.log.gz
export FA_AUTOTUNE=0
cases="w512|$M|2,32,32,8192,8192,64 w1024s4|$M|2,32,32,8192,8192,64 w4096|$M|2,32,32,8192,8192,64
causal|kernels_spec/causal.mlir|4,32,32,4096,4096,64 causal|kernels_spec/causal.mlir|2,16,16,8192,8192,128
gpt_oss_full|kernels_spec/gpt_oss.mlir|2,64,8,8192,8192,64"
for r in 1 2; do
  for c in $cases; do
    IFS='|' read -r kernel file shape <<< "$c"
    for m in off on; do
      [ $((SECONDS-START)) -gt 300 ] && break 3
      exp=; [ $m = on ] && exp=1
      out=$(env ${exp:+FA_EXP_BRANCH=1} FA_CACHE_DIR=/tmp/ab-$m timeout 60 $R $file --kernel $kernel \
        --target gpu --dtype bf16 --repeat 30 --shape $shape 2>&1 |
        grep -oE 'fwd_tflops=[0-9.]+|error.*' | tr '\n' ' ')
      echo "r$r $kernel $shape $m $out" >> $S
    done
  done
done
left=$((570 - (SECONDS-START)))
echo "conformance: ${left} s left" >> $S
FA_CONFORMANCE_TIMEOUT=$left FA_GPU_STAGES=conformance scripts/gpu-run.sh $OUT/conf > /dev/null 2>&1
tail -n 8 $OUT/conf/conformance.log >> $S
gzip -f $OUT/conf/conformance.log
cat $S
