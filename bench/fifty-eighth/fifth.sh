#!/usr/bin/env bash
# Fifth device call of the fifty-eighth session. carry ["bundle"]: the
# bundle of the fourth call (cd3d8f7's C++). The variants' bars: window
# 4096, window 1024 + 4 sink tokens, gpt-oss full and window 128, D 64,
# S 8k, against flex.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S || exit 1
device_bench variants 240 --variants window-4096,window-1024+4-sinks,gpt-oss-full,gpt-oss-window-128 \
  --seqs 8192 --head-dims 64 --impls fa,flex --reps 20
python3 bench/bars.py "$OUT"/bench-*.csv >> "$S" 2>&1
echo "done (${SECONDS}s)" >> $S
cat $S
