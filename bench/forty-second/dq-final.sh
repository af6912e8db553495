#!/usr/bin/env bash
# carry ["bundle"]: the committed persistent dQ (producer at 32 registers,
# D <= 128) beside 917e03b (bundle/main-overlay.tar.xz): gpt-oss's sliding
# layer backward and causal D 128, one round, and one check.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
device_overlay m bundle/main-overlay.tar.xz || exit 1
for v in a m; do
  device_build_tflops $v gpt_oss 2,64,8,8192,8192,64 --kernel gpt_oss_sliding --backward
done
echo "check: $(FA_CACHE_DIR=/tmp/c-time FA_AUTOTUNE=0 timeout 60 $R kernels_spec/gpt_oss.mlir --kernel gpt_oss_sliding --target gpu --dtype bf16 --backward --check --shape 1,64,8,1531,1531,64 2>&1 | grep -oE 'dq=.*' | tr '\n' ' ')" >> $S
cat $S
