#!/usr/bin/env bash
# carry ["bundle"]: the split-KV forward lets its merge launch once past its
# keys (griddepcontrol.launch_dependents; t-overlay: the new merge and that
# trigger, which was dropped after this call)
# against the new merge alone (m-overlay). Checks against float64 on t,
# memcheck and racecheck of one decode, bench_decode.py's graph rows on m
# and t alternated (two rounds), decode_parts.py on both.
# (The call ran this script's first form: the same steps written out,
# before device.sh's helpers for them.)
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S m bundle/m-overlay.tar.xz t bundle/t-overlay.tar.xz || exit 1
device_python $OUT/py.log || exit 1
mkdir -p /tmp/res
G=kernels_spec/gpt_oss_decode.mlir
device_forward_checks t <<LINES
bf16 kernels_spec/causal.mlir --shape 1,28,4,1,8191,128
bf16 kernels_spec/causal.mlir --shape 2,32,4,7,6000,64
bf16 $G --kernel gpt_oss_decode_full --shape 1,64,8,1,32768,64
bf16 $G --kernel gpt_oss_decode_paged --shape 2,64,8,1,9000,64
bf16 kernels_spec/causal.mlir --shape 1,16,2,1,5000,256
f16 kernels_spec/causal.mlir --shape 3,32,8,4,7000,128
LINES
device_on t device_sanitize gpt_oss_decode 1,64,8,1,3000,64 --kernel gpt_oss_decode_full
echo "checks done (${SECONDS}s)" >> $S
for r in 1 2; do
  for v in m t; do
    device_decode_rows "r$r $v" $v /tmp/res/decode-r$r-$v.csv \
      --models gpt-oss_full,gpt-oss_window_128,Llama_32/8 --batches 1,4 --caches 32768,131072
  done
done
device_decode_parts m
device_decode_parts t
tar -C /tmp/res -czf $OUT/results.tar.gz .
echo "done (${SECONDS}s)" >> $S
cat $S
