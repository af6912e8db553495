#!/usr/bin/env bash
# carry ["bundle"]: the forty-seventh session's first call. (1) Branch
# next/dq-banks-64's build as bundle/dqbanks64-overlay.tar.xz ("n"):
# the dQ tile's stores without bank conflicts in 64-byte boxes (D 32 and
# 80), checked against float64 and sanitized, then timed against main
# ("a"). (2) The table's full D 64 rows made again (the forty-sixth
# session's next.sh: --dq-atomics now beats the dQ kernel at mha D 64).
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S n bundle/dqbanks64-overlay.tar.xz || exit 1
A=--dq-atomics
device_on n device_check_lines $A <<'LINES'
kernels_spec/causal.mlir --dtype bf16 --shape 2,8,8,1531,1531,80
kernels_spec/mha.mlir --dtype f16 --shape 2,4,4,333,1025,80
kernels_spec/gqa_causal.mlir --dtype bf16 --shape 1,32,8,1000,1000,32
kernels_spec/causal.mlir --dtype bf16 --shape 2,4,4,1000,1000,32
kernels_spec/causal.mlir --dtype bf16 --shape 2,4,4,1000,1000,128
LINES
device_on n device_sanitize causal 1,4,4,1000,1000,80 --backward $A
for v in a n a n; do
  device_build_tflops $v causal 2,16,16,8192,8192,80 --backward $A
done
device_retune full:64 ${1:-170}
cp "$OUT/t/TunedConfigs.inc" "$OUT/TunedConfigs.inc" 2>/dev/null
echo "done ${SECONDS}s" >> $S
cat $S
