#!/usr/bin/env bash
# carry ["bundle"] packed at the session's last code change (fd0c398 or
# later): the conformance grid at D 32 (the forward's 128-key tiles; every
# variant, bf16 and f16, forward and backward, against float64) beside
# test_torch.py's CUDA checks against float64, its deterministic and
# bound-call tests (the table's D 32 and 64 rows now take dQ by
# reduce-adds).
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S || exit 1
device_python /tmp/python.log || exit 1
device_conformance 32 &
device_torch_tests 200 "(cuda and (float64 or deterministic or bshd or bound)) or head_dims_on_the_gpu"
wait
echo "done ${SECONDS}s" >> $S
cat $S
