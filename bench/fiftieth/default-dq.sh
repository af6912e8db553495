#!/usr/bin/env bash
# carry ["bundle"] packed at c58bea5 (dQ by TMA reduce-adds the wgmma
# backward's default up to D 128): the default backward (no flag) checked
# against float64 on the 16 lines of bench/lib/checks-dq-atomics.txt, dQ's
# own kernel (--dq-atomics=false) on three, memcheck and racecheck of the
# default at an odd shape, then backward TFLOP/s (FA_AUTOTUNE=0, the
# compiler's choice) of the default against --dq-atomics=false, kernels
# compiled first (beside the checks), then each timed alone.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S || exit 1
CASES="causal:4,64,64,4096,4096,64 mha:4,32,32,4096,4096,64 causal:4,16,16,4096,4096,128 swa:2,32,32,8192,8192,64"
for c in $CASES; do
  device_build_compile a "${c%%:*}" "${c#*:}" --backward &
  device_build_compile a "${c%%:*}" "${c#*:}" --backward --dq-atomics=false &
done
grep -v '^#' bench/lib/checks-dq-atomics.txt | device_check_lines
device_check_lines --dq-atomics=false <<'LINES'
kernels_spec/causal.mlir --dtype bf16 --shape 2,8,8,1531,1531,128
kernels_spec/gqa_causal.mlir --dtype f16 --shape 2,32,8,777,777,64
kernels_spec/swa.mlir --dtype bf16 --shape 1,8,8,700,2100,64
LINES
wait
echo "compiled (${SECONDS}s)" >> $S
device_sanitize causal 1,4,4,1000,1000,64 --backward
for c in $CASES; do
  device_build_tflops a "${c%%:*}" "${c#*:}" --backward
  device_build_tflops a "${c%%:*}" "${c#*:}" --backward --dq-atomics=false
done
echo "done ${SECONDS}s" >> $S
cat $S
