#!/usr/bin/env bash
# carry ["bundle"]: the f32 dQ accumulator's zero and copy kernels as a
# block per 64 rows of a (batch, head), threads striding over 16-byte
# quads with one 32-bit division each (bundle/zerocopy-overlay.tar.xz,
# "n"), against the bank-conflict fix alone (dqconf-overlay, "c"). Checks
# against float64 of the backwards that use them (--dq-atomics), then
# fa-run backward TFLOP/s alternated.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S n bundle/zerocopy-overlay.tar.xz c bundle/dqconf-overlay.tar.xz || exit 1
A=--dq-atomics
device_on n device_check_lines $A <<'LINES'
kernels_spec/causal.mlir --dtype bf16 --shape 2,8,8,1531,1531,128
kernels_spec/mha.mlir --dtype f16 --shape 2,4,4,333,1025,128
kernels_spec/gqa_causal.mlir --dtype bf16 --shape 1,32,8,1000,1000,128
kernels_spec/causal.mlir --dtype bf16 --shape 1,8,8,300,300,32
kernels_spec/mha.mlir --dtype bf16 --shape 3,8,8,555,555,64
kernels_spec/gpt_oss.mlir --dtype bf16 --shape 2,64,8,1000,1000,64
kernels_spec/mha.mlir --dtype bf16 --shape 1,8,8,65,65,128
kernels_spec/causal.mlir --dtype bf16 --shape 2,8,8,1531,1531,96
LINES
device_on n device_sanitize mha 1,4,4,333,333,64 --backward $A
for v in c n; do
  device_build_tflops $v causal 4,16,16,4096,4096,128 --backward $A
  device_build_tflops $v mha 4,16,16,4096,4096,128 --backward $A
done
for v in c n; do
  device_build_tflops $v causal 4,16,16,4096,4096,128 --backward $A
  device_build_tflops $v causal 4,32,32,4096,4096,64 --backward $A
done
echo "done ${SECONDS}s" >> $S
cat $S
