#!/usr/bin/env bash
# The bundle's build (paged lookups ahead of the copies, the Python
# program memo fix): checks against float64 of the decode entries (split,
# packed, MHA-like and 16-row shapes) and the mma.sync forwards and
# backwards whose copies changed; memcheck and racecheck on the decode
# kernels; host_overhead.py under autograd (full D 128), which builds the
# Python package; then the Python decode, graph and memo tests; and
# paged_bw.py. Every stage under `timeout`; the summary grows as it goes.
S=$OUT/summary.txt; W=/tmp/c2; rm -rf $W; mkdir -p $W
export FA_CHECK_PREFIX="timeout 170"
source bench/twenty-fifth/decode-checks.sh
FA_GPU_STAGES=checks FA_CHECK_JOBS=10 FA_CHECKS="$(lines)" timeout 200 scripts/gpu-run.sh $W/checks > /dev/null 2>&1
echo "checks: $(grep -c '^== ' $W/checks/checks.log) runs, $(grep -c FAILED $W/checks/checks.log) failed" >> $S
cp $W/checks/checks.log $OUT/checks.log
for tool in memcheck racecheck; do
  FA_CHECK_PREFIX="timeout 80 compute-sanitizer --tool $tool --error-exitcode 9" FA_GPU_STAGES=checks \
    FA_CHECKS="kernels_spec/gpt_oss_decode.mlir|3,64,8,1,3000,64;40,64,8,2,300,64|--dtype bf16" \
    timeout 90 scripts/gpu-run.sh $W/$tool > /dev/null 2>&1
  echo "$tool: $(grep -c '^== ' $W/$tool/checks.log) runs, $(grep -cE 'ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards' $W/$tool/checks.log) clean" >> $S
  cp $W/$tool/checks.log $OUT/$tool.log
done
FA_GPU_STAGES=host-overhead FA_HOST_ARGS="--shapes 4,16,4096,128 --grad --full --forward-kernels --profile --breakdown" \
  timeout 150 scripts/gpu-run.sh $W/host > /dev/null 2>&1
cp $W/host/host-overhead.log $OUT/host-full-grad.log
grep -E "single_ms|host_us|fa.attention|prepare_backward" $OUT/host-full-grad.log >> $S
PYTHONPATH=/tmp/fa-python FA_CACHE_DIR=/tmp/c2-py timeout 150 python3 -m pytest -q -p no:cacheprovider \
  python/tests/test_torch.py python/tests/test_examples.py -k "decode or graph or keeps_the_backward or paged" > $OUT/pytest.log 2>&1
echo "pytest: $(tail -n 1 $OUT/pytest.log)" >> $S
PYTHONPATH=/tmp/fa-python timeout 60 python3 bench/nineteenth/paged_bw.py >> $S 2>&1
cat $S
