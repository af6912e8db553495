#!/usr/bin/env bash
# carry ["bundle"]: the split-KV merge with a thread per quad of D in
# groups over the splits (m-overlay: this tree's C++) against the bundle's
# (a: a thread per split's lse, one column a thread). Checks against
# float64 on m (decode shapes at D 32-256, sinks, windows, sink tokens,
# paged, append, f16 and f32), memcheck and racecheck of two merges, then
# bench_decode.py's graph rows on a and m alternated, and decode_parts.py
# (each kernel's time in graph replays) on both.
# (The call ran this script's first form: the same steps written out,
# before device.sh's helpers for them.)
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S m bundle/m-overlay.tar.xz || exit 1
device_python $OUT/py.log || exit 1
mkdir -p /tmp/res
G=kernels_spec/gpt_oss_decode.mlir
device_forward_checks m <<LINES
bf16 kernels_spec/causal.mlir --shape 1,28,4,1,8191,128
bf16 kernels_spec/causal.mlir --shape 1,16,2,1,5000,256
bf16 kernels_spec/causal.mlir --shape 1,32,4,1,6000,64
bf16 kernels_spec/causal.mlir --shape 2,32,4,7,6000,64
bf16 kernels_spec/causal.mlir --shape 2,16,8,2,3001,32
bf16 kernels_spec/causal.mlir --shape 1,16,4,3,4099,80
bf16 kernels_spec/causal.mlir --shape 1,24,4,2,5000,96
f16 kernels_spec/causal.mlir --shape 3,32,8,4,7000,128
bf16 $G --kernel gpt_oss_decode_full --shape 1,64,8,1,32768,64
bf16 $G --kernel gpt_oss_decode_full --shape 2,64,8,3,9000,64
bf16 $G --kernel gpt_oss_decode_sliding --shape 2,64,8,1,9000,64
bf16 $G --kernel gpt_oss_decode_paged --shape 2,64,8,1,9000,64
bf16 $G --kernel gpt_oss_decode_append --shape 2,64,8,1,9000,64
bf16 kernels_spec/streaming.mlir --shape 1,8,8,1,7000,64
f32 kernels_spec/causal.mlir --shape 1,32,4,1,6000,64
bf16 kernels_spec/causal.mlir --shape 1,12,2,1,9000,192
LINES
device_on m device_sanitize causal 1,16,2,1,3000,96
device_on m device_sanitize gpt_oss_decode 1,64,8,1,3000,64 --kernel gpt_oss_decode_full
echo "checks done (${SECONDS}s)" >> $S
for r in 1 2; do
  for v in a m; do
    device_decode_rows "r$r $v" $v /tmp/res/decode-r$r-$v.csv \
      --models gpt-oss_full,Llama_32/8 --batches 1,4 --caches 32768,131072
  done
done
device_decode_parts a
device_decode_parts m
tar -C /tmp/res -czf $OUT/results.tar.gz .
echo "done (${SECONDS}s)" >> $S
cat $S
