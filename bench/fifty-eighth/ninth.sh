#!/usr/bin/env bash
# Ninth device call of the fifty-eighth session. carry ["bundle"]: the
# eighth call's. At bench_gpu.py's D 80 shape (4 x 25 heads x 4k), fa-run
# with FA_AUTOTUNE=0, three rounds: causal D 80's three consumers (the
# compiler's, the table's row now) against two (the row before); full D 80
# serial (the compiler's) against pipelined.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S || exit 1
device_knobs 3 4,25,25,4096,4096 "causal 80" "causal 80 --wgmma-groups 2" \
  "mha 80" "mha 80 --wgmma-schedule pipelined"
echo "done (${SECONDS}s)" >> $S
cat $S
