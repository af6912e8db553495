#!/usr/bin/env bash
# carry ["bundle"], the bundle built from 8e1e136 with
# patches/bwd-groups3.patch (the FA_BWD_GROUPS experiment switch, off by
# default, so main's kernels unless set). 1) bench/lib/checks-dq-atomics.txt on main's kernels (its four
# newest lines had run only on next/dq-write's build). 2) Three consumer
# warpgroups of 64 keys over 64-row query tiles in the dK/dV kernel where
# dQ has its own kernel (FA_BWD_GROUPS=3, D <= 64, read at compile time:
# build g3 is a copy of the bundle with its own kernel caches): checks
# against float64, then backward TFLOP/s against main, alternated.
# SKIP_MAIN_CHECKS=1 skips 1) (the second call, after the first had run
# it with the overlay's pair missing from device_setup).
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S g3 "" || exit 1
[ -n "${SKIP_MAIN_CHECKS:-}" ] || device_check_lines --dq-atomics < bench/lib/checks-dq-atomics.txt
rm -rf /tmp/c-chk*
export FA_BWD_GROUPS=3
device_on g3 device_check_lines <<'LINES'
kernels_spec/mha.mlir --dtype bf16 --shape 3,8,8,555,555,64
kernels_spec/causal.mlir --dtype bf16 --shape 2,8,8,1531,1531,64
kernels_spec/gqa_causal.mlir --dtype f16 --shape 2,32,8,777,777,64
kernels_spec/causal.mlir --dtype bf16 --shape 2,8,8,1531,1531,32
kernels_spec/mha.mlir --dtype f16 --shape 2,4,4,333,1025,64
kernels_spec/swa.mlir --dtype bf16 --shape 1,8,2,3000,3000,64
kernels_spec/streaming.mlir --dtype bf16 --shape 2,8,8,1531,1531,64
kernels_spec/gpt_oss.mlir --dtype bf16 --shape 2,64,8,1531,1531,64
kernels_spec/mha.mlir --dtype bf16 --shape 1,8,8,65,65,64
kernels_spec/causal.mlir --dtype bf16 --shape 1,4,4,1000,1500,64
LINES
device_on g3 device_sanitize causal 1,4,4,1000,1000,64 --backward
for run in "mha a" "mha g3" "causal a" "causal g3" "mha a" "mha g3" "causal a" "causal g3"; do
  set -- $run
  device_build_tflops $2 $1 4,32,32,4096,4096,64 --backward
done
for run in "gqa_causal a" "gqa_causal g3"; do
  set -- $run
  device_build_tflops $2 $1 4,32,8,4096,4096,64 --backward
done
for run in "causal a" "causal g3"; do
  set -- $run
  device_build_tflops $2 $1 4,64,64,4096,4096,32 --backward
done
echo "done ${SECONDS}s" >> $S
cat $S
