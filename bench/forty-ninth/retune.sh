#!/usr/bin/env bash
# carry ["bundle"] as first.sh: the shipped table's D 32 and D 64 full and
# causal rows made again now that the dK/dV kernel that adds dQ runs
# 128-row tiles there; $OUT/t/TunedConfigs.inc goes into lib/Runtime/.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S || exit 1
device_retune full:64,causal:64,full:32,causal:32 420
echo "done ${SECONDS}s" >> $S
cat $S
