#!/usr/bin/env bash
# carry ["bundle"], on branch next/bwd-stages (its build as
# bundle/stages-overlay.tar.xz): the backward kernels' streamed stages past
# two (FA_BWD_STAGES, that branch's compile-time switch; the plans took 2
# wherever they fit). full64.sh: mha 4x32x4k D 64's dK/dV kernel waits for
# its Q/dO tiles in 6.8% of its stall samples. Checks at 3 stages, then
# backward TFLOP/s at 2, 3 and 4 stages (dQ kernel and dK/dV kernel both).
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S s2 bundle/stages-overlay.tar.xz s3 bundle/stages-overlay.tar.xz \
  s4 bundle/stages-overlay.tar.xz || exit 1
export FA_BWD_STAGES=3
device_on s3 device_check_lines <<'LINES'
kernels_spec/mha.mlir --dtype bf16 --shape 3,8,8,555,555,64
kernels_spec/causal.mlir --dtype bf16 --shape 2,8,8,1531,1531,64
kernels_spec/gqa_causal.mlir --dtype f16 --shape 2,32,8,777,777,64
kernels_spec/causal.mlir --dtype bf16 --shape 2,8,8,1531,1531,32
LINES
for run in "mha s2" "mha s3" "mha s4" "mha s2" "mha s3" "causal s2" "causal s3"; do
  set -- $run
  export FA_BWD_STAGES=${2#s}
  device_build_tflops $2 $1 4,32,32,4096,4096,64 --backward
done
echo "done ${SECONDS}s" >> $S
cat $S
