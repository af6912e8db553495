#!/usr/bin/env bash
# carry ["bundle"]: the landed persistent dQ kernel (1f97a55: producer at 32
# registers, consumers at 232, D <= 128) on the GPU, which the forty-second
# session could not run. Checks against float64 (backward, odd shapes, every
# variant, D 64/80/96/128/256, f16, GQA, Sq != Sk, and a block per query
# block with --wgmma-persistent=false), run side by side; memcheck and
# racecheck; then fa-run backward TFLOP/s against 917e03b's fa-run and
# runtime (bundle/main-overlay.tar.xz) where the change mattered.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S m bundle/main-overlay.tar.xz || exit 1
device_check_lines <<'LINES'
kernels_spec/gpt_oss.mlir --dtype bf16 --shape 2,64,8,1531,1531,64
kernels_spec/causal.mlir --dtype bf16 --shape 2,8,8,1531,1531,128
kernels_spec/causal.mlir --dtype bf16 --shape 1,8,8,777,777,64
kernels_spec/mha.mlir --dtype f16 --shape 2,4,4,333,1025,80
kernels_spec/gqa_causal.mlir --dtype bf16 --shape 1,32,8,1000,1000,128
kernels_spec/streaming.mlir --dtype bf16 --shape 2,8,8,1531,1531,64
kernels_spec/swa.mlir --dtype bf16 --shape 1,16,16,3000,3000,96
kernels_spec/causal.mlir --dtype bf16 --shape 1,4,4,1000,1000,256
kernels_spec/causal.mlir --dtype bf16 --shape 1,8,8,777,777,64 --wgmma-persistent=false
kernels_spec/mha.mlir --dtype bf16 --shape 3,8,8,555,555,64
LINES
for tool in memcheck racecheck; do
  FA_CACHE_DIR=/tmp/c-chk1 FA_AUTOTUNE=0 timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 $R kernels_spec/gpt_oss.mlir --kernel gpt_oss_sliding --target gpu --dtype bf16 --backward --check --shape 1,64,8,1000,1000,64 > /tmp/san.log 2>&1
  echo "$tool gpt_oss_sliding 1,64,8,1000,1000,64 rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.log | tr '\n' ' ')" >> $S
done
for v in a m a m; do
  device_build_tflops $v gpt_oss 2,64,8,8192,8192,64 --kernel gpt_oss_sliding --backward
  device_build_tflops $v causal 4,32,32,4096,4096,64 --backward
done
echo "done ${SECONDS}s" >> $S
cat $S
