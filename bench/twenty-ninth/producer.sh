#!/usr/bin/env bash
# The twenty-ninth session's seventh call (H200): the wgmma forward's
# producer keeps 32 registers beside two consumers of 232 where its K/V
# tile rows take more than two TMA boxes (D 80, 96, 192:
# wgmmaForwardWideProducer); FA_EXP_NARROW_PRODUCER=1 (an experiment
# switch of that build only, not committed) gives the old 24 / 240.
# 1. checks against float64 with the new split: multi-item persistent
#    grids and odd shapes at D 80 (two consumers: streaming, swa window
#    2048), D 96 and D 192, forward and backward;
# 2. fa-run forward A/B, old / new, FA_AUTOTUNE=0. carry ["bundle"].
S=$OUT/summary.txt; : > $S
FA_GPU_STAGES=none scripts/gpu-run.sh /tmp/g0 > /dev/null 2>&1
FA=/tmp/fa-bundle R=$FA/bin/fa-run
export LD_LIBRARY_PATH=$FA/lib FA_AUTOTUNE=0
chk() {
  echo "check $1 $2 $3: $(FA_CACHE_DIR=/tmp/cn timeout 100 $R kernels_spec/$1.mlir --target gpu --dtype $3 \
    --check --backward --shape "$2" 2>&1 | grep -oE " o=[0-9.e+-]+|FAIL.*|rror.*" | tr '\n' ' ')" >> $S
}
chk mha "2,16,16,3000,2000,96;1,8,8,197,1025,192" bf16 &
chk causal "3,16,16,4000,4000,96;1,4,2,1000,1000,192" f16 &
chk streaming "2,16,16,3000,3000,80;1,8,8,2100,2100,96;1,4,4,1000,1000,192" bf16 &
wait
for r in 1 2; do
  for c in causal\|2,16,16,8192,8192,96 mha\|4,16,16,4096,4096,96 causal\|2,8,8,8192,8192,192 \
      mha\|4,8,8,4096,4096,192 streaming\|2,16,16,8192,8192,80 streaming\|2,16,16,8192,8192,96; do
    IFS='|' read -r spec shape <<< "$c"
    a=$(FA_EXP_NARROW_PRODUCER=1 FA_CACHE_DIR=/tmp/co timeout 60 $R kernels_spec/$spec.mlir --target gpu \
      --dtype bf16 --repeat 30 --shape $shape 2>&1 | grep -oE 'fwd_tflops=[0-9.]+|rror.*')
    b=$(FA_CACHE_DIR=/tmp/cn timeout 60 $R kernels_spec/$spec.mlir --target gpu --dtype bf16 --repeat 30 \
      --shape $shape 2>&1 | grep -oE 'fwd_tflops=[0-9.]+|rror.*')
    echo "r$r $spec $shape: 24/240 $a | 32/232 $b" >> $S
  done
  [ $SECONDS -gt 330 ] && break
done
cat $S
