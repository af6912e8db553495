#!/usr/bin/env bash
# The thirty-second session's fourth call: D 80's wgmma forward with two
# copies of Q (bundle/d80-2q-overlay.tar.xz), and with those and O staged
# through shared memory and TMA stores (bundle/d80-staged-overlay.tar.xz),
# each against the final build (the bundle: one copy, global stores),
# forward only; checks of the staged build against float64 at D 80; then
# issue 16's compile cases the last call's limit left (fa and cuDNN).
# carry ["bundle"].
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
CASES="mha|4,16,16,4096,4096,80 causal|4,16,16,4096,4096,80 causal|16,16,16,1024,1024,80 streaming|2,32,32,8192,8192,80 gqa_causal|4,32,8,4096,4096,80"
AB_FLAGS= timeout 100 bash bench/twenty-third/ab.sh 1 bundle/d80-2q-overlay.tar.xz "$CASES" > $OUT/ab-2q.log 2>&1
echo "== two copies of Q (B) against the final build (A) (${SECONDS}s)" >> $S; cat $OUT/ab-2q.log >> $S
AB_FLAGS= timeout 170 bash bench/twenty-third/ab.sh 2 bundle/d80-staged-overlay.tar.xz "$CASES" > $OUT/ab-staged.log 2>&1
echo "== two copies and staged O (B) against the final build (A) (${SECONDS}s)" >> $S; cat $OUT/ab-staged.log >> $S
# /tmp/fa-b holds the staged build now.
{
  for c in "causal|2,16,4,1000,1000,80;1,8,8,197,197,80" "mha|1,4,4,1000,777,80;2,4,4,333,1000,80" \
           "streaming|1,8,8,2100,2100,80" "gqa_causal|1,32,8,333,333,80" "swa|1,32,8,3000,3000,80" \
           "gpt_oss|1,64,8,1000,1000,80"; do
    echo "kernels_spec/${c%%|*}.mlir|${c#*|}|--dtype bf16"
  done
  echo "kernels_spec/mha.mlir|1,4,4,1000,777,80|--dtype f16"
} | FA=/tmp/fa-b LD_LIBRARY_PATH=/tmp/fa-b/lib device_checks /tmp/checks-d80.log
FA=/tmp/fa-b R=/tmp/fa-b/bin/fa-run LD_LIBRARY_PATH=/tmp/fa-b/lib device_sanitize causal 1,4,4,1000,1000,80
FA_GPU_STAGES=compile FA_BENCH_TIME_LIMIT=60 FA_BENCH_TIMEOUT=80 \
  FA_COMPILE_ARGS="--impls fa,sdpa-cudnn --cases gqa-window-2048@128,gpt-oss-window-128@64" \
  timeout 90 scripts/gpu-run.sh /tmp/comp > /tmp/comp.out 2>&1
cp /tmp/comp/compile.csv $OUT/compile2.csv 2>/dev/null; cp /tmp/comp/compile.log $OUT/compile2.log 2>/dev/null
echo "== compile (${SECONDS}s)" >> $S; cut -d, -f1-14,24 $OUT/compile2.csv >> $S 2>/dev/null
echo "done ${SECONDS}s" >> $S
cat $S
