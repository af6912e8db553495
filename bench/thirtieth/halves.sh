#!/usr/bin/env bash
# The thirtieth session's first call (H200): the wgmma dK/dV kernel past
# D 128 with the two consumers sharing 64 keys and halving dK's and dV's
# columns (P^T and dS^T through shared memory), against the build before
# it (parts of 64 columns, S^T and dP^T recomputed per part).
# 1. checks against float64, forward and backward, every masked spec at
#    D 192 and 256 on odd shapes, bf16 and f16;
# 2. memcheck and racecheck of causal D 192 and 256 backward;
# 3. A/B of the backward (ab.sh), FA_AUTOTUNE=0: the bundle (new) against
#    the overlay $AB_OVERLAY_A (old) over it.
# Run from the device tool with carry ["bundle"]; bundle/old-overlay.tar.xz
# is the old build's bin/fa-run and lib/libFARuntime.so.22.1.
S=$OUT/summary.txt; : > $S; W=/tmp/halves; rm -rf $W; mkdir -p $W
FA_GPU_STAGES=none scripts/gpu-run.sh /tmp/g0 > /dev/null 2>&1
FA=/tmp/fa-bundle R=$FA/bin/fa-run
export LD_LIBRARY_PATH=$FA/lib
source /dev/stdin <<<"$(sed -n '/^check_jobs() {/,/^}/p' scripts/gpu-run.sh)"
checks() {
  for d in 192 256; do
    for dt in bf16 f16; do
      echo "kernels_spec/causal.mlir|1,4,4,197,197,$d;2,4,2,300,700,$d;1,2,2,1000,1000,$d|--backward --dtype $dt"
      echo "kernels_spec/mha.mlir|2,4,4,1000,777,$d;1,4,4,63,1025,$d|--backward --dtype $dt"
    done
    echo "kernels_spec/gqa_causal.mlir|1,32,8,700,1100,$d|--backward --dtype bf16"
    echo "kernels_spec/swa.mlir|1,32,8,1500,1500,$d|--backward --dtype bf16"
    echo "kernels_spec/streaming.mlir|1,8,8,2100,2100,$d|--backward --dtype bf16"
  done
}
FA_CACHE_DIR=/tmp/c-check FA_CHECK_PREFIX="timeout 150" FA_CHECK_JOBS=8 \
  check_jobs $W/checks.log < <(checks) > /dev/null 2>&1
echo "checks: $(grep -c '^== ' $W/checks.log) runs, $(grep -c FAILED $W/checks.log) failed (${SECONDS}s)" >> $S
grep -E "FAILED|rror" $W/checks.log | head -20 >> $S
gzip -c $W/checks.log > $OUT/checks.log.gz
for d in 192 256; do
  for tool in memcheck racecheck; do
    FA_CACHE_DIR=/tmp/c-check FA_AUTOTUNE=0 timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 \
      $R kernels_spec/causal.mlir --target gpu --dtype bf16 --check --backward --shape 1,2,1,197,300,$d > $W/san-$tool-$d.log 2>&1
    echo "D $d $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $W/san-$tool-$d.log | tr '\n' ' ')" >> $S
  done
done
echo "before A/B: ${SECONDS}s" >> $S
AB_OVERLAY_A=bundle/old-overlay.tar.xz timeout $((560 - SECONDS)) bash bench/twenty-third/ab.sh 2 - \
  "causal|2,16,16,8192,8192,256 causal|2,16,16,8192,8192,192 mha|4,16,16,4096,4096,256 gqa_causal|2,32,8,8192,8192,256 causal|2,16,16,8192,8192,128" \
  > $W/ab.log 2>&1
cat $W/ab.log >> $S
cat $S
