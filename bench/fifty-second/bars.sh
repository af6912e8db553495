#!/usr/bin/env bash
# carry ["bundle"] (the bundle of a29e172). Issue 13's and 14's bars
# through this tree's Python API (head counts fixed on the GPU, the eager
# backward without once_differentiable's wrapper): device_bars (dense rows
# S 4k D 64 and 128 beside cuDNN and flex; windowed and gpt-oss rows S 8k
# D 64 beside flex), then w128_single.py where time is left.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S || exit 1
device_python $OUT/py.log || exit 1
device_bars 110 140
PYTHONPATH=$PY_DIR FA_CACHE_DIR=/tmp/cp timeout 45 python3 bench/fifty-second/w128_single.py 2>&1 | grep -v -i warn >> $S
echo "done (${SECONDS}s)" >> $S
cat $S
