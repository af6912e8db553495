#!/usr/bin/env bash
# Issue 18: the split-KV forward's warps without rows skip the math
# (skip.diff); with FA_MINCTAS_SPLIT=4 also four D 64 blocks an SM (the
# fifty-first session's knob: .minnctapersm 4 and 4 blocks an SM in the
# split count). Carry ["bundle"]: the fiftieth session's bundle,
# bundle/n-overlay.tar.xz (fa-run and libFARuntime of main, 66d5744's C++)
# and bundle/s-overlay.tar.xz (this experiment). Checks against float64
# on s (split-KV decode shapes with 1 to 6 packed warps' rows, test_torch's
# decode tests), then bench_decode.py's gpt-oss and Llama rows at B 1 and 8,
# caches 32k and 128k, on a (main), s, and s with four blocks, alternated.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S a bundle/n-overlay.tar.xz s bundle/s-overlay.tar.xz || exit 1
device_python $OUT/py.log || exit 1
export PYTHONPATH=$PY_DIR
check() {  # build env-assignments... -- fa-run args
  local v=$1; shift
  echo "check $v $*: $(env "$@" FA_CACHE_DIR=/tmp/c-chk-$v FA_AUTOTUNE=0 LD_LIBRARY_PATH=/tmp/fa-$v/lib \
    timeout 90 /tmp/fa-$v/bin/fa-run --target gpu --dtype bf16 --check 2>&1 | tail -1)" >> $S
}
for e in X=0 FA_MINCTAS_SPLIT=4; do
  check s $e kernels_spec/causal.mlir --shape 1,28,4,1,8191,128 &
  check s $e kernels_spec/causal.mlir --shape 1,16,2,1,5000,256 &
  check s $e kernels_spec/causal.mlir --shape 1,32,4,1,6000,64 &
  check s $e kernels_spec/causal.mlir --shape 2,32,4,7,6000,64 &
  check s $e kernels_spec/gpt_oss_decode.mlir --kernel gpt_oss_decode_full --shape 4,64,8,1,8192,64 &
  check s $e kernels_spec/gpt_oss_decode.mlir --kernel gpt_oss_decode_full --shape 2,64,8,3,9000,64 &
  check s $e kernels_spec/gpt_oss_decode.mlir --kernel gpt_oss_decode_sliding --shape 2,64,8,5,9000,64 &
  check s $e kernels_spec/gpt_oss_decode.mlir --kernel gpt_oss_decode_paged --shape 2,64,8,2,9000,64 &
  wait
done
echo "checks done (${SECONDS}s)" >> $S
LD_LIBRARY_PATH=/tmp/fa-s/lib FA_CACHE_DIR=/tmp/pc-s timeout 150 python3 -m pytest -q -p no:cacheprovider \
  python/tests/test_torch.py -k "decode or paged or kvcache or append or varlen" > $OUT/pytest.log 2>&1
echo "pytest s: $(tail -1 $OUT/pytest.log) (${SECONDS}s)" >> $S
LD_LIBRARY_PATH=/tmp/fa-s/lib python3 -c "import fa, torch; fa.attention; print([l.split()[-1] for l in open('/proc/self/maps') if 'libFARuntime' in l][0])" >> $S 2>&1
for r in 1 2; do
  for v in a s s4; do
    lib=/tmp/fa-${v%4}/lib; extra=X=0; [ $v = s4 ] && extra=FA_MINCTAS_SPLIT=4
    echo "== r$r $v (${SECONDS}s)" >> $S
    ( cd bench && env $extra LD_LIBRARY_PATH=$lib FA_CACHE_DIR=/tmp/cd-$v timeout 100 python3 bench_decode.py \
        --models gpt-oss_full,Llama_32/8 --batches 1,8 --caches 32768,131072 \
        --csv $OUT/decode-r$r-$v.csv 2>&1 | grep -v -i warn | grep -E "copy|graph" >> $S )
  done
done
echo "done (${SECONDS}s)" >> $S
cat $S
