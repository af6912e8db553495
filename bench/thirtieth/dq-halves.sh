#!/usr/bin/env bash
# The thirtieth session's sixth call (H200): the dQ kernel at D 256 with its
# two consumers sharing 64 query rows (64-key tiles split between them,
# dS through shared memory, dQ's columns halved; before: 128 rows, 32-key
# tiles).
# 1. checks against float64, forward and backward, every masked spec at
#    D 256 (and causal D 192, whose dQ is unchanged) on odd shapes;
# 2. memcheck and racecheck of causal and streaming D 256 backward;
# 3. A/B of the backward (bench/twenty-third/ab.sh), FA_AUTOTUNE=0: the
#    bundle (new) against bundle/old-overlay.tar.xz (the column halves of
#    the dK/dV kernel alone, 9fa6db9) over it;
# 4. bench_gpu.py, D 256, S 4096, causal and full, beside cuDNN.
# Run from the device tool with carry ["bundle"].
S=$OUT/summary.txt; : > $S; W=/tmp/dqh; rm -rf $W; mkdir -p $W
FA_GPU_STAGES=none scripts/gpu-run.sh /tmp/g0 > /dev/null 2>&1
FA=/tmp/fa-bundle R=$FA/bin/fa-run
export LD_LIBRARY_PATH=$FA/lib
source /dev/stdin <<<"$(sed -n '/^check_jobs() {/,/^}/p' scripts/gpu-run.sh)"
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
FA_CACHE_DIR=/tmp/c-check FA_CHECK_PREFIX="timeout 150" FA_CHECK_JOBS=8 \
  check_jobs $W/checks.log < <(checks) > /dev/null 2>&1
echo "checks: $(grep -c '^== ' $W/checks.log) runs, $(grep -c FAILED $W/checks.log) failed (${SECONDS}s)" >> $S
grep -E "FAILED|rror" $W/checks.log | head -20 >> $S
gzip -c $W/checks.log > $OUT/checks.log.gz
for spec in causal streaming; do
  for tool in memcheck racecheck; do
    FA_CACHE_DIR=/tmp/c-check FA_AUTOTUNE=0 timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 \
      $R kernels_spec/$spec.mlir --target gpu --dtype bf16 --check --backward --shape 1,2,2,197,300,256 > $W/san-$tool-$spec.log 2>&1
    echo "$spec D 256 $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $W/san-$tool-$spec.log | tr '\n' ' ')" >> $S
  done
done
echo "before A/B: ${SECONDS}s" >> $S
AB_OVERLAY_A=bundle/old-overlay.tar.xz timeout $((330 - SECONDS)) bash bench/twenty-third/ab.sh 2 - \
  "causal|1,16,16,8192,8192,256 mha|2,16,16,4096,4096,256" > $W/ab.log 2>&1
cat $W/ab.log >> $S
echo "before bench: ${SECONDS}s" >> $S
FA_AUTOTUNE=table FA_GPU_STAGES=bench FA_BENCH_TIME_LIMIT=120 FA_BENCH_TIMEOUT=$((560 - SECONDS)) \
  FA_BENCH_ARGS="--variants causal,full --seqs 4096 --head-dims 256 --impls fa,sdpa-cudnn --rounds 1" \
  scripts/gpu-run.sh $OUT > $OUT/gpu-run.log 2>&1
python3 - $OUT/bench.csv <<'PY' >> $S
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print(r['impl'].ljust(12), r['variant'].ljust(7), r['d'], r['s'], r['fwd_tflops'], r['bwd_tflops'], r['status'])
PY
echo "end: ${SECONDS}s" >> $S
cat $S
