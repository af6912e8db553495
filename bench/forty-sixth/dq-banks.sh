#!/usr/bin/env bash
# carry ["bundle"]: the D 128 (and D 64) dK/dV kernel that adds dQ stores
# its f32 dQ product to the shared tile without bank conflicts (odd rows
# store the tile two over; bundle/dqconf-overlay.tar.xz, "n") against main
# 76990c3 (the bundle, "a"). Checks against float64 of the kernel, the
# sanitizers, fa-run backward TFLOP/s alternated, and ncu's shared
# wavefronts of the new kernel.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S n bundle/dqconf-overlay.tar.xz || exit 1
A=--dq-atomics
device_on n device_check_lines $A < bench/lib/checks-dq-atomics.txt
device_on n device_sanitize causal 1,4,4,1000,1000,128 --backward $A
echo "sanitizers done (${SECONDS}s)" >> $S
for round in 1 2; do
  for v in a n; do
    device_build_tflops $v causal 4,16,16,4096,4096,128 --backward $A
    device_build_tflops $v mha 4,16,16,4096,4096,128 --backward $A
  done
done
for v in a n; do
  device_build_tflops $v causal 4,32,32,4096,4096,64 --backward $A
  device_build_tflops $v gqa_causal 4,32,8,4096,4096,128 --backward $A
done
NCU_EXTRA="--section MemoryWorkloadAnalysis_Tables" device_on n \
  device_ncu ncu-causal-128-banks '_backward_wgmma_dk_dv_d128$' causal 1,16,16,8192,8192,128 $A
grep -E "bank_conflicts_pipe_lsu_mem_shared.sum |wavefronts_mem_shared.sum" /tmp/ncu-causal-128-banks.log | head -4 >> $S
echo "done ${SECONDS}s" >> $S
cat $S
