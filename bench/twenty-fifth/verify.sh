#!/usr/bin/env bash
# HEAD's first GPU run (the 64-bit counter and the review mend's PTX were
# not run before): checks on grids with more query blocks than SMs, the
# hopper stage, memcheck and racecheck, then the pytest cases that capture
# fa in CUDA graphs (the per-call counter) and torch.compile. Every fa-run
# under `timeout`; each stage's logs packed into $OUT as it ends; stops at
# the first failure.
S=$OUT/summary.txt; W=/tmp/v; rm -rf $W; mkdir -p $W
export FA_CHECK_PREFIX="timeout 75"
lines() {
  for c in "causal|2,16,4,1000,1000,128;2,32,8,1000,1000,64" "gpt_oss|1,64,8,1000,1000,64" \
           "mha|2,16,16,777,1025,128" "swa|1,32,8,3000,3000,64" "streaming|1,16,16,2100,2100,128" \
           "gqa_causal|1,32,8,1333,1333,128"; do
    echo "kernels_spec/${c%%|*}.mlir|${c#*|}|--dtype bf16"
  done
  echo "kernels_spec/gpt_oss.mlir|1,64,8,1000,1000,64|--dtype f16"
  for d in 32 80 96 192 256; do
    echo "kernels_spec/causal.mlir|2,16,4,1000,1000,$d|--dtype bf16"
  done
}
FA_GPU_STAGES=checks FA_CHECK_JOBS=8 FA_CHECKS="$(lines)" timeout 170 scripts/gpu-run.sh $W/multi > /dev/null 2>&1
echo "multi checks: $(grep -c '^== ' $W/multi/checks.log) runs, $(grep -c FAILED $W/multi/checks.log) failed" >> $S
tar -czf $OUT/multi.tgz -C $W multi /tmp/fa-checks
if grep -q FAILED $W/multi/checks.log 2>/dev/null || [ ! -f $W/multi/checks.log ]; then cat $S; exit 1; fi
FA_CHECK_PREFIX="timeout 60" FA_GPU_STAGES=hopper timeout 160 scripts/gpu-run.sh $W/hopper > /dev/null 2>&1
echo "hopper: $(grep -c '^== ' $W/hopper/hopper-checks.log) runs, $(grep -c FAILED $W/hopper/hopper-checks.log) failed" >> $S
tar -czf $OUT/hopper.tgz -C $W hopper
san() {
  echo "kernels_spec/causal.mlir|1,140,140,200,200,64;1,70,35,300,300,128|--dtype bf16"
  echo "kernels_spec/gpt_oss.mlir|1,160,8,130,130,64|--dtype bf16"
}
for tool in memcheck racecheck; do
  FA_CHECK_PREFIX="timeout 80 compute-sanitizer --tool $tool --error-exitcode 9" FA_GPU_STAGES=checks \
    FA_CHECKS="$(san)" timeout 90 scripts/gpu-run.sh $W/$tool > /dev/null 2>&1
  echo "$tool: $(grep -c '^== ' $W/$tool/checks.log) runs, $(grep -cE 'ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards' $W/$tool/checks.log) clean" >> $S
done
tar -czf $OUT/san.tgz -C $W memcheck racecheck
FA_GPU_STAGES=pytest FA_PYTEST_TIMEOUT=150 FA_PYTEST_ARGS="python/tests/test_torch.py -k graph" \
  timeout 170 scripts/gpu-run.sh $W/py > /dev/null 2>&1
echo "pytest: $(tail -n 1 $W/py/pytest.log)" >> $S
tar -czf $OUT/py.tgz -C $W py
cat $S
