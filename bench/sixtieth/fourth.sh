#!/usr/bin/env bash
# Fourth device call of the sixtieth session. carry ["bundle"] (b412972's
# build): the dense and head-dim bars with bench_gpu.py --alternate (their
# kernels unchanged by this session; the windowed rows are the second and
# third calls'), so that one build's bars are all in this session's runs.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S || exit 1
A="--alternate --rounds 4 --reps 10"
device_bench dims 150 --variants full,causal --seqs 4096 --head-dims 80,96,128,256 --impls fa,sdpa-cudnn,sdpa-flash2 $A
device_bench dense 170 --variants causal,gqa-causal,full --seqs 4096 --head-dims 64,128 --impls fa,sdpa-cudnn,flex $A
python3 bench/bars.py "$OUT"/bench-*.csv >> "$S" 2>&1
echo "done (${SECONDS}s)" >> $S
cat $S
