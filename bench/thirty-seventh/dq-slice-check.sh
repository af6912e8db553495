#!/usr/bin/env bash
# For branch next/dq-one-slice (merged as 7ce4dd6 after this ran on an
# H200: logs/dq-slice-check-h200.txt): the dK/dV kernel's
# dQ by TMA reduce-adds (--dq-atomics) emitted once, the warpgroup's
# columns by offsets, where D's two halves are equal (D 32, 64, 128),
# instead of a branch per warpgroup: at D 128, 3206 -> 2853 PTX lines, 80
# -> 64 wgmma, ptxas 13.0 1.42 -> 1.13 s (best of five, this 2-core
# machine, under load) and 84 -> 52 bytes of spill stores.
# Carry ["bundle"] packed from the branch, with bundle/main-overlay.tar.xz
# (bin/fa-run and lib/libFARuntime.so.22.1 of main) for the A/B.
# 1. checks against float64, forward and backward, --dq-atomics, D 32, 64,
#    128 (every masked spec) and D 80 (the branched form, unchanged);
# 2. memcheck and racecheck of causal 1000 D 128 and streaming 1100 D 64
#    backward with --dq-atomics;
# 3. backward TFLOP/s, branch (B) against main (A), --dq-atomics, two
#    rounds (bench/twenty-third/ab.sh);
# 4. the first call on the shipped table (issue 16): bench_compile.py.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
{
  for d in 32 64 128 80; do
    for c in "causal|2,8,8,1000,1000,$d;1,4,4,197,197,$d" "mha|1,4,4,1000,777,$d;2,4,4,333,1000,$d" \
             "gqa_causal|1,32,8,333,333,$d" "streaming|1,8,8,1100,1100,$d" "swa|1,8,2,5000,5000,$d"; do
      echo "kernels_spec/${c%%|*}.mlir|${c#*|}|--dtype bf16 --dq-atomics"
    done
  done
  echo "kernels_spec/gpt_oss.mlir|1,64,8,1000,1000,64|--dtype bf16 --dq-atomics"
  echo "kernels_spec/mha.mlir|1,4,4,1000,777,128|--dtype f16 --dq-atomics"
} | device_checks /tmp/checks-dq.log
device_sanitize causal 1,4,4,1000,1000,128 --backward --dq-atomics
device_sanitize streaming 1,8,8,1100,1100,64 --backward --dq-atomics
AB_OVERLAY_A=bundle/main-overlay.tar.xz AB_FLAGS="--backward --dq-atomics" timeout 200 bash bench/twenty-third/ab.sh 2 - \
  "causal|4,16,16,4096,4096,128 gqa_causal|2,32,8,4096,4096,128 causal|4,32,32,4096,4096,64 mha|4,16,16,4096,4096,128" \
  > $OUT/ab.log 2>&1
echo "== A/B, A main, B the branch (${SECONDS}s)" >> $S; cat $OUT/ab.log >> $S
FA_GPU_STAGES=compile FA_BENCH_TIME_LIMIT=70 FA_BENCH_TIMEOUT=90 timeout 100 scripts/gpu-run.sh /tmp/comp > /tmp/comp.out 2>&1
cp /tmp/comp/compile.csv $OUT/ 2>/dev/null
echo "== compile (${SECONDS}s)" >> $S; cat $OUT/compile.csv >> $S 2>/dev/null
echo "done ${SECONDS}s" >> $S
cat $S
