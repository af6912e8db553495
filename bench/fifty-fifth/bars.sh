#!/usr/bin/env bash
# carry ["bundle"]. Issue 13's and 14's bars (device_bars) with
# bench_gpu.py's new steady-clock warm-up (--warmup-seconds 0.6, the
# default now), the SM clock sampled every 20 ms; then ncu of the D 64
# wgmma forward under a window of 4096 and without one (2x32x8k), for where
# window-4096's forward time goes.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S || exit 1
device_python $OUT/py.log || exit 1
export FA_CACHE_DIR=/tmp/fc
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,clocks_throttle_reasons.active \
  --format=csv -lms 50 > $OUT/clocks.csv 2>&1 &
SMI=$!
PYTHONPATH=$PY_DIR device_bars 120 170
kill $SMI
device_ncu ncu-swa '^attention_forward_wgmma_d64$' swa 2,32,32,8192,8192,64
device_ncu ncu-mha '^attention_forward_wgmma_d64$' mha 2,32,32,8192,8192,64
echo "done (${SECONDS}s)" >> $S
cat $S
