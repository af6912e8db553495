#!/usr/bin/env bash
# After the review mend (the copy of Q made where used in the producer too):
# the multi-item checks and the D 64 forwards' speed, on the committed tree.
S=$OUT/summary.txt; : > $S; W=/tmp/re; rm -rf $W; mkdir -p $W
export FA_CHECK_PREFIX="timeout 75"
source bench/twenty-fifth/multi-item-checks.sh
FA_GPU_STAGES=checks FA_CHECK_JOBS=8 FA_CHECKS="$(lines)" timeout 150 scripts/gpu-run.sh $W/multi > /dev/null 2>&1
echo "multi checks: $(grep -c '^== ' $W/multi/checks.log) runs, $(grep -c FAILED $W/multi/checks.log) failed" >> $S
for c in "causal|4,32,32,4096,4096,64" "streaming|2,32,32,8192,8192,64"; do
  FA_AUTOTUNE=0 LD_LIBRARY_PATH=/tmp/fa-bundle/lib timeout 60 /tmp/fa-bundle/bin/fa-run kernels_spec/${c%%|*}.mlir \
    --target gpu --dtype bf16 --repeat 30 --shape ${c#*|} 2>&1 | grep -oE "^[a-z_]+ shape=[0-9,]+|fwd_tflops=[0-9.]+" | tr '\n' ' ' >> $S
  echo >> $S
done
cat $S
