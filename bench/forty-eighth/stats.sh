#!/usr/bin/env bash
# carry ["bundle"]: the bundle (main's dK/dV kernel) and
# bundle/stats-overlay.tar.xz (fa-run and libFARuntime of 8e1e136 with
# patches/early-stats.patch: the dK/dV consumers store each tile's row
# statistics while its S^T and dP^T run, before the wait, instead of after
# it; FA_EARLY_STATS=k, an experiment switch read at compile time: also
# read the first k column tiles' lse and D before the wait). Builds m
# (k = 0), e2 and e4 are copies of the overlay with kernel caches of their
# own. Checks of e2 against float64, then backward TFLOP/s alternated.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S m bundle/stats-overlay.tar.xz e2 bundle/stats-overlay.tar.xz \
  e4 bundle/stats-overlay.tar.xz || exit 1
FA_EARLY_STATS=2 device_on e2 device_check_lines <<'LINES'
kernels_spec/mha.mlir --dtype bf16 --shape 3,8,8,555,555,64
kernels_spec/causal.mlir --dtype bf16 --shape 2,8,8,1531,1531,64
kernels_spec/gqa_causal.mlir --dtype f16 --shape 2,32,8,777,777,64
kernels_spec/gpt_oss.mlir --dtype bf16 --shape 2,64,8,1000,1000,64
kernels_spec/causal.mlir --dtype bf16 --shape 2,8,8,1531,1531,128 --dq-atomics
kernels_spec/mha.mlir --dtype f16 --shape 2,4,4,333,1025,128 --dq-atomics
kernels_spec/swa.mlir --dtype bf16 --shape 1,8,8,700,2100,128 --dq-atomics
kernels_spec/causal.mlir --dtype bf16 --shape 2,8,8,1531,1531,80 --dq-atomics
LINES
tflops() {
  local v=$1 spec=$2 shape=$3
  shift 3
  case $v in e*) export FA_EARLY_STATS=${v#e} ;; *) export FA_EARLY_STATS=0 ;; esac
  device_build_tflops "$v" "$spec" "$shape" --backward "$@"
}
for v in a m e2 e4 a e2; do tflops $v mha 4,32,32,4096,4096,64; done
for v in a e2 a e2; do tflops $v causal 4,16,16,4096,4096,128 --dq-atomics; done
echo "done ${SECONDS}s" >> $S
cat $S
