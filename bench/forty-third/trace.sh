#!/usr/bin/env bash
# carry ["bundle"]: the host side of one backward call (bwd_trace.py), and
# the bound backward's test on CUDA.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
device_python /tmp/py.log || exit 1
cd bench/forty-third
PYTHONPATH=$PY_DIR FA_CACHE_DIR=/tmp/c-py timeout 300 python3 bwd_trace.py > $OUT/bwd-trace.log 2>&1
cd ../..
grep -v -i warn $OUT/bwd-trace.log | head -120 >> $S
device_torch_tests 200 "bound or repeated or deterministic"
echo "done ${SECONDS}s" >> $S
cat $S
