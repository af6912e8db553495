#!/usr/bin/env bash
# The twenty-sixth session's closing call (H200), on the committed build:
# the hopper stage (every config the tuner may pick, odd shapes, D 32-256,
# multi-item grids: checks against float64, and the SASS report), the
# dense D 64 rows of bench_gpu.py beside cuDNN (the shipped table), and the
# torch tests on the GPU up to a first failure.
S=$OUT/summary.txt; : > $S; W=/tmp/ver; rm -rf $W; mkdir -p $W
FA_CHECK_PREFIX="timeout 60" FA_GPU_STAGES=hopper timeout 200 scripts/gpu-run.sh $W/hopper > /dev/null 2>&1
echo "hopper: $(grep -c '^== ' $W/hopper/hopper-checks.log) runs, $(grep -c FAILED $W/hopper/hopper-checks.log) failed" >> $S
grep -E "spill|HGMMA" $W/hopper/hopper-sass.log | head -12 >> $S
tar -czf $OUT/hopper.tgz -C $W hopper
FA_AUTOTUNE=table FA_GPU_STAGES=bench FA_BENCH_TIME_LIMIT=170 FA_BENCH_TIMEOUT=190 \
  FA_BENCH_ARGS="--variants causal,gqa-causal,full --seqs 4096 --head-dims 64 --impls fa,sdpa-cudnn" \
  timeout 200 scripts/gpu-run.sh $W/bench > /dev/null 2>&1
cp $W/bench/bench.csv $OUT/bench-d64.csv 2>/dev/null; cut -d, -f1,2,5,9,10,12 $W/bench/bench.csv >> $S
PYTHONPATH=/tmp/fa-python FA_CACHE_DIR=/tmp/c-py timeout 150 python3 -m pytest -q -x -p no:cacheprovider \
  python/tests/test_torch.py > $OUT/pytest.log 2>&1
echo "pytest: $(tail -n 1 $OUT/pytest.log)" >> $S
cat $S
