#!/usr/bin/env bash
# The thirty-sixth session's third call, on main's build (carry ["bundle"]):
# issue 13's forward bars beside the peers, the first time since masked
# tiles by bounds (thirty-third session) and the decode work: bench_gpu.py
# with FA_AUTOTUNE=table (the shipped table), bf16, B*S 16k, 20 single calls
# per row: dense D 64/128 at S 4k against cuDNN and flex; the windowed and
# gpt-oss variants at D 64, S 8k, against flex. Then bench/bars.py over
# the CSVs. Arguments: the two benches' limits in seconds (230 each).
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
device_bars "${1:-230}" "${2:-230}"
echo "done ${SECONDS}s" >> $S
cat $S
