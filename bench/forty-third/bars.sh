#!/usr/bin/env bash
# carry ["bundle"]: the bound backward against Program.run (bound_ab.py),
# then issue 13's and 14's bars beside the peers (device_bars).
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
device_python /tmp/py.log || exit 1
cd bench/forty-third
PYTHONPATH=$PY_DIR FA_CACHE_DIR=/tmp/c-py timeout 200 python3 bound_ab.py > $OUT/bound-ab.log 2>&1
cd ../..
grep -v -i warn $OUT/bound-ab.log >> $S
echo "ab done ${SECONDS}s" >> $S
device_bars "${1:-200}" "${2:-250}"
echo "done ${SECONDS}s" >> $S
cat $S
