#!/usr/bin/env bash
# First device call of the fifty-eighth session: part (1) of
# bench/fifty-seventh/next.sh (its header says how overlays l and u are
# built). carry ["bundle"]: checks of l (lazy rescale) and u (uniform warp
# index) against float64, memcheck/racecheck of l, then a, l and u on the
# shipped table at D 64 (mha, causal, gpt-oss full) and causal D 128.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S l bundle/l-overlay.tar.xz u bundle/u-overlay.tar.xz || exit 1
CHECKS=$(cat <<LINES
bf16 kernels_spec/mha.mlir --shape 2,8,8,1531,1531,64
bf16 kernels_spec/causal.mlir --shape 2,8,8,1000,1000,128
bf16 kernels_spec/gpt_oss.mlir --kernel gpt_oss_full --shape 1,64,8,777,777,64
bf16 kernels_spec/streaming.mlir --shape 1,8,8,2000,2000,80
f16 kernels_spec/swa.mlir --shape 1,16,4,197,5000,96
bf16 kernels_spec/gqa_causal.mlir --shape 1,32,8,1000,1000,128
bf16 kernels_spec/mha.mlir --shape 1,4,4,333,1025,256
bf16 kernels_spec/causal.mlir --shape 1,4,4,4096,4096,32
LINES
)
device_forward_checks l <<< "$CHECKS"
device_forward_checks u <<< "$CHECKS"
echo "checks done (${SECONDS}s)" >> $S
device_on l device_sanitize causal 1,4,4,1000,1000,64
device_on l device_sanitize gpt_oss 1,64,8,197,197,64 --kernel gpt_oss_full
DEVICE_AUTOTUNE=table device_build_compare 2 "a l u" mha:2,64,64,8192,8192,64 \
  causal:2,64,64,8192,8192,64 gpt_oss:2,64,8,8192,8192,64 \
  causal:4,16,16,4096,4096,128
echo "done (${SECONDS}s)" >> $S
cat $S
