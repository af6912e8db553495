#!/usr/bin/env bash
# Issue 18, fourth call: the split-KV forward's warps share each key tile
# where a block's packed rows fit one warp (key-split.diff: each warp runs
# warp 0's rows over its 16 keys of every 64-key tile, warp 0 merges the
# four states at the end), on top of skip.diff. Carry ["bundle"]:
# n-overlay (main), s-overlay (skip only) and k-overlay (skip + key split).
# Checks against float64 on k (fa-run --check of decode shapes at D 32-256,
# one to six warps' packed rows, causal rows within the block, windows, sink
# tokens, paged, append, f16 and f32), memcheck and racecheck, test_torch's
# decode tests; then bench_decode.py on a, s and k, alternated.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S a bundle/n-overlay.tar.xz s bundle/s-overlay.tar.xz k bundle/k-overlay.tar.xz || exit 1
device_python $OUT/py.log || exit 1
export PYTHONPATH=$PY_DIR
mkdir -p /tmp/res
check() {  # build dtype fa-run-args...
  local v=$1 t=$2; shift 2
  echo "check $v $t $*: $(FA_CACHE_DIR=/tmp/c-chk-$v FA_AUTOTUNE=0 LD_LIBRARY_PATH=/tmp/fa-$v/lib \
    timeout 120 /tmp/fa-$v/bin/fa-run "$@" --target gpu --dtype $t --check 2>&1 | tail -1)" >> $S
}
G=kernels_spec/gpt_oss_decode.mlir
check k bf16 kernels_spec/causal.mlir --shape 1,28,4,1,8191,128 &
check k bf16 kernels_spec/causal.mlir --shape 1,16,2,1,5000,256 &
check k bf16 kernels_spec/causal.mlir --shape 1,32,4,1,6000,64 &
check k bf16 kernels_spec/causal.mlir --shape 2,32,4,7,6000,64 &
check k bf16 kernels_spec/causal.mlir --shape 2,16,8,2,3001,32 &
check k bf16 kernels_spec/causal.mlir --shape 1,16,4,3,4099,80 &
check k bf16 kernels_spec/causal.mlir --shape 1,24,4,2,5000,96 &
check k f16 kernels_spec/causal.mlir --shape 3,32,8,4,7000,128 &
wait
check k bf16 $G --kernel gpt_oss_decode_full --shape 4,64,8,1,8192,64 &
check k bf16 $G --kernel gpt_oss_decode_full --shape 2,64,8,2,9000,64 &
check k bf16 $G --kernel gpt_oss_decode_full --shape 2,64,8,3,9000,64 &
check k bf16 $G --kernel gpt_oss_decode_sliding --shape 2,64,8,1,9000,64 &
check k bf16 $G --kernel gpt_oss_decode_sliding --shape 2,64,8,2,9000,64 &
check k bf16 $G --kernel gpt_oss_decode_paged --shape 2,64,8,1,9000,64 &
check k bf16 $G --kernel gpt_oss_decode_append --shape 2,64,8,1,9000,64 &
check k bf16 kernels_spec/streaming.mlir --shape 1,8,8,1,7000,64 &
wait
check k f32 kernels_spec/causal.mlir --shape 1,32,4,1,6000,64 &
check k bf16 kernels_spec/swa.mlir --shape 1,8,8,1,7000,64 &
check k bf16 kernels_spec/gqa_causal.mlir --shape 1,32,8,1,7000,128 &
check k bf16 kernels_spec/causal.mlir --shape 1,8,8,1,70000,64 &
wait
for tool in memcheck racecheck; do
  for spec in "kernels_spec/causal.mlir --shape 1,16,2,1,3000,128" \
              "$G --kernel gpt_oss_decode_full --shape 1,64,8,1,3000,64"; do
    FA_CACHE_DIR=/tmp/c-san FA_AUTOTUNE=0 LD_LIBRARY_PATH=/tmp/fa-k/lib timeout 100 compute-sanitizer --tool $tool \
      --error-exitcode 9 /tmp/fa-k/bin/fa-run $spec --target gpu --dtype bf16 --check > /tmp/san.log 2>&1
    echo "$tool $spec: rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.log | tr '\n' ' ')" >> $S
  done
done
echo "checks done (${SECONDS}s)" >> $S
for r in 1 2; do
  for v in a s k; do
    echo "== r$r $v (${SECONDS}s)" >> $S
    ( cd bench && LD_LIBRARY_PATH=/tmp/fa-$v/lib FA_CACHE_DIR=/tmp/cd-$v timeout 60 python3 bench_decode.py \
        --models gpt-oss_full,gpt-oss_window_128,Llama_32/8 --batches 1,8 --caches 32768,131072 \
        --csv /tmp/res/decode-r$r-$v.csv 2>&1 | grep -v -i warn | grep -E "copy|graph" >> $S )
  done
done
LD_LIBRARY_PATH=/tmp/fa-k/lib FA_CACHE_DIR=/tmp/pc-k timeout $((570 - SECONDS)) python3 -m pytest -q -p no:cacheprovider \
  python/tests/test_torch.py -k "decode or paged or kvcache or append" > /tmp/res/pytest.log 2>&1
echo "pytest k (rc $?): $(tail -1 /tmp/res/pytest.log) (${SECONDS}s)" >> $S
tar -C /tmp/res -czf $OUT/results.tar.gz .
echo "done (${SECONDS}s)" >> $S
cat $S
