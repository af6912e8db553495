#!/usr/bin/env bash
# The fifty-third session's last call: device.sh's new helpers
# (device_forward_check, device_decode_rows, device_on with
# device_build_dir) on f152961's build (k-overlay), as the next sessions'
# scripts will call them: four forward checks against float64, one
# memcheck/racecheck pair, and bench_decode.py's B 1 rows on k and on
# the bundle's build (a). Carry ["bundle"].
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S k bundle/k-overlay.tar.xz || exit 1
device_python $OUT/py.log || exit 1
G=kernels_spec/gpt_oss_decode.mlir
device_forward_check k bf16 $G --kernel gpt_oss_decode_full --shape 1,64,8,1,20000,64 &
device_forward_check k bf16 $G --kernel gpt_oss_decode_sliding --shape 3,64,8,1,20000,64 &
device_forward_check k f16 kernels_spec/causal.mlir --shape 1,32,8,2,12345,128 &
device_forward_check a bf16 kernels_spec/causal.mlir --shape 1,32,8,2,12345,128 &
wait
device_on k device_sanitize causal 1,32,8,1,2999,64
for v in k a; do
  device_decode_rows "$v" $v "$OUT/decode-$v.csv" \
    --models gpt-oss_full,gpt-oss_window_128,Llama_32/8 --batches 1 --caches 32768,131072
done
echo "done (${SECONDS}s)" >> $S
cat $S
