#!/usr/bin/env bash
# carry ["bundle"]: D computed in the persistent wgmma dQ kernel (o a third
# fixed tile; the dQ kernel runs before dK/dV and writes D and dsinks'
# partials; no D kernel) at D 32-96. Checks against float64 (dq, dk, dv,
# dsinks) at odd shapes on the new path and on the paths that keep the D
# kernel (D 128, --wgmma-persistent=false, --dq-atomics), sanitizers, the
# torch tests that touch the backward on CUDA, then fa-run backward TFLOP/s
# against HEAD's fa-run and runtime (bundle/head-overlay.tar.xz) and
# bench_gpu.py's gpt-oss rows beside flex.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S h bundle/head-overlay.tar.xz || exit 1
device_check_lines <<'LINES'
kernels_spec/gpt_oss.mlir --dtype bf16 --shape 2,64,8,1531,1531,64
kernels_spec/gpt_oss.mlir --dtype bf16 --shape 1,64,8,50,50,64
kernels_spec/gpt_oss.mlir --dtype f16 --shape 3,64,8,777,777,64
kernels_spec/causal.mlir --dtype bf16 --shape 1,8,8,300,300,32
kernels_spec/causal.mlir --dtype bf16 --shape 2,8,8,1531,1531,80
kernels_spec/swa.mlir --dtype bf16 --shape 1,16,16,3000,3000,96
kernels_spec/mha.mlir --dtype f16 --shape 2,4,4,333,1025,80
kernels_spec/causal.mlir --dtype bf16 --shape 2,8,8,1531,1531,128
kernels_spec/streaming.mlir --dtype bf16 --shape 2,8,8,1531,1531,64
kernels_spec/gqa_causal.mlir --dtype bf16 --shape 1,32,8,1000,1000,64
kernels_spec/causal.mlir --dtype bf16 --shape 1,8,8,777,777,64 --wgmma-persistent=false
kernels_spec/gpt_oss.mlir --dtype bf16 --shape 2,64,8,1000,1000,64 --dq-atomics
kernels_spec/gpt_oss.mlir --dtype bf16 --shape 2,64,8,1000,1000,64 --deterministic
kernels_spec/mha.mlir --dtype bf16 --shape 3,8,8,555,555,64
kernels_spec/gpt_oss.mlir --dtype bf16 --shape 1,64,8,100,300,96
kernels_spec/mha.mlir --dtype bf16 --shape 1,8,8,65,65,64
LINES
for tool in memcheck racecheck; do
  FA_CACHE_DIR=/tmp/c-chk1 FA_AUTOTUNE=0 timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 $R kernels_spec/gpt_oss.mlir --kernel gpt_oss_sliding --target gpu --dtype bf16 --backward --check --shape 1,64,8,1000,1000,64 > /tmp/san.log 2>&1
  echo "$tool gpt_oss_sliding 1,64,8,1000,1000,64 rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.log | tr '\n' ' ')" >> $S
done
echo "sanitizers done (${SECONDS}s)" >> $S
for v in h a h a; do
  device_build_tflops $v gpt_oss 2,64,8,8192,8192,64 --kernel gpt_oss_sliding --backward
  device_build_tflops $v causal 4,32,32,4096,4096,64 --backward
done
device_build_tflops h gpt_oss 2,64,8,8192,8192,64 --kernel gpt_oss_full --backward
device_build_tflops a gpt_oss 2,64,8,8192,8192,64 --kernel gpt_oss_full --backward
device_build_tflops h swa 2,32,32,8192,8192,64 --backward
device_build_tflops a swa 2,32,32,8192,8192,64 --backward
device_build_tflops h causal 2,16,16,8192,8192,96 --backward
device_build_tflops a causal 2,16,16,8192,8192,96 --backward
echo "ab done (${SECONDS}s)" >> $S
device_python /tmp/py.log || exit 1
device_torch_tests 150 "gradient_in_bshd or repeated_backwards or bshd_views or deterministic or sink"
device_bench variants 120 --variants gpt-oss-full,gpt-oss-window-128 --seqs 8192 --head-dims 64 --impls fa,flex --reps 20
echo "done ${SECONDS}s" >> $S
cat $S
