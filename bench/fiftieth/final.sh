#!/usr/bin/env bash
# carry ["bundle"] packed at the session's last code change (dQ by
# reduce-adds the default; the windowed mma.sync forward packing a kv
# head's group): the conformance grid at D 64 and 128 (every variant, bf16
# and f16, forward and backward against float64) beside test_torch.py's
# CUDA checks against float64, its deterministic, bshd-gradient, bound-call,
# window and sink tests and every head dim's GPU test; then issue 13's and
# 14's bars (bench_gpu.py, fa beside cuDNN and flex).
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S || exit 1
device_python /tmp/python.log || exit 1
device_conformance 64,128 &
device_torch_tests 240 "(cuda and (float64 or deterministic or bshd or bound or window or sink)) or head_dims_on_the_gpu"
wait
device_bars 120 150
echo "done ${SECONDS}s" >> $S
cat $S
