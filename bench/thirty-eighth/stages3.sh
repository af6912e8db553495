#!/usr/bin/env bash
# Three Q/dO stages in the wgmma dK/dV kernel (issue 14), its serial
# schedule as before: bundle/stages3-overlay.tar.xz (t) against
# bundle/sink-overlay.tar.xz (s: main's kernels with the poison
# accumulators sunk into them and the register-A wgmma's scale-d an
# immediate), both over the bundle of 5d20aa7 (a). Carry ["bundle"].
# 1. checks against float64 with t, backward, FA_AUTOTUNE=0;
# 2. racecheck of t's causal backward at an odd shape;
# 3. backward TFLOP/s, alternating processes (FA_AUTOTUNE=0, a kernel cache
#    each), as long as time lasts.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
device_overlay a && device_overlay s bundle/sink-overlay.tar.xz &&
  device_overlay t bundle/stages3-overlay.tar.xz || exit 1
tar -xJf bundle/stages3-overlay.tar.xz -C $FA || exit 1
export FA_AUTOTUNE=0
{
  for d in 64 128; do
    for c in "causal|2,8,8,1000,1000,$d;1,4,4,197,197,$d" "mha|1,4,4,1000,777,$d" "gqa_causal|1,32,8,333,333,$d" "swa|1,8,2,5000,5000,$d"; do
      echo "kernels_spec/${c%%|*}.mlir|${c#*|}|--dtype bf16"
    done
  done
  echo "kernels_spec/gpt_oss.mlir|1,64,8,1000,1000,64|--dtype bf16"
  echo "kernels_spec/causal.mlir|2,8,8,1000,1000,96|--dtype bf16"
} | device_checks /tmp/checks-stages3.log
FA_CACHE_DIR=/tmp/c-check timeout 120 compute-sanitizer --tool racecheck --error-exitcode 9 $R kernels_spec/causal.mlir \
  --target gpu --dtype bf16 --check --backward --shape 1,4,4,1000,1000,128 > /tmp/race.log 2>&1
echo "racecheck causal 1,4,4,1000,1000,128 rc=$? $(grep -E 'RACECHECK SUMMARY' /tmp/race.log)" >> $S
echo "== bwd TFLOP/s: a 5d20aa7, s sink + immediate, t s + three stages (${SECONDS}s)" >> $S
run1() {  # run1 VARIANT SPEC SHAPE
  local d=/tmp/fa-$1 out
  out=$(R=$d/bin/fa-run LD_LIBRARY_PATH=$d/lib DEVICE_CACHE_DIR=/tmp/ab-cache-$1 device_tflops $2 $3 --backward)
  echo "$2 $3 $1 $out (${SECONDS}s)" >> $S
}
for c in "a s t causal 4,16,16,4096,4096,128" "s t causal 4,32,32,4096,4096,64" "s t mha 4,16,16,4096,4096,128" \
         "s t gqa_causal 4,32,8,4096,4096,64" "t s causal 4,16,16,4096,4096,128" "t s causal 4,32,32,4096,4096,64"; do
  set -- $c
  [ $SECONDS -gt 340 ] && break
  spec=${@: -2:1} shape=${@: -1}
  while [ $# -gt 2 ]; do run1 $1 $spec $shape; shift; done
done
echo "done ${SECONDS}s" >> $S
cat $S
