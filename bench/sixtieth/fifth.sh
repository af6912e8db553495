#!/usr/bin/env bash
# Fifth device call of the sixtieth session. carry ["bundle"]: a (b412972's
# build) against x-overlay (x: the same with each consumer warpgroup's
# masks from its own 64 rows, TileBuilder::keyPhases's own-rows form, where
# they fit the registers: not D 80 or 256, two stages), fa-run forwards in
# alternating rounds; then float64 checks of x.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S x bundle/x-overlay.tar.xz || exit 1
device_build_compare 3 "a x" causal:4,32,32,4096,4096,64 causal:4,16,16,4096,4096,128 \
  gqa_causal:4,32,8,4096,4096,128 swa:2,32,32,8192,8192,64 streaming:2,32,32,8192,8192,64 \
  causal:4,21,21,4096,4096,96 causal:4,10,10,4096,4096,192
device_forward_checks x <<'LINES'
bf16 kernels_spec/swa.mlir --shape 1,4,4,5000,5000,64
bf16 kernels_spec/swa.mlir --shape 1,4,2,3001,5003,128
f16 kernels_spec/swa.mlir --shape 1,4,4,4700,4300,96
bf16 kernels_spec/streaming.mlir --shape 1,4,4,2000,2000,64
bf16 kernels_spec/streaming.mlir --shape 1,4,4,1500,2100,128
bf16 kernels_spec/causal.mlir --shape 1,8,8,1000,1000,64
bf16 kernels_spec/causal.mlir --shape 1,4,4,1200,700,128
f16 kernels_spec/causal.mlir --shape 1,4,4,700,1531,96
bf16 kernels_spec/causal.mlir --shape 1,4,4,1001,1001,192
bf16 kernels_spec/gqa_causal.mlir --shape 1,32,8,333,1025,128
bf16 kernels_spec/gpt_oss.mlir --kernel gpt_oss_full --shape 1,64,8,777,777,64
LINES
echo "done (${SECONDS}s)" >> $S
cat $S
