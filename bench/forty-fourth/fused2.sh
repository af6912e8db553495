#!/usr/bin/env bash
# carry ["bundle"]: fused.sh's steps that its 600 s cut off: the odd
# gpt_oss check (Sq < Sk at D 96) alone with its output, the torch tests,
# the D 96 and swa A/B, bench_gpu.py's gpt-oss rows beside flex.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S h bundle/head-overlay.tar.xz || exit 1
FA_CACHE_DIR=/tmp/c-odd FA_AUTOTUNE=0 timeout 150 $R kernels_spec/gpt_oss.mlir --dtype bf16 --shape 1,64,8,100,300,96 --target gpu --backward --check > /tmp/odd.log 2>&1
echo "odd rc=$? (${SECONDS}s)" >> $S
tail -c 1500 /tmp/odd.log >> $S
device_python /tmp/py.log || exit 1
device_torch_tests 150 "gradient_in_bshd or repeated_backwards or bshd_views or deterministic or sink"
echo "pytest done (${SECONDS}s)" >> $S
device_bench variants 100 --variants gpt-oss-full,gpt-oss-window-128 --seqs 8192 --head-dims 64 --impls fa,flex --reps 20
for v in h a; do
  device_build_tflops $v causal 2,16,16,8192,8192,96 --backward
  device_build_tflops $v swa 2,32,32,8192,8192,64 --backward
done
echo "done ${SECONDS}s" >> $S
cat $S
