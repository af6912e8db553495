#!/usr/bin/env bash
# carry ["bundle"]: issue 13's and 14's bars on main's kernels (the bundle
# of this session's first call: main plus an experiment switch left off,
# i.e. the kernels of 8e1e136, before f1232f1), fa beside cuDNN and flex
# in one run (bench_gpu.py, shipped table): device_bars' dense rows (D 64
# and 128, S 4k) and windowed / gpt-oss rows (D 64, S 8k), then
# bench/bars.py over both.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S || exit 1
device_bars 120 150
echo "done ${SECONDS}s" >> $S
cat $S
