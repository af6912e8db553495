#!/usr/bin/env bash
# For the next session's first device calls (not run in this one: no device
# time left). carry ["bundle"], with two overlays built first, each from
# this tree with one patch (and scripts/pack-bundle.sh first where the
# bundle is older than HEAD):
#   for p in l:lazy-rescale u:uniform-warp; do
#     git apply bench/fifty-seventh/${p#*:}.diff && ninja -C build &&
#     tar -cJf bundle/${p%%:*}-overlay.tar.xz -C build bin/fa-run lib/libFARuntime.so.22.1 &&
#     git apply -R bench/fifty-seventh/${p#*:}.diff; done; ninja -C build
# (1) l, the wgmma forward's lazy rescale (m moves only past 8 base-2
# logits, O's D / 2 multiplies a thread under a warp-uniform branch), and
# u, the warp index made uniform for the wgmma forward (its tile loops
# 2-6% shorter at D 64 and 128): checks against float64 over head dims,
# masks, sinks and f16 on both, memcheck and racecheck of l, then a, l and
# u on the shipped table's configs at D 64 (mha, causal, gpt-oss: its
# sliding layer runs mma.sync, the same in all three; its full layer is
# issue 13's 1.4x flex) and D 128, alternated. (2) D 80's serial schedule
# with three consumers of 128 and 144 keys (ptxas 13.0: no spills) against
# its pipelined 112. If one call's 600 s do not hold it all, run (2) apart.
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
device_knobs 1 4,16,16,4096,4096 "mha 80" \
  "mha 80 --wgmma-schedule serial --wgmma-groups 3 --mma-block-n 128" \
  "mha 80 --wgmma-schedule serial --wgmma-groups 3 --mma-block-n 144" \
  "causal 80" "causal 80 --wgmma-schedule serial --wgmma-groups 3 --mma-block-n 128"
echo "done (${SECONDS}s)" >> $S
cat $S
