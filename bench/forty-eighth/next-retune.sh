#!/usr/bin/env bash
# The next session's second call (after next.sh), carry ["bundle"] as
# there: the shipped table's D 32 and D 64 full and causal rows made again,
# now that the dK/dV kernel that adds dQ runs 128-row tiles there (its
# backward candidates: dQ's own kernel, or the reduce-adds). Copy
# $OUT/t/TunedConfigs.inc into lib/Runtime/, rebuild the bundle, and run
# bars.sh on it in a third call.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S || exit 1
device_retune full:64,causal:64,full:32,causal:32 420
echo "done ${SECONDS}s" >> $S
cat $S
