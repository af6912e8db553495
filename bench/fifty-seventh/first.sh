#!/usr/bin/env bash
# carry ["bundle"] (2cd9871's C++; m-overlay: c498bc6's, before the split
# count's rule for masked specs with dynamic heads). (1) Issue 18: swa's
# and streaming's decode steps at D 32 and 64 (32/8 heads, the spec's
# heads dynamic), checked against float64 and timed on a and m alternated.
# (2) Issue 13: why the D 80 forward runs below D 64's and D 96's rate a
# score: fa-run over the wgmma forward's knobs at D 80 beside D 64 and 96,
# then ncu of the three kernels at the table's configs.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S m bundle/m-overlay.tar.xz || exit 1
device_forward_checks a <<LINES
bf16 kernels_spec/swa.mlir --shape 1,32,8,1,32768,64
bf16 kernels_spec/swa.mlir --shape 1,32,8,1,32768,32
bf16 kernels_spec/streaming.mlir --shape 1,32,8,1,32768,64
bf16 kernels_spec/streaming.mlir --shape 1,32,8,1,32768,32
bf16 kernels_spec/swa.mlir --shape 2,32,8,3,20000,64
bf16 kernels_spec/streaming.mlir --shape 3,16,4,2,9000,64
LINES
echo "checks done (${SECONDS}s)" >> $S
device_build_compare 2 "a m" swa:1,32,8,1,32768,64 swa:1,32,8,1,32768,32 \
  streaming:1,32,8,1,32768,64 streaming:1,32,8,1,32768,32 swa:2,32,8,1,65536,64
echo "decode done (${SECONDS}s)" >> $S
# (2) D 80's knobs, mha and causal 4x16x4k (bench_gpu.py's S 4k rows),
# FA_AUTOTUNE=0, one round; then ncu at the table's configs. (The call ran
# these steps written out, before device.sh's device_knobs and
# device_ncu_forward; its limit stopped it before the ncu.)
KNOBS=("80 --wgmma-groups 3 --mma-block-n 112" "80 --wgmma-groups 3 --mma-block-n 96"
       "80 --wgmma-groups 2 --mma-block-n 128" "80 --wgmma-groups 2 --mma-block-n 160"
       "80 --wgmma-groups 2 --mma-block-n 192" "64 --wgmma-groups 3 --mma-block-n 128"
       "64 --wgmma-groups 3 --mma-block-n 112" "96 --wgmma-groups 2 --mma-block-n 128")
device_knobs 1 4,16,16,4096,4096 "${KNOBS[@]/#/mha }" "${KNOBS[@]/#/causal }"
device_ncu_forward ncu-mha-d80 mha_forward_wgmma_d80$ mha 4,16,16,4096,4096,80
device_ncu_forward ncu-mha-d64 mha_forward_wgmma_d64$ mha 4,16,16,4096,4096,64
device_ncu_forward ncu-mha-d96 mha_forward_wgmma_d96$ mha 4,16,16,4096,4096,96
echo "done (${SECONDS}s)" >> $S
cat $S
