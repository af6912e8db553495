#!/usr/bin/env bash
# carry ["bundle"]: the dQ kernel on a persistent grid (issue 14). The
# bundle is the persistent build; bundle/main-overlay.tar.xz is 917e03b's
# fa-run and runtime (a block per query block). Checks against float64 of
# the new build (backward, odd shapes, every variant, D 64/80/128/256,
# f16, GQA, Sq != Sk, one item per block with --wgmma-persistent=false),
# memcheck and racecheck, then fa-run backward TFLOP/s of both builds,
# alternated.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
device_overlay m bundle/main-overlay.tar.xz || exit 1
check_line() {
  echo "check $*: $(FA_CACHE_DIR=/tmp/c-chk FA_AUTOTUNE=0 timeout 150 $R "$@" --target gpu --backward --check 2>&1 | grep -E 'dq=|rror|FAIL|imeout' | sed 's/fwd=.*bwd=/bwd=/' | tr '\n' ' ' | cut -c1-500)" >> $S
}
check_line kernels_spec/gpt_oss.mlir --dtype bf16 --shape 2,64,8,1531,1531,64
check_line kernels_spec/causal.mlir --dtype bf16 --shape 2,8,8,1531,1531,128
check_line kernels_spec/causal.mlir --dtype bf16 --shape 1,8,8,777,777,64
check_line kernels_spec/mha.mlir --dtype f16 --shape 2,4,4,333,1025,80
check_line kernels_spec/gqa_causal.mlir --dtype bf16 --shape 1,32,8,1000,1000,128
check_line kernels_spec/streaming.mlir --dtype bf16 --shape 2,8,8,1531,1531,64
check_line kernels_spec/swa.mlir --dtype bf16 --shape 1,16,16,3000,3000,96
check_line kernels_spec/causal.mlir --dtype bf16 --shape 1,4,4,1000,1000,256
check_line kernels_spec/causal.mlir --dtype bf16 --shape 1,8,8,777,777,64 --wgmma-persistent=false
for tool in memcheck racecheck; do
  FA_CACHE_DIR=/tmp/c-chk FA_AUTOTUNE=0 timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 $R kernels_spec/gpt_oss.mlir --kernel gpt_oss_sliding --target gpu --dtype bf16 --backward --check --shape 1,64,8,1000,1000,64 > /tmp/san.log 2>&1
  echo "$tool gpt_oss_sliding 1,64,8,1000,1000,64 rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.log | tr '\n' ' ')" >> $S
done
for round in 1 2; do
  for v in a m; do
    device_build_tflops $v gpt_oss 2,64,8,8192,8192,64 --kernel gpt_oss_sliding --backward
    device_build_tflops $v gpt_oss 2,64,8,8192,8192,64 --kernel gpt_oss_full --backward
    device_build_tflops $v causal 4,32,32,4096,4096,64 --backward
    device_build_tflops $v swa 2,32,32,8192,8192,64 --backward
    device_build_tflops $v causal 4,16,16,4096,4096,128 --backward
  done
done
echo "done ${SECONDS}s" >> $S
cat $S
