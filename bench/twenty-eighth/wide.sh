#!/usr/bin/env bash
# The twenty-eighth session's sixth call (H200): block-n 176 after the
# tile-size fix (smallerTileRows): the wgmma forward at D 128 (176-key
# tiles) and D 192/256 (80-key tiles, where 88 and 44 came before), and
# the mma.sync forward, each against float64. carry ["bundle"].
FA_GPU_STAGES=none scripts/gpu-run.sh /tmp/g0 > /dev/null 2>&1
FA=/tmp/fa-bundle R=$FA/bin/fa-run
export LD_LIBRARY_PATH=$FA/lib FA_AUTOTUNE=0 FA_CACHE_DIR=/tmp/c176
for d in 128 192 256; do
  echo "wgmma D$d: $(timeout 80 $R kernels_spec/causal.mlir --target gpu --dtype bf16 --check --mma-block-n 176 \
    --shape "1,8,2,1000,1000,$d;2,4,4,300,700,$d" 2>&1 | grep -oE " o=[0-9.e+-]+|FAIL.*|rror.*" | tr '\n' ' ')"
done
echo "mma-sync D256 f16: $(timeout 80 $R kernels_spec/causal.mlir --target gpu --dtype f16 --check --mma-block-n 176 \
  --mma-generation mma-sync --shape "1,4,2,300,300,256" 2>&1 | grep -oE " o=[0-9.e+-]+|FAIL.*|rror.*" | tr '\n' ' ')"
echo "wgmma D128 speed bn176: $(timeout 60 $R kernels_spec/causal.mlir --target gpu --dtype bf16 --repeat 30 \
  --mma-block-n 176 --shape 2,16,16,8192,8192,128 2>&1 | grep -oE 'fwd_tflops=[0-9.]+|rror.*')"
