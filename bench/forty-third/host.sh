#!/usr/bin/env bash
# carry ["bundle"]: where the host time of fa's backward call goes
# (bwd_host.py).
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
device_python /tmp/py.log || exit 1
PYTHONPATH=$PY_DIR FA_CACHE_DIR=/tmp/c-py timeout 400 python3 bench/forty-third/bwd_host.py > $OUT/bwd-host.log 2>&1
grep -v -i warn $OUT/bwd-host.log | head -150 >> $S
echo "done ${SECONDS}s" >> $S
cat $S
