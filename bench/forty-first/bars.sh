#!/usr/bin/env bash
# The forty-first session's last call, on main's build with kernels
# launched as programmatic dependents (carry ["bundle"]): issue 13's and
# 14's bars (device_bars: dense rows at S 4k beside cuDNN and flex, the
# variants at S 8k D 64 beside flex; bench_gpu.py, FA_AUTOTUNE=table, bf16,
# B*S 16k, 20 single calls a row), then bars.py over both.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
device_bars "${1:-200}" "${2:-250}"
echo "done ${SECONDS}s" >> $S
cat $S
