#!/usr/bin/env bash
# carry ["bundle"]: the eager backward's gradients from one allocation
# against three (buffer_ab.py).
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
device_python /tmp/py.log || exit 1
cd bench/forty-third
PYTHONPATH=$PY_DIR FA_CACHE_DIR=/tmp/c-py timeout 200 python3 buffer_ab.py > $OUT/buffer-ab.log 2>&1
cd ../..
grep -v -i warn $OUT/buffer-ab.log >> $S
echo "done ${SECONDS}s" >> $S
cat $S
