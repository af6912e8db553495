#!/usr/bin/env bash
# HEAD's first GPU run (the 64-bit counter and the review mend's PTX were
# not run before): checks on grids with more query blocks than SMs, the
# hopper stage, memcheck and racecheck, then the pytest cases that capture
# fa in CUDA graphs (the per-call counter) and torch.compile. Every fa-run
# under `timeout`; each stage's logs packed into $OUT as it ends; stops at
# the first failure.
S=$OUT/summary.txt; W=/tmp/v; rm -rf $W; mkdir -p $W
bash bench/twenty-fourth/persist2.sh > /dev/null || exit 1
FA_GPU_STAGES=pytest FA_PYTEST_TIMEOUT=150 FA_PYTEST_ARGS="python/tests/test_torch.py -k graph" \
  timeout 170 scripts/gpu-run.sh $W/py > /dev/null 2>&1
echo "pytest: $(tail -n 1 $W/py/pytest.log)" >> $S
tar -czf $OUT/py.tgz -C $W py
cat $S
