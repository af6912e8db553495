#!/usr/bin/env bash
# carry ["bundle"]: each kernel of fa's forward + backward through autograd
# (bwd_parts.py) on issue 14's windowed, gpt-oss and dense D 64 rows.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
device_python /tmp/py.log || exit 1
PYTHONPATH=$PY_DIR FA_CACHE_DIR=/tmp/c-py timeout 400 python3 bench/forty-second/bwd_parts.py > $OUT/bwd-parts.log 2>&1
grep -v -i warn $OUT/bwd-parts.log >> $S
echo "done ${SECONDS}s" >> $S
cat $S
