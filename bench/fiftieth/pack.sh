#!/usr/bin/env bash
# carry ["bundle"]: the bundle of the packed windowed forward (the mma.sync
# forward under a window takes a kv head's group in a block, as the
# split-KV forward did) and bundle/base-overlay.tar.xz, fa-run and
# libFARuntime of db0ea28 ("o"). Checks of the new build against float64
# (forward and backward) where packing applies: gpt-oss's sliding layer
# (window 128, learnable sinks, 64/8 heads; Sq = Sk, Sq < Sk, Sq > Sk, f16),
# swa, streaming and an f32 window through --mma-generation mma-sync at D
# 64, 96 and 128, a decode shape; memcheck and racecheck; then forward
# TFLOP/s of gpt-oss 2x64/8x8k, old against new, kernels compiled first;
# then the table's window-128 class tuned again on the new build.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S o bundle/base-overlay.tar.xz || exit 1
SHAPE=2,64,8,8192,8192,64
for v in a o; do
  device_build_compile $v gpt_oss $SHAPE &
  device_build_compile $v gpt_oss $SHAPE --mma-kv-stages 2 &
done
device_build_compile a gpt_oss $SHAPE --mma-warps 8 &
device_check_lines <<'LINES'
kernels_spec/gpt_oss.mlir --dtype bf16 --shape 2,64,8,1000,1000,64
kernels_spec/gpt_oss.mlir --dtype f16 --shape 1,64,8,300,1025,64
kernels_spec/gpt_oss.mlir --dtype bf16 --shape 1,64,8,1025,300,64
kernels_spec/gpt_oss.mlir --dtype bf16 --shape 3,64,8,777,777,64 --mma-warps 8
kernels_spec/swa.mlir --dtype bf16 --shape 1,8,2,1000,1000,64 --mma-generation mma-sync
kernels_spec/swa.mlir --dtype bf16 --shape 2,12,4,333,333,96 --mma-generation mma-sync
kernels_spec/swa.mlir --dtype f16 --shape 1,8,2,777,5000,128 --mma-generation mma-sync
kernels_spec/streaming.mlir --dtype bf16 --shape 1,8,8,1000,1000,64 --mma-generation mma-sync
kernels_spec/swa.mlir --dtype f32 --shape 1,8,2,500,500,64
kernels_spec/causal.mlir --dtype bf16 --shape 1,28,4,1,3000,128
LINES
wait
echo "compiled (${SECONDS}s)" >> $S
device_sanitize gpt_oss 1,64,8,1000,1000,64 --backward
device_sanitize swa 1,8,2,777,777,64 --mma-generation mma-sync
for v in o a; do device_build_tflops $v gpt_oss $SHAPE; done
for v in o a; do device_build_tflops $v gpt_oss $SHAPE --mma-kv-stages 2; done
device_build_tflops a gpt_oss $SHAPE --mma-warps 8
for v in o a; do device_build_tflops $v gpt_oss $SHAPE; done
device_retune gpt-oss-window-128:64 120
echo "done ${SECONDS}s" >> $S
cat $S
