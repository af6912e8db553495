#!/usr/bin/env bash
# Issue 16 on an H100 host after dQ's reduce-adds were emitted once
# (7ce4dd6): bench_compile.py's three cases (fa cold, first call on the
# shipped table, cache hit) beside cuDNN's and flex's first calls, in one
# call; then backward TFLOP/s with --dq-atomics, main before 7ce4dd6 (A,
# bundle/main-overlay.tar.xz) against 7ce4dd6 (B), with the time left.
# Carry ["bundle"] packed at 7ce4dd6.
source bench/lib/device.sh
S=$OUT/summary.txt
device_summary $S
FA_GPU_STAGES=compile FA_BENCH_TIME_LIMIT=330 FA_BENCH_TIMEOUT=380 timeout 390 \
  scripts/gpu-run.sh $OUT/compile > $OUT/compile.log 2>&1
echo "== compile (${SECONDS}s)" >> $S
grep -E "^(fa|sdpa|flex)" $OUT/compile/compile.log >> $S
cut -d, -f1-16,22-23 $OUT/compile/compile.csv >> $S 2>/dev/null
left=$((570 - SECONDS))
if [ $left -gt 60 ]; then
  AB_OVERLAY_A=bundle/main-overlay.tar.xz AB_FLAGS="--backward --dq-atomics" timeout $left bash bench/twenty-third/ab.sh 2 - \
    "causal|4,16,16,4096,4096,128 mha|4,16,16,4096,4096,128 causal|4,32,32,4096,4096,64" > $OUT/ab.log 2>&1
  echo "== A/B, A before 7ce4dd6, B 7ce4dd6 (${SECONDS}s)" >> $S; cat $OUT/ab.log >> $S
fi
echo "done ${SECONDS}s" >> $S
cat $S
