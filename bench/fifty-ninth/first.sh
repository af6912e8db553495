#!/usr/bin/env bash
# First device call of the fifty-ninth session. carry ["bundle"]: (1) what
# a memset node costs a graph-replayed fa.decode step, and a step's cost
# with eight steps in one graph (issue 18; memset_probe.py); (2) the bars
# with bench_gpu.py --alternate (each shape's implementations in four
# alternating rounds of ten calls), D 80-256 against SDPA, the dense ones
# against sdpa-cudnn and flex, the variants against flex.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S || exit 1
device_python /tmp/py.log || exit 1
PYTHONPATH=$PY_DIR FA_CACHE_DIR=/tmp/c-py timeout 200 python3 bench/fifty-ninth/memset_probe.py > $OUT/memset-probe.log 2>&1
grep -v -i warn $OUT/memset-probe.log >> $S
echo "== probe done ${SECONDS}s" >> $S
A="--alternate --rounds 4 --reps 10"
device_bench dims 150 --variants full,causal --seqs 4096 --head-dims 80,96,128,256 --impls fa,sdpa-cudnn,sdpa-flash2 $A
device_bench dense 170 --variants causal,gqa-causal,full --seqs 4096 --head-dims 64,128 --impls fa,sdpa-cudnn,flex $A
device_bench variants 130 --variants window-4096,window-1024+4-sinks,gpt-oss-full,gpt-oss-window-128 \
  --seqs 8192 --head-dims 64 --impls fa,flex $A
python3 bench/bars.py "$OUT"/bench-*.csv >> "$S" 2>&1
echo "done (${SECONDS}s)" >> $S
cat $S
