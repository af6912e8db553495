#!/usr/bin/env bash
# The Python launch path with torch's raw current-stream query: host time
# per step and single-call against queued timing under autograd (full D
# 128; builds the Python package), then the tests of stream order, CUDA
# graphs and the backward memo on the GPU.
S=$OUT/summary.txt
FA_GPU_STAGES=host-overhead FA_HOST_ARGS="--shapes 4,16,4096,128 --grad --full --breakdown" \
  timeout 200 scripts/gpu-run.sh /tmp/h3 > /dev/null 2>&1
cp /tmp/h3/host-overhead.log $OUT/host-full-grad.log
grep -E "single_ms|host_us|  [a-zA-Z_.]" $OUT/host-full-grad.log >> $S
PYTHONPATH=/tmp/fa-python FA_CACHE_DIR=/tmp/c3-py timeout 150 python3 -m pytest -q -p no:cacheprovider \
  python/tests/test_torch.py -k "stream or keeps_the_backward or graph" > $OUT/pytest.log 2>&1
echo "pytest: $(tail -n 1 $OUT/pytest.log)" >> $S
cat $S
