#!/usr/bin/env bash
# carry ["bundle"] (2cd9871's C++; m-overlay: c498bc6's, before the split
# count's rule for masked specs with dynamic heads). (1) Issue 18: swa's and
# streaming's decode steps at shapes where the rule gives fewer splits (the
# first call's shapes got the same split count from both rules), timed on
# a and m alternated (m first in the second round). (2) Issue 13: the D 256
# forward with 80 keys a tile (two stages fit beside Q in 224 KiB) against
# its own 64, checked against float64 first; D 80's and 96's full rows with
# the table's grid section 1 against the compiler's sections.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S m bundle/m-overlay.tar.xz || exit 1
device_forward_checks a <<LINES
bf16 kernels_spec/mha.mlir --mma-block-n 80 --shape 2,8,8,1531,1531,256
bf16 kernels_spec/causal.mlir --mma-block-n 80 --shape 2,8,8,1531,1531,256
bf16 kernels_spec/causal.mlir --mma-block-n 80 --shape 1,8,2,777,1900,256
f16 kernels_spec/gqa_causal.mlir --mma-block-n 80 --shape 2,8,2,1000,1000,256
bf16 kernels_spec/swa.mlir --shape 4,32,8,1,32768,64
bf16 kernels_spec/streaming.mlir --shape 16,32,8,1,32768,64
bf16 kernels_spec/swa.mlir --shape 8,32,8,1,32768,32
bf16 kernels_spec/streaming.mlir --shape 24,32,8,1,32768,32
LINES
echo "checks done (${SECONDS}s)" >> $S
DEC=(swa:4,32,8,1,32768,64 swa:8,32,8,1,32768,64 streaming:16,32,8,1,32768,64
     swa:8,32,8,1,32768,32 streaming:24,32,8,1,32768,32 streaming:1,32,8,1,32768,64)
for v in a m; do
  for c in "${DEC[@]}"; do device_build_compile $v "${c%%:*}" "${c#*:}" & done
done
wait
for order in "a m" "m a"; do
  for c in "${DEC[@]}"; do
    for v in $order; do device_build_tflops $v "${c%%:*}" "${c#*:}"; done
  done
done
echo "decode done (${SECONDS}s)" >> $S
# (The call ran this step written out, before device.sh's device_knobs.)
device_knobs 2 4,16,16,4096,4096 "mha 256" "mha 256 --mma-block-n 80" \
  "causal 256" "causal 256 --mma-block-n 80" "mha 80" "mha 80 --grid-section 1" \
  "mha 96" "mha 96 --grid-section 1"
echo "done (${SECONDS}s)" >> $S
cat $S
