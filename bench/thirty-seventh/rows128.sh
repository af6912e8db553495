#!/usr/bin/env bash
# The wgmma dK/dV kernel with 128-row query tiles up to D 64 (where dQ has
# its own kernel): bundle/rows128-overlay.tar.xz (bin/fa-run and
# lib/libFARuntime.so.22.1 of that build) over the bundle of 7ce4dd6.
# Carry ["bundle"].
# 1. checks against float64, backward, FA_AUTOTUNE=0, D 32 and 64, every
#    masked spec, bf16 (f16 once), --dq-atomics once (64 rows still);
# 2. memcheck and racecheck of causal and swa backward at D 64;
# 3. backward TFLOP/s, 7ce4dd6 (A) against the overlay (B), ab.sh.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
tar -xJf bundle/rows128-overlay.tar.xz -C $FA || exit 1
export FA_AUTOTUNE=0
{
  for d in 32 64; do
    for c in "causal|2,8,8,1000,1000,$d;1,4,4,197,197,$d" "mha|1,4,4,1000,777,$d;2,4,4,333,1000,$d" \
             "gqa_causal|1,32,8,333,333,$d" "streaming|1,8,8,1100,1100,$d" "swa|1,8,2,5000,5000,$d"; do
      echo "kernels_spec/${c%%|*}.mlir|${c#*|}|--dtype bf16 --backward"
    done
  done
  echo "kernels_spec/gpt_oss.mlir|1,64,8,1000,1000,64|--dtype bf16 --backward"
  echo "kernels_spec/mha.mlir|1,4,4,1000,777,64|--dtype f16 --backward"
  echo "kernels_spec/causal.mlir|2,8,8,1000,1000,64|--dtype bf16 --backward --dq-atomics"
} | device_checks /tmp/checks-rows128.log
device_sanitize causal 1,4,4,1000,1000,64 --backward
device_sanitize swa 1,8,2,3000,3000,64 --backward
left=$((585 - SECONDS))
timeout $left bash bench/twenty-third/ab.sh 2 bundle/rows128-overlay.tar.xz \
  "causal|4,32,32,4096,4096,64 mha|4,32,32,4096,4096,64 gqa_causal|4,32,8,4096,4096,64 gpt_oss|2,64,8,4096,4096,64 swa|1,32,8,8192,8192,64 causal|4,32,32,4096,4096,32" \
  > $OUT/ab.log 2>&1
echo "== A/B, A 7ce4dd6, B 128-row dK/dV tiles to D 64 (${SECONDS}s)" >> $S; cat $OUT/ab.log >> $S
echo "done ${SECONDS}s" >> $S
cat $S
