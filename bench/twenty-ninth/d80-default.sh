#!/usr/bin/env bash
# The twenty-ninth session's third call (H200): the new default at D 80
# (three consumer warpgroups, 112-key tiles; wgmmaGroupsFor,
# wgmmaDefaultBlockN).
# 1. checks against float64, forward and backward, every spec at D 80 on
#    odd shapes, bf16 and f16; memcheck and racecheck of causal D 80;
# 2. fa-run forward, FA_AUTOTUNE=0: D 80 against D 128 at the same tokens;
# 3. bench_gpu.py beside the peers: causal and full, D 80, 96, 128, S 4096,
#    B*S 16k, FA_AUTOTUNE=table.
# Run from the device tool with carry ["bundle"].
S=$OUT/summary.txt; : > $S; W=/tmp/d80; rm -rf $W; mkdir -p $W
FA_GPU_STAGES=none scripts/gpu-run.sh /tmp/g0 > /dev/null 2>&1
FA=/tmp/fa-bundle R=$FA/bin/fa-run
export LD_LIBRARY_PATH=$FA/lib
source /dev/stdin <<<"$(sed -n '/^check_jobs() {/,/^}/p' scripts/gpu-run.sh)"
checks() {
  for dt in bf16 f16; do
    echo "kernels_spec/causal.mlir|1,8,8,197,197,80;2,8,2,300,700,80;1,4,4,1000,1000,80|--dtype $dt"
    echo "kernels_spec/mha.mlir|2,4,4,1000,777,80;1,8,8,63,1025,80|--dtype $dt"
  done
  echo "kernels_spec/gqa_causal.mlir|2,16,4,1500,1500,80;1,8,2,700,1100,80|--dtype bf16"
  echo "kernels_spec/swa.mlir|1,32,8,3000,3000,80;1,8,2,5000,5000,80|--dtype bf16"
  echo "kernels_spec/gpt_oss.mlir|1,64,8,1000,1000,80;1,64,8,700,300,80|--dtype bf16"
  echo "kernels_spec/streaming.mlir|1,8,8,2100,2100,80|--dtype bf16"
  echo "kernels_spec/vit.mlir|2,12,12,197,197,80|--dtype bf16"
  echo "kernels_spec/causal.mlir|3,16,16,4000,4000,80|--dtype bf16"
}
FA_CACHE_DIR=/tmp/c-check FA_CHECK_PREFIX="timeout 150" FA_CHECK_JOBS=8 \
  check_jobs $W/checks.log < <(checks) > /dev/null 2>&1
echo "checks: $(grep -c '^== ' $W/checks.log) runs, $(grep -c FAILED $W/checks.log) failed" >> $S
grep -E "FAILED|rror" $W/checks.log | head -20 >> $S
gzip -c $W/checks.log > $OUT/checks.log.gz
for tool in memcheck racecheck; do
  FA_CACHE_DIR=/tmp/c-check FA_AUTOTUNE=0 timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 \
    $R kernels_spec/causal.mlir --target gpu --dtype bf16 --check --shape 1,4,2,1000,1000,80 > $W/san-$tool.log 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $W/san-$tool.log | tr '\n' ' ')" >> $S
done
export FA_AUTOTUNE=0
for r in 1 2; do
  for c in causal\|2,16,16,8192,8192,80 mha\|4,16,16,4096,4096,80 gqa_causal\|2,32,8,8192,8192,80 \
      causal\|2,16,16,8192,8192,128 mha\|4,16,16,4096,4096,128; do
    IFS='|' read -r spec shape <<< "$c"
    echo "r$r $spec $shape $(FA_CACHE_DIR=/tmp/c-ab timeout 100 $R kernels_spec/$spec.mlir --target gpu \
      --dtype bf16 --repeat 30 --shape $shape 2>&1 | grep -oE 'fwd_tflops=[0-9.]+|rror.*' | tr '\n' ' ')" >> $S
  done
done
echo "before bench: ${SECONDS}s" >> $S
FA_AUTOTUNE=table timeout $((540 - SECONDS)) python3 bench/bench_gpu.py --csv $OUT/bench-d80.csv \
  --variants causal,full --head-dims 80,96,128 --seqs 4096 \
  --impls fa,sdpa-cudnn,sdpa-flash2,flex --rounds 2 > $OUT/bench.log 2>&1
echo "bench rc=$?" >> $S
cat $S
