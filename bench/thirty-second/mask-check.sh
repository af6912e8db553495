#!/usr/bin/env bash
# For the session that merges next/interval-mask: the bundle built from
# this branch (masked tiles by bounds), bundle/main-overlay.tar.xz from main
# (bin/fa-run and lib/libFARuntime.so.22.1, stripped). The tensor-core
# conformance grid at D 64/128 and 32/80 against float64 (every variant,
# bf16/f16, forward and backward: the mask serves the forwards, split-KV
# and dQ kernels), memcheck and racecheck of masked shapes, then the
# branch (A) against main (B), forward and backward. carry ["bundle"].
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
device_conformance 64,128 32,80
for c in "causal 1,4,4,197,197,64" "streaming 1,4,4,1100,1100,128" "gpt_oss 1,64,8,300,300,64" "causal 1,28,4,1,3000,128"; do
  device_sanitize $c --backward
done
AB_FLAGS=--backward timeout $((590 - SECONDS)) bash bench/twenty-third/ab.sh 2 bundle/main-overlay.tar.xz \
  "causal|4,32,32,4096,4096,64 causal|16,16,16,1024,1024,128 streaming|2,32,32,8192,8192,64 swa|1,32,8,8192,8192,128 gpt_oss|2,64,8,4096,4096,64" \
  > $OUT/ab.log 2>&1
echo "== branch (A) against main (B)" >> $S; cat $OUT/ab.log >> $S
cat $S
