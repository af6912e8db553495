#!/usr/bin/env bash
# Issue 18, fourth call: the split-KV forward's warps share each key tile
# where a block's packed rows fit one warp (key-split.diff: each warp runs
# warp 0's rows over its 16 keys of every 64-key tile, warp 0 merges the
# four states at the end), on top of skip.diff. Carry ["bundle"]:
# n-overlay (main), s-overlay (stages.diff at its default of 2 stages:
# skip.diff) and k-overlay (key-split.diff: f152961's C++).
# Checks against float64 on k (fa-run --check of decode shapes at D 32-256,
# one to six warps' packed rows, causal rows within the block, windows, sink
# tokens, paged, append, f16 and f32), memcheck and racecheck, test_torch's
# decode tests; then bench_decode.py on a, s and k, alternated.
# (Main's build is n here; the logs, from the first form of this script,
# call it a.)
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S n bundle/n-overlay.tar.xz s bundle/s-overlay.tar.xz k bundle/k-overlay.tar.xz || exit 1
device_python $OUT/py.log || exit 1
mkdir -p /tmp/res
G=kernels_spec/gpt_oss_decode.mlir
device_forward_check k bf16 kernels_spec/causal.mlir --shape 1,28,4,1,8191,128 &
device_forward_check k bf16 kernels_spec/causal.mlir --shape 1,16,2,1,5000,256 &
device_forward_check k bf16 kernels_spec/causal.mlir --shape 1,32,4,1,6000,64 &
device_forward_check k bf16 kernels_spec/causal.mlir --shape 2,32,4,7,6000,64 &
device_forward_check k bf16 kernels_spec/causal.mlir --shape 2,16,8,2,3001,32 &
device_forward_check k bf16 kernels_spec/causal.mlir --shape 1,16,4,3,4099,80 &
device_forward_check k bf16 kernels_spec/causal.mlir --shape 1,24,4,2,5000,96 &
device_forward_check k f16 kernels_spec/causal.mlir --shape 3,32,8,4,7000,128 &
wait
device_forward_check k bf16 $G --kernel gpt_oss_decode_full --shape 4,64,8,1,8192,64 &
device_forward_check k bf16 $G --kernel gpt_oss_decode_full --shape 2,64,8,2,9000,64 &
device_forward_check k bf16 $G --kernel gpt_oss_decode_full --shape 2,64,8,3,9000,64 &
device_forward_check k bf16 $G --kernel gpt_oss_decode_sliding --shape 2,64,8,1,9000,64 &
device_forward_check k bf16 $G --kernel gpt_oss_decode_sliding --shape 2,64,8,2,9000,64 &
device_forward_check k bf16 $G --kernel gpt_oss_decode_paged --shape 2,64,8,1,9000,64 &
device_forward_check k bf16 $G --kernel gpt_oss_decode_append --shape 2,64,8,1,9000,64 &
device_forward_check k bf16 kernels_spec/streaming.mlir --shape 1,8,8,1,7000,64 &
wait
device_forward_check k f32 kernels_spec/causal.mlir --shape 1,32,4,1,6000,64 &
device_forward_check k bf16 kernels_spec/swa.mlir --shape 1,8,8,1,7000,64 &
device_forward_check k bf16 kernels_spec/gqa_causal.mlir --shape 1,32,8,1,7000,128 &
device_forward_check k bf16 kernels_spec/causal.mlir --shape 1,8,8,1,70000,64 &
wait
device_on k device_sanitize causal 1,16,2,1,3000,128
device_on k device_sanitize gpt_oss_decode 1,64,8,1,3000,64 --kernel gpt_oss_decode_full
echo "checks done (${SECONDS}s)" >> $S
for r in 1 2; do
  for v in n s k; do
    device_decode_rows "r$r $v" $v /tmp/res/decode-r$r-$v.csv \
      --models gpt-oss_full,gpt-oss_window_128,Llama_32/8 --batches 1,8 --caches 32768,131072
  done
done
PYTHONPATH=$PY_DIR LD_LIBRARY_PATH=/tmp/fa-k/lib FA_CACHE_DIR=/tmp/pc-k timeout $((570 - SECONDS)) python3 -m pytest -q -p no:cacheprovider \
  python/tests/test_torch.py -k "decode or paged or kvcache or append" > /tmp/res/pytest.log 2>&1
echo "pytest k (rc $?): $(tail -1 /tmp/res/pytest.log) (${SECONDS}s)" >> $S
tar -C /tmp/res -czf $OUT/results.tar.gz .
echo "done (${SECONDS}s)" >> $S
cat $S
