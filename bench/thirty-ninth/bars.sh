#!/usr/bin/env bash
# The thirty-ninth session's third call, on main's build after the row
# statistics change (carry ["bundle"]): issue 13's and 14's bars beside
# the peers: bench_gpu.py with FA_AUTOTUNE=table, bf16, B*S 16k, 20 single
# calls a row: dense D 64/128 at S 4k against cuDNN and flex, then the
# windowed and gpt-oss variants at D 64, S 8k, against flex; bench/bars.py
# over the CSVs.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" >> $S
device_bench dense 210 --variants causal,gqa-causal,full --seqs 4096 --head-dims 64,128 --impls fa,sdpa-cudnn,flex --reps 20
device_bench variants 170 --variants window-4096,window-1024+4-sinks,gpt-oss-full,gpt-oss-window-128 --seqs 8192 --head-dims 64 --impls fa,flex --reps 20
python3 bench/bars.py $OUT/bench-*.csv >> $S 2>&1
echo "done ${SECONDS}s" >> $S
cat $S
