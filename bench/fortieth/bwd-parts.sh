#!/usr/bin/env bash
# Where the full D 128 backward's time goes through the Python API (main's
# build with the retuned table; carry ["bundle"]): bench_gpu.py timed it at
# 3.05 ms (450.6 TFLOP/s) where the tuner's own timing of the program was
# 2.67 ms. host_overhead.py --backward-kernels: each GPU activity of one
# torch.autograd.grad, fa's and SDPA's.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
device_python /tmp/py.log || exit 1
FA_AUTOTUNE=table PYTHONPATH=$PY_DIR timeout 200 python3 bench/host_overhead.py --shapes "4,16,4096,128" \
  --grad --full --backward-kernels --time-limit 150 >> $S 2>&1
cat $S
