#!/usr/bin/env bash
# carry ["bundle"]: the torch tests of this session's Python changes on
# CUDA (the bound backward with misaligned operands, dO read in place in
# the [B, S, H, D] layout).
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
device_python /tmp/py.log || exit 1
device_torch_tests 110 "gradient_in_bshd or repeated_backwards or bshd_views"
echo "done ${SECONDS}s" >> $S
cat $S
