#!/usr/bin/env bash
# carry ["bundle"] (the bundle of 27ecdcc). This tree's Python API (the
# eager backward through the forward's record): the engine's hand-off and
# single_parts.py's split of single backward calls, the forward's GPU
# activities at causal D 64, then issue 13's and 14's bars (device_bars).
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S || exit 1
device_python $OUT/py.log || exit 1
export FA_CACHE_DIR=/tmp/fc
echo "== single_parts.py" >> $S
PYTHONPATH=$PY_DIR timeout 150 python3 bench/fifty-fourth/single_parts.py 2>&1 | grep -v -i warn >> $S
echo "== forward activities, causal 4,32,4096,64" >> $S
(cd bench && PYTHONPATH=$PY_DIR timeout 100 python3 host_overhead.py --grad --shapes 4,32,4096,64 --forward-kernels 2>&1 | grep -v -i warn >> $S)
PYTHONPATH=$PY_DIR device_bars 110 150
echo "done (${SECONDS}s)" >> $S
cat $S
