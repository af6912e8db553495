#!/usr/bin/env bash
# The twenty-ninth session's first call (H200): part of the forward
# softmax's exponentials as FMA polynomials (FA_EXP_POLY=k, an experiment
# switch of this build: k of every eight 8-key column tiles take exp2Poly
# instead of MUFU.EX2).
# 1. checks against float64 with k = 3: odd shapes, several head
#    dims, masks, sinks, bf16 and f16;
# 2. ncu pipe utilisation of causal D 80 at k = 0 and 2;
# 3. fa-run forward A/B over k = 0, 1, 2, 3, alternating processes,
#    FA_AUTOTUNE=0; a second round while the call has time.
# Run from the device tool with carry ["bundle"].
S=$OUT/summary.txt; : > $S; W=/tmp/poly; rm -rf $W; mkdir -p $W
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
}
for k in 3; do
  FA_EXP_POLY=$k FA_CACHE_DIR=/tmp/c-poly$k-check FA_CHECK_PREFIX="timeout 100" FA_CHECK_JOBS=8 \
    check_jobs $W/checks$k.log < <(checks) > /dev/null 2>&1
  echo "checks (k=$k): $(grep -c '^== ' $W/checks$k.log) runs, $(grep -c FAILED $W/checks$k.log) failed" >> $S
  grep -E "FAILED|error" $W/checks$k.log | head -20 >> $S
  grep -ohE "max rel[^,]*|rel[a-z. ]*err[a-z]*[ =:]+[0-9.e+-]+" $W/checks$k.log | sort | uniq -c | sort -rn | head -5 >> $S
  gzip -c $W/checks$k.log > $OUT/checks$k.log.gz
done
export FA_AUTOTUNE=0
for k in 0 2; do
  FA_EXP_POLY=$k FA_CACHE_DIR=/tmp/ab-$k timeout 150 ncu --kernel-name regex:'_forward_wgmma_d[0-9]+$' \
    --launch-count 1 --metrics 'regex:sm__inst_executed_pipe_[a-z_]+\.avg\.pct_of_peak_sustained_active$,regex:sm__pipe_[a-z_]+_cycles_active\.avg\.pct_of_peak_sustained_active$,sm__issue_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum' \
    $R kernels_spec/causal.mlir --target gpu --dtype bf16 --shape 2,16,16,8192,8192,80 > $OUT/ncu-d80-k$k.log 2>&1
  grep -E "pct|duration" $OUT/ncu-d80-k$k.log | awk -v k=$k '$NF+0 > 1 {print "ncu k=" k, $0}' >> $S
done
cases="causal|4,32,32,4096,4096,64 mha|4,32,32,4096,4096,64 causal|2,16,16,8192,8192,80
mha|4,16,16,4096,4096,80 causal|2,16,16,8192,8192,96 causal|2,16,16,8192,8192,128
streaming|2,32,32,8192,8192,64 gpt_oss|2,64,8,8192,8192,64"
for r in 1 2; do
  [ $r = 2 ] && [ $SECONDS -gt 400 ] && break
  for c in $cases; do
    IFS='|' read -r spec shape <<< "$c"
    for k in 0 1 2 3; do
      out=$(FA_EXP_POLY=$k FA_CACHE_DIR=/tmp/ab-$k timeout 100 $R kernels_spec/$spec.mlir \
        --target gpu --dtype bf16 --repeat 30 --shape $shape 2>&1 |
        grep -oE 'fwd_tflops=[0-9.]+|error.*' | tr '\n' ' ')
      echo "r$r $spec $shape k=$k $out" >> $S
    done
  done
done
cat $S
