#!/usr/bin/env bash
# Issue 18, third call: the split-KV forward's warps without rows skip the
# math (skip.diff; the second call measured it, its checks did not run),
# checked against float64 (fa-run --check of split-KV decode shapes with 1
# to 6 warps' packed rows, memcheck and racecheck, test_torch.py's decode
# and paged tests); and its K/V tiles in 2, 3 or 4 stages (stages.diff:
# FA_SPLIT_STAGES, an experiment knob). Carry ["bundle"]:
# bundle/n-overlay.tar.xz (main's fa-run and libFARuntime) and
# bundle/s-overlay.tar.xz (skip + stages knob).
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S a bundle/n-overlay.tar.xz s bundle/s-overlay.tar.xz || exit 1
device_python $OUT/py.log || exit 1
export PYTHONPATH=$PY_DIR
check() {  # build env-assignment fa-run-args...
  local v=$1 e=$2; shift 2
  echo "check $v $e $*: $(env $e FA_CACHE_DIR=/tmp/c-chk-$v-${e#*=} FA_AUTOTUNE=0 LD_LIBRARY_PATH=/tmp/fa-$v/lib \
    timeout 90 /tmp/fa-$v/bin/fa-run "$@" --target gpu --dtype bf16 --check 2>&1 | tail -1)" >> $S
}
for e in FA_SPLIT_STAGES=2 FA_SPLIT_STAGES=3; do
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
check s FA_SPLIT_STAGES=4 kernels_spec/causal.mlir --shape 1,28,4,1,8191,128 &
check s FA_SPLIT_STAGES=4 kernels_spec/gpt_oss_decode.mlir --kernel gpt_oss_decode_full --shape 2,64,8,3,9000,64 &
wait
for tool in memcheck racecheck; do
  for spec in "kernels_spec/causal.mlir --shape 1,16,2,1,3000,128" \
              "kernels_spec/gpt_oss_decode.mlir --kernel gpt_oss_decode_full --shape 1,64,8,3,3000,64"; do
    FA_CACHE_DIR=/tmp/c-san FA_AUTOTUNE=0 LD_LIBRARY_PATH=/tmp/fa-s/lib timeout 100 compute-sanitizer --tool $tool \
      --error-exitcode 9 /tmp/fa-s/bin/fa-run $spec --target gpu --dtype bf16 --check > /tmp/san.log 2>&1
    echo "$tool $spec: rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.log | tr '\n' ' ')" >> $S
  done
done
echo "checks done (${SECONDS}s)" >> $S
for r in 1 2; do
  for v in a s2 s3 s4; do
    lib=/tmp/fa-${v:0:1}/lib; extra=FA_SPLIT_STAGES=${v:1:1}; [ $v = a ] && extra=X=0
    echo "== r$r $v (${SECONDS}s)" >> $S
    ( cd bench && env $extra LD_LIBRARY_PATH=$lib FA_CACHE_DIR=/tmp/cd-$v timeout 60 python3 bench_decode.py \
        --models gpt-oss_full,Llama_32/8 --batches 1,8 --caches 32768,131072 \
        --csv $OUT/decode-r$r-$v.csv 2>&1 | grep -v -i warn | grep -E "copy|graph" >> $S )
  done
done
LD_LIBRARY_PATH=/tmp/fa-s/lib FA_CACHE_DIR=/tmp/pc-s timeout $((560 - SECONDS)) python3 -m pytest -q -p no:cacheprovider \
  python/tests/test_torch.py -k "decode or paged or kvcache or append" > $OUT/pytest.log 2>&1
echo "pytest s (rc $?): $(tail -1 $OUT/pytest.log) (${SECONDS}s)" >> $S
echo "done (${SECONDS}s)" >> $S
cat $S
