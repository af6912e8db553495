#!/usr/bin/env bash
# carry ["bundle"]: bundle/rows128-overlay.tar.xz (branch next/dq-rows128,
# merged as f1232f1 with window and sink variants then kept at 64 rows:
# the dK/dV kernel that adds dQ by TMA reduce-adds takes 128-row query
# tiles up to D 64, its dS^T in two 64-row tiles and two dQ products a
# tile) against the bundle (main: 64-row tiles there). Checks first, then
# mha 4x32x4k D 64 --dq-atomics backward, main then the branch; causal
# 4x32x4k ran after it in the same warm machine, the same two lines with
# causal (logs/rows128-causal-summary.txt).
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S r bundle/rows128-overlay.tar.xz || exit 1
device_on r device_check_lines --dq-atomics <<'LINES'
kernels_spec/mha.mlir --dtype bf16 --shape 3,8,8,555,555,64
kernels_spec/causal.mlir --dtype bf16 --shape 2,8,8,1531,1531,64
kernels_spec/gqa_causal.mlir --dtype f16 --shape 2,32,8,777,777,64
kernels_spec/causal.mlir --dtype bf16 --shape 1,8,8,300,300,32
LINES
for v in a r; do device_build_tflops $v mha 4,32,32,4096,4096,64 --backward --dq-atomics; done
echo "done ${SECONDS}s" >> $S
cat $S
