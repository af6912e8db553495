#!/usr/bin/env bash
# carry ["bundle"]: with D in the dQ kernel, whether the dQ kernel now
# beats the dK/dV kernel's reduce-adds (--dq-atomics) where the table picks
# those (full D 64 at 4k; causal D 64 for comparison), fa-run backward
# TFLOP/s; then issue 13's and 14's bars (bench_gpu.py, table configs).
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
for flags in "" --dq-atomics; do
  device_build_tflops a mha 4,32,32,4096,4096,64 --backward $flags
  device_build_tflops a causal 4,32,32,4096,4096,64 --backward $flags
done
echo "ab done ${SECONDS}s" >> $S
device_bars "${1:-200}" "${2:-250}"
echo "done ${SECONDS}s" >> $S
cat $S
