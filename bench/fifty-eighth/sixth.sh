#!/usr/bin/env bash
# Sixth device call of the fifty-eighth session. carry ["bundle"]: the
# fourth call's bundle (cd3d8f7's C++). The shipped table's D 80 rows made
# again: full D 80 now runs the serial schedule by default, and causal
# D 80's row (two consumers, 2026-11-28) predates the lazy rescale and the
# uniform warp index; fa-run had three consumers 2.3% faster.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S || exit 1
device_retune full:80,causal:80 300
echo "done (${SECONDS}s)" >> $S
cat $S
