#!/usr/bin/env bash
# carry ["bundle"]: dK's product behind dQ's with A from registers (the
# form kept): the variants whose outer loops it made spill (swa and
# streaming at D 128) against main, a check of each, then the D 128 dense
# rows beside cuDNN on the shipped table (which picks this kernel there).
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S m bundle/main-overlay.tar.xz || exit 1
A=--dq-atomics
device_check_lines $A <<'LINES'
kernels_spec/causal.mlir --dtype bf16 --shape 1,8,8,300,300,32
kernels_spec/swa.mlir --dtype bf16 --shape 1,16,16,3000,3000,128
kernels_spec/streaming.mlir --dtype bf16 --shape 2,8,8,1531,1531,128
LINES
for v in m a; do
  device_build_tflops $v swa 2,16,16,8192,8192,128 --backward $A
  device_build_tflops $v streaming 2,16,16,8192,8192,128 --backward $A
done
device_bench dense128 200 --variants causal,full --seqs 4096 --head-dims 128 \
  --impls fa,sdpa-cudnn --reps 20
echo "done ${SECONDS}s" >> $S
cat $S
