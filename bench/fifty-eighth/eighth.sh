#!/usr/bin/env bash
# Eighth device call of the fifty-eighth session. carry ["bundle"]: this
# tree (cd3d8f7 and the shipped table's rows made again in the sixth and
# seventh calls). The bars again: D 80, 96, 128 and 256 against SDPA, the
# dense ones against sdpa-cudnn and flex, the variants against flex.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S || exit 1
device_bench dims 150 --variants full,causal --seqs 4096 --head-dims 80,96,128,256 --impls fa,sdpa-cudnn,sdpa-flash2 --reps 20
device_bench dense 200 --variants causal,gqa-causal,full --seqs 4096 --head-dims 64,128 --impls fa,sdpa-cudnn,flex --reps 20
device_bench variants 150 --variants window-4096,window-1024+4-sinks,gpt-oss-full,gpt-oss-window-128 \
  --seqs 8192 --head-dims 64 --impls fa,flex --reps 20
python3 bench/bars.py "$OUT"/bench-*.csv >> "$S" 2>&1
echo "done (${SECONDS}s)" >> $S
cat $S
