#!/usr/bin/env bash
# carry ["bundle"]: the torch tests of this session's Python changes on
# CUDA (the bound backward with misaligned operands, dO read in place in
# the [B, S, H, D] layout).
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
device_python /tmp/py.log || exit 1
( PYTHONPATH=$PY_DIR FA_CACHE_DIR=/tmp/fa-pycache timeout 110 python3 -m pytest -q -p no:cacheprovider python/tests/test_torch.py -k "gradient_in_bshd or repeated_backwards or bshd_views" 2>&1 | tail -15 ) >> $S
echo "done ${SECONDS}s" >> $S
cat $S
