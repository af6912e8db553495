#!/usr/bin/env bash
# Third device call of the fifty-eighth session. carry ["bundle"]: the
# bundle is 250516e (a), the overlay lu is ef81de6 (the lazy rescale).
# The wgmma forward's serial schedule against its pipelined default, on
# lu, three rounds at 4x16x4k (B*S 16k): D 80 (three consumers of 128 and
# 144 keys), D 64 (three of 128), D 96 (three of 96, two of 128) and
# D 128 (two of 128), full, causal and a 4096-key window.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S lu bundle/lu-overlay.tar.xz || exit 1
SER="--wgmma-schedule serial"
device_on lu device_knobs 3 4,16,16,4096,4096 \
  "mha 80" "mha 80 $SER --wgmma-groups 3 --mma-block-n 128" \
  "mha 80 $SER --wgmma-groups 3 --mma-block-n 144" \
  "causal 80" "causal 80 $SER --wgmma-groups 3 --mma-block-n 128" \
  "swa 80" "swa 80 $SER --wgmma-groups 3 --mma-block-n 128" \
  "mha 64" "mha 64 $SER --wgmma-groups 3 --mma-block-n 128" \
  "causal 64" "causal 64 $SER --wgmma-groups 3 --mma-block-n 128" \
  "mha 96" "mha 96 $SER --wgmma-groups 3 --mma-block-n 96" \
  "mha 96 $SER --wgmma-groups 2 --mma-block-n 128" \
  "mha 128" "mha 128 $SER --wgmma-groups 2 --mma-block-n 128"
echo "knobs done (${SECONDS}s)" >> $S
device_on lu device_ncu_forward ncu-mha-d80-serial mha_forward_wgmma_d80$ mha 4,16,16,4096,4096,80 $SER --wgmma-groups 3 --mma-block-n 128
echo "done (${SECONDS}s)" >> $S
cat $S
