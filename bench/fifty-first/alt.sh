#!/usr/bin/env bash
# carry ["bundle"] with bundle/n-overlay.tar.xz (fa-run and libFARuntime of
# the experiment build, main at 76fa208 with alternate-dq.diff applied:
# FA_DQ_ALTERNATE=D makes dQ's product one consumer's a tile, alternating,
# up to head dim D) and bundle/base-overlay.tar.xz (any other build: it is
# unpacked, not timed). The first call's form (logs/alt-racy-summary.txt)
# also timed D 128 and the packing A/B of bench/fiftieth/w128.sh.
# 1. the dK/dV-with-dQ checks against float64 with the alternation on;
# 2. backward TFLOP/s, FA_AUTOTUNE=0, alternation on / off (a hang shows
#    as an empty line after device_tflops's 100 s);
# 3. memcheck and racecheck of causal 1x4x1000 D 64 with it on.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S n bundle/n-overlay.tar.xz o bundle/base-overlay.tar.xz || exit 1
# tflops TAG ALT SPEC SHAPE [FLAGS]: build n with FA_DQ_ALTERNATE=ALT (0:
# unset), a kernel cache per TAG.
tflops() {
  local tag=$1 alt=$2
  shift 2
  echo "$1 $2 $tag $( [ "$alt" = 0 ] || export FA_DQ_ALTERNATE=$alt
    DEVICE_CACHE_DIR=/tmp/c-$tag device_on n device_tflops "$@") (${SECONDS}s)" >> $S
}
compile() {
  local tag=$1 alt=$2
  shift 2
  ( [ "$alt" = 0 ] || export FA_DQ_ALTERNATE=$alt
    DEVICE_CACHE_DIR=/tmp/c-$tag device_on n device_fa_run 300 "$@" > /dev/null 2>&1 )
}
CASES="gqa_causal:4,32,8,4096,4096,64:64 causal:4,32,32,4096,4096,64:64
mha:4,32,32,4096,4096,64:64"
for c in $CASES; do
  IFS=: read -r spec shape d <<< "$c"
  compile $spec$d-off 0 $spec $shape --backward &
  compile $spec$d-on $d $spec $shape --backward &
done
( export FA_DQ_ALTERNATE=64; R=/tmp/fa-n/bin/fa-run LD_LIBRARY_PATH=/tmp/fa-n/lib device_check_lines ) <<LINES
$(grep -E ",(32|64)( |$)" bench/lib/checks-dq-atomics.txt)
kernels_spec/causal.mlir --dtype bf16 --shape 2,8,8,1531,1531,64
kernels_spec/swa.mlir --dtype bf16 --shape 1,16,16,3000,3000,64
kernels_spec/streaming.mlir --dtype f16 --shape 2,8,8,1000,1000,64
kernels_spec/gqa_causal.mlir --dtype bf16 --shape 2,32,8,2000,2000,64
LINES
wait
echo "compiled (${SECONDS}s)" >> $S
for c in $CASES; do
  IFS=: read -r spec shape d <<< "$c"
  tflops $spec$d-on $d $spec $shape --backward
  tflops $spec$d-off 0 $spec $shape --backward
done
( export FA_DQ_ALTERNATE=64; R=/tmp/fa-n/bin/fa-run LD_LIBRARY_PATH=/tmp/fa-n/lib
  device_sanitize causal 1,4,4,1000,1000,64 --backward )
cat $S
