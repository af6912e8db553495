#!/usr/bin/env bash
# Programmatic dependent launch (carry ["bundle"]): checks against float64
# with it on (fa-run --check, backward and split-KV decode shapes), the
# sanitizers, test_torch.py's decode and graph tests, then A/B rounds of
# FA_PROGRAMMATIC_LAUNCH=0/1: bench_decode.py and chain.py. $1: checks or
# ab (the default).
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
device_python /tmp/py.log || exit 1
if [ "${1:-ab}" = checks ]; then
chk() {
  echo "check $*: $(FA_CACHE_DIR=/tmp/c-chk FA_AUTOTUNE=0 timeout 120 $R "$@" --target gpu --check 2>&1 | grep -E 'shape=|rror|FAIL' | tr '\n' ' ' | cut -c1-300)" >> $S
}
chk kernels_spec/causal.mlir --dtype bf16 --backward --shape 2,8,8,1531,1531,128
chk kernels_spec/mha.mlir --dtype bf16 --backward --dq-atomics --shape 2,8,8,1531,1531,64
chk kernels_spec/gqa_causal.mlir --dtype f16 --backward --shape 1,32,8,777,777,96
chk kernels_spec/gpt_oss.mlir --dtype bf16 --backward --shape 1,64,8,1531,1531,64
chk kernels_spec/causal.mlir --dtype bf16 --shape 1,28,4,1,8191,128
chk kernels_spec/gpt_oss_decode.mlir --dtype bf16 --shape 4,64,8,1,8192,64
for tool in memcheck racecheck; do
  for a in "kernels_spec/causal.mlir --backward --shape 1,4,4,1000,1000,128" "kernels_spec/causal.mlir --shape 1,28,4,1,8191,128"; do
    FA_CACHE_DIR=/tmp/c-chk FA_AUTOTUNE=0 timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $R $a --target gpu --dtype bf16 --check > /tmp/san.log 2>&1
    echo "$tool $a rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.log | tr '\n' ' ')" >> $S
  done
done
( PYTHONPATH=$PY_DIR FA_CACHE_DIR=/tmp/fa-pycache timeout 240 python3 -m pytest -q -p no:cacheprovider python/tests/test_torch.py -k "decode or paged or graph" 2>&1 | tail -3 ) >> $S
fi
if [ "${1:-ab}" = ab ]; then
for round in 1 2; do
  for pdl in 0 1; do
    FA_PROGRAMMATIC_LAUNCH=$pdl PYTHONPATH=$PY_DIR timeout 120 python3 bench/forty-first/chain.py 2>&1 | grep pdl= >> $S
    echo "pdl=$pdl decode: $(cd bench && FA_PROGRAMMATIC_LAUNCH=$pdl PYTHONPATH=$PY_DIR timeout 150 python3 bench_decode.py --models gpt-oss_full,Llama_32/8 --batches 1,8 --caches 8192,32768 2>&1 | grep -v -i warn | tail -12)" >> $S
  done
done
fi
cat $S
