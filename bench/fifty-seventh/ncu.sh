#!/usr/bin/env bash
# For a next session (not run in this one: the first call's limit cut its
# ncu step). carry ["bundle"]. ncu of the wgmma forwards at D 64, 80 and 96
# (mha 4x16x4k, the shipped table's configs: issue 13's D 80 bar, whose
# kernel runs 6.5% above the D 64-96 line a score) and of the dK/dV kernel
# at D 128 and 256 (mha 4x16x4k and 4x8x4k: issue 14's D 256 bar, whose
# tile loop is 64x32 wgmmas and address arithmetic in the SASS).
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S || exit 1
device_ncu_forward ncu-mha-d80 mha_forward_wgmma_d80$ mha 4,16,16,4096,4096,80
device_ncu_forward ncu-mha-d64 mha_forward_wgmma_d64$ mha 4,16,16,4096,4096,64
device_ncu_forward ncu-mha-d96 mha_forward_wgmma_d96$ mha 4,16,16,4096,4096,96
device_ncu ncu-dkdv-d128 mha_backward_wgmma_dk_dv_d128$ mha 4,16,16,4096,4096,128
device_ncu ncu-dkdv-d256 mha_backward_wgmma_dk_dv_d256$ mha 4,8,8,4096,4096,256
echo "done (${SECONDS}s)" >> $S
cat $S
