#!/usr/bin/env bash
# carry ["bundle"]: decode steps of 1-8 query rows a sequence (a
# speculative step's; bench_decode.py --query-lengths) on this tree's C++
# (m-overlay): where the split-KV forward's packed rows pass one warp (16:
# gpt-oss's 8 query heads at 3 positions, Llama's 4 at 5) and its warps
# stop sharing each key tile. Checks against float64 at those row counts
# first.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S m bundle/m-overlay.tar.xz || exit 1
device_python $OUT/py.log || exit 1
G=kernels_spec/gpt_oss_decode.mlir
device_forward_checks m <<LINES
bf16 $G --kernel gpt_oss_decode_full --shape 1,64,8,4,32768,64
bf16 $G --kernel gpt_oss_decode_sliding --shape 1,64,8,4,32768,64
bf16 kernels_spec/causal.mlir --shape 1,32,8,8,32768,128
bf16 kernels_spec/causal.mlir --shape 1,32,8,5,32768,128
LINES
echo "checks done (${SECONDS}s)" >> $S
device_decode_rows queries m $OUT/decode-queries.csv --models gpt-oss_full,Llama_32/8 \
  --batches 1,8 --caches 32768 --query-lengths 1,2,3,4,8
echo "done (${SECONDS}s)" >> $S
cat $S
