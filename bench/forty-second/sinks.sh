#!/usr/bin/env bash
# carry ["bundle"]: dsinks summed from the D kernel's per-block partials
# (issue 14). Checks against float64 (fa-run --check, the gpt-oss specs'
# backward at odd shapes, bf16 and f16, with dQ by atomics, deterministic,
# and on the mma.sync kernels), memcheck and racecheck of the new kernels,
# the torch tests that take sinks, determinism and the fallback layout,
# then each kernel's time (bwd_parts.py) and the gpt-oss rows beside flex
# (bench_gpu.py).
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
chk() {
  echo "check $*: $(FA_CACHE_DIR=/tmp/c-chk FA_AUTOTUNE=0 timeout 150 $R "$@" --target gpu --check 2>&1 | grep -E 'shape=|rror|FAIL' | tr '\n' ' ' | cut -c1-400)" >> $S
}
chk kernels_spec/gpt_oss.mlir --dtype bf16 --backward --shape 1,64,8,1531,1531,64
chk kernels_spec/gpt_oss.mlir --dtype f16 --backward --shape 3,64,8,777,777,64
chk kernels_spec/gpt_oss.mlir --dtype bf16 --backward --dq-atomics --shape 2,64,8,1000,1000,64
chk kernels_spec/gpt_oss.mlir --dtype bf16 --backward --deterministic --shape 2,64,8,65,1000,64
chk kernels_spec/gpt_oss.mlir --dtype bf16 --backward --mma-generation mma-sync --shape 1,64,8,1531,1531,64
chk kernels_spec/gpt_oss.mlir --dtype f32 --backward --shape 1,64,8,333,333,64
for tool in memcheck racecheck; do
  FA_CACHE_DIR=/tmp/c-chk FA_AUTOTUNE=0 timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 $R kernels_spec/gpt_oss.mlir --target gpu --dtype bf16 --backward --check --shape 2,64,8,1000,1000,64 > /tmp/san.log 2>&1
  echo "$tool gpt_oss 2,64,8,1000,1000,64 rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.log | tr '\n' ' ')" >> $S
done
device_python /tmp/py.log || exit 1
( PYTHONPATH=$PY_DIR FA_CACHE_DIR=/tmp/fa-pycache timeout 300 python3 -m pytest -q -p no:cacheprovider python/tests/test_torch.py -k "deterministic or fallback or against_float64 or head_dims or sink" 2>&1 | tail -4 ) >> $S
PYTHONPATH=$PY_DIR FA_CACHE_DIR=/tmp/c-py timeout 300 python3 bench/forty-second/bwd_parts.py > $OUT/bwd-parts.log 2>&1
grep -v -i warn $OUT/bwd-parts.log >> $S
device_bench gpt-oss 200 --variants gpt-oss-full,gpt-oss-window-128 --seqs 8192 --head-dims 64 --impls fa,flex --reps 20
python3 bench/bars.py "$OUT"/bench-*.csv >> $S 2>&1
echo "done ${SECONDS}s" >> $S
cat $S
