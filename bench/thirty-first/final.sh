#!/usr/bin/env bash
# The thirty-first session's fourth call, on the final build (staged O,
# two copies of Q up to D 128, the tensor-map cache): checks against
# float64 where two copies of Q are new (D 80-128, multi-item grids),
# memcheck and racecheck of a multi-item D 128 grid, then the final build
# (A) against the build before this session (B) on the cases the third
# call left open, two rounds. carry ["bundle"].
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
{
  for c in "causal|2,16,4,1000,1000,128;2,32,8,1000,1000,64" "causal|2,16,4,1000,1000,80;1,8,8,197,197,96" \
           "gqa_causal|1,32,8,333,333,128" "streaming|1,8,8,2100,2100,80;1,8,8,2100,2100,64" \
           "gpt_oss|1,64,8,1000,1000,64" "swa|1,32,8,3000,3000,128" "vit|2,12,12,197,197,64"; do
    echo "kernels_spec/${c%%|*}.mlir|${c#*|}|--dtype bf16"
  done
  echo "kernels_spec/mha.mlir|1,4,4,1000,777,96;2,4,4,1000,777,128|--dtype f16"
} | device_checks /tmp/checks.log
device_sanitize causal 2,16,4,1000,1000,128
echo "checks, sanitizers ${SECONDS}s" >> $S
AB_FLAGS= timeout 170 bash bench/twenty-third/ab.sh 2 bundle/old-overlay.tar.xz \
  "streaming|2,32,32,8192,8192,64 gpt_oss|2,64,8,8192,8192,64 mha|4,16,16,4096,4096,96 causal|4,16,16,4096,4096,128" \
  > $OUT/ab-final.log 2>&1
echo "== final (A) against before (B), ${SECONDS}s" >> $S; cat $OUT/ab-final.log >> $S
cat $S
