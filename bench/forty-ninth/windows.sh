#!/usr/bin/env bash
# carry ["bundle"] packed at 0a1779d: the shipped table gains rows for
# windows of 1024 and 4096 (make_tuning_table.py's new window-1024 and
# window-4096 cases, D 64 and 128, S 1k/4k/16k). Until now a window class
# without rows took the compiler's tiles (dQ's own kernel in the
# backward). Copy $OUT/t/TunedConfigs.inc into lib/Runtime/.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S || exit 1
device_retune window-1024:64,window-1024:128,window-4096:64,window-4096:128 300
echo "done ${SECONDS}s" >> $S
cat $S
