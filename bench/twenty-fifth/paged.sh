#!/usr/bin/env bash
# Paged decode with the block-table lookups of tile t + 2 issued before
# tile t's math, K's and V's copies sharing them; every cp.async tile copy
# now computes its rows apart from its copies (overlay $1). Checks against
# float64: the decode entries (split, packed, MHA-like and 16-row shapes),
# the mma.sync forwards and backwards (1 and 2 K/V stages), whose copies
# changed too; the Python decode/paged/append tests; memcheck and racecheck
# on the decode kernels; then time: fa-run A/B and paged_bw.py.
S=$OUT/summary.txt; W=/tmp/pg; rm -rf $W; mkdir -p $W
export FA_BUNDLE_OVERLAY=$1 FA_CHECK_PREFIX="timeout 170"
source bench/twenty-fifth/decode-checks.sh
FA_GPU_STAGES=checks FA_CHECK_JOBS=10 FA_CHECKS="$(lines)" timeout 220 scripts/gpu-run.sh $W/checks > /dev/null 2>&1
echo "checks: $(grep -c '^== ' $W/checks/checks.log) runs, $(grep -c FAILED $W/checks/checks.log) failed" >> $S
cp $W/checks/checks.log $OUT/checks.log
if grep -q FAILED $W/checks/checks.log 2>/dev/null || [ ! -f $W/checks/checks.log ]; then cat $S; exit 1; fi
for tool in memcheck racecheck; do
  FA_CHECK_PREFIX="timeout 80 compute-sanitizer --tool $tool --error-exitcode 9" FA_GPU_STAGES=checks \
    FA_CHECKS="kernels_spec/gpt_oss_decode.mlir|3,64,8,1,3000,64;40,64,8,2,300,64|--dtype bf16" \
    timeout 100 scripts/gpu-run.sh $W/$tool > /dev/null 2>&1
  echo "$tool: $(grep -c '^== ' $W/$tool/checks.log) runs, $(grep -cE 'ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards' $W/$tool/checks.log) clean" >> $S
  cp $W/$tool/checks.log $OUT/$tool.log
done
FA_GPU_STAGES=pytest FA_PYTEST_TIMEOUT=150 FA_PYTEST_ARGS="python/tests/test_torch.py python/tests/test_examples.py -k decode" \
  timeout 170 scripts/gpu-run.sh $W/py > /dev/null 2>&1
echo "pytest: $(grep -E 'passed|failed' $W/py/pytest.log | tail -n 1)" >> $S
cp $W/py/pytest.log $OUT/pytest.log
unset FA_BUNDLE_OVERLAY FA_CHECK_PREFIX
AB_FLAGS= timeout 120 bash bench/twenty-third/ab.sh 2 "$1" "gpt_oss_decode|8,64,8,1,32768,64 gpt_oss_decode|1,64,8,1,131072,64" >> $S 2>&1
PYTHONPATH=/tmp/fa-python timeout 60 python3 bench/nineteenth/paged_bw.py >> $S 2>&1
cat $S
