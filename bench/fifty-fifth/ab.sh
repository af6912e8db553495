#!/usr/bin/env bash
# carry ["bundle"]: the bundle (a: the D kernel zeroes the dQ accumulator
# before its loads), b-overlay (b: after them) and o-overlay (o: 038450f's
# C++, the zero kernel of its own). Each build's preprocess kernels under
# ncu (gpu__time_duration, clocks locked by ncu) at causal D 128 4x16x4k
# and full D 64 4x32x4k, then fa-run's backward TFLOP/s, the builds
# alternated, two rounds.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S b bundle/b-overlay.tar.xz o bundle/o-overlay.tar.xz || exit 1
SHAPES="causal:4,16,16,4096,4096,128 mha:4,32,32,4096,4096,64"
for v in a b o; do
  for c in $SHAPES; do device_build_compile $v ${c%%:*} ${c#*:} --backward & done
done
wait
echo "compiled (${SECONDS}s)" >> $S
ncu_pre() {
  FA_CACHE_DIR=/tmp/c-$1 FA_AUTOTUNE=0 timeout 120 ncu --metrics gpu__time_duration.sum \
    --kernel-name "regex:row_dot|dq_zero" --launch-count 4 "$R" "kernels_spec/$2.mlir" --target gpu \
    --dtype bf16 --backward --shape "$3" 2>&1 | grep -E "row_dot|dq_zero|duration" | tr -s ' ' | paste -sd' ' | sed "s/^/ncu $1 $2: /" >> $S
}
for c in $SHAPES; do
  for v in a b o; do device_on $v ncu_pre $v ${c%%:*} ${c#*:}; done
done
for round in 1 2; do
  for c in $SHAPES; do
    for v in a b o; do device_build_tflops $v ${c%%:*} ${c#*:} --backward; done
  done
done
echo "done (${SECONDS}s)" >> $S
cat $S
