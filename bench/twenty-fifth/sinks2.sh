#!/usr/bin/env bash
# Sink tokens at D 64 on two consumer warpgroups (overlay $1) rather than
# three (the bundle): checks against float64 of the streaming spec at D 64
# (bf16 and f16, odd shapes, forward and backward) and D 32, then a
# forward A/B (fa-run, FA_AUTOTUNE=0: the compiler's default groups).
S=$OUT/summary.txt
FA_BUNDLE_OVERLAY=$1 FA_CHECK_PREFIX="timeout 100" FA_GPU_STAGES=checks FA_CHECK_JOBS=6 FA_CHECKS="kernels_spec/streaming.mlir|1,16,16,2100,2100,64;2,8,2,1000,1333,64|--dtype bf16
kernels_spec/streaming.mlir|1,16,16,2100,2100,64|--dtype f16
kernels_spec/streaming.mlir|1,16,4,3000,3000,32|--dtype bf16" timeout 150 scripts/gpu-run.sh /tmp/s2 > /dev/null 2>&1
echo "checks: $(grep -c '^== ' /tmp/s2/checks.log) runs, $(grep -c FAILED /tmp/s2/checks.log) failed" >> $S
cp /tmp/s2/checks.log $OUT/checks.log
AB_FLAGS= timeout 150 bash bench/twenty-third/ab.sh 2 "$1" \
  "streaming|2,32,32,8192,8192,64 streaming|4,32,32,4096,4096,64" >> $S 2>&1
cat $S
