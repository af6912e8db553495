#!/usr/bin/env bash
# carry ["bundle"], on branch next/dq-banks-64 (not run: the forty-sixth
# session's device time was spent): the dQ tile's stores without bank
# conflicts in 64-byte boxes too (D 32 and 80; rows of odd phase store the
# box's other tile). Pack the bundle on main and this branch's build as
# bundle/dqbanks64-overlay.tar.xz ("n"). Checks against float64 of the
# dK/dV kernel that adds dQ, sanitizers at D 80, and fa-run backward
# TFLOP/s at D 80 (the table picks --dq-atomics there) and D 32,
# alternated with main ("a").
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S n bundle/dqbanks64-overlay.tar.xz || exit 1
A=--dq-atomics
device_on n device_check_lines $A < bench/lib/checks-dq-atomics.txt
device_on n device_check_lines $A <<'LINES'
kernels_spec/causal.mlir --dtype bf16 --shape 2,8,8,1531,1531,80
kernels_spec/mha.mlir --dtype f16 --shape 2,4,4,333,1025,80
kernels_spec/gqa_causal.mlir --dtype bf16 --shape 1,32,8,1000,1000,32
LINES
device_on n device_sanitize causal 1,4,4,1000,1000,80 --backward $A
for v in a n a n; do
  device_build_tflops $v causal 2,16,16,8192,8192,80 --backward $A
  device_build_tflops $v mha 2,16,16,8192,8192,80 --backward $A
done
for v in a n; do
  device_build_tflops $v causal 4,64,64,4096,4096,32 --backward $A
done
echo "done ${SECONDS}s" >> $S
cat $S
