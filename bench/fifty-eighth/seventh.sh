#!/usr/bin/env bash
# Seventh device call of the fifty-eighth session. carry ["bundle"]: the
# fourth call's bundle (cd3d8f7's C++). The shipped table's rows of the
# pipelined wgmma forwards the lazy rescale and the uniform warp index
# changed, made again: D 64 full, causal, windows 1024 and 4096, D 96 and
# D 128 full and causal.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S || exit 1
device_retune full:64,causal:64,window-4096:64,window-1024:64,full:96,causal:96,full:128,causal:128 430
echo "done (${SECONDS}s)" >> $S
cat $S
