#!/usr/bin/env bash
# The shipped table's rows for gpt-oss's sliding layer (window 128) at D
# 64 made again on 2e38f41's build (carry ["bundle"] packed there): its
# backward rows chose dQ by TMA reduce-adds (64-row dK/dV tiles) before
# the dK/dV kernel took 128-row tiles with dQ's own kernel, which fa-run
# then timed 7.6% faster on that layer. make_tuning_table.py --cases
# gpt-oss-window-128:64 --update lib/Runtime/TunedConfigs.inc: the other
# rows kept; the new table and the tuner's log come back.
source bench/lib/device.sh
S=$OUT/summary.txt
device_summary $S
device_retune gpt-oss-window-128:64 240
echo "done ${SECONDS}s" >> $S
cat $S
