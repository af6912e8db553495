#!/usr/bin/env bash
# The thirty-ninth session's last call (carry ["bundle"], main after the
# row statistics change): ncu source counters (stall samples per SASS
# instruction) of the backward kernels that the next step on issue 14
# would change: the dK/dV kernel that also adds dQ (--dq-atomics: five
# GEMMs a tile pair, FlashAttention-3's count, where the default's dK/dV
# and dQ kernels make seven) at causal D 128 and D 64, and the default's
# dQ kernel at causal D 128.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
device_ncu ncu-atomics-128 wgmma_dk_dv causal 1,16,16,8192,8192,128 --dq-atomics
device_ncu ncu-atomics-64 wgmma_dk_dv causal 1,16,16,8192,8192,64 --dq-atomics
device_ncu ncu-dq-128 wgmma_dq causal 1,16,16,8192,8192,128
for f in "" --dq-atomics; do
  echo "causal 4,16,16,4096,4096,128 $f $(device_tflops causal 4,16,16,4096,4096,128 --backward $f) (${SECONDS}s)" >> $S
done
cat $S
