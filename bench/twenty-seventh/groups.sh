#!/usr/bin/env bash
# The twenty-seventh session's second call (H200): consumer warpgroups of
# the D 64 wgmma forward (two of 240 registers against three of 160) for
# windows of 512-4096 keys and the dense variants, fa-run, FA_AUTOTUNE=0,
# alternating; then probe.py's issue-13 rows beside flex on this build.
S=$OUT/summary.txt; : > $S
FA_GPU_STAGES=none scripts/gpu-run.sh /tmp/g0 > /dev/null 2>&1
NEW=/tmp/fa-bundle
export FA_AUTOTUNE=0 LD_LIBRARY_PATH=$NEW/lib
for r in 1 2; do
  for w in w512 w1024 w1024s4 w2048 w4096; do
    for g in 2 3; do
      out=$(FA_CACHE_DIR=/tmp/gc timeout 60 $NEW/bin/fa-run bench/twenty-sixth/windows_wgmma.mlir --kernel $w \
        --target gpu --repeat 30 --wgmma-groups $g --shape 2,32,32,8192,8192,64 2>&1 | grep -oE 'fwd_tflops=[0-9.]+|error.*' | tr '\n' ' ')
      echo "r$r $w g$g $out" >> $S
    done
  done
  for c in "causal|4,32,32,4096,4096,64" "gqa_causal|4,64,16,4096,4096,64" "mha|4,32,32,4096,4096,64" "gpt_oss|2,64,8,8192,8192,64|--kernel=gpt_oss_full"; do
    IFS='|' read -r spec shape flags <<< "$c"
    for g in 2 3; do
      out=$(FA_CACHE_DIR=/tmp/gc timeout 60 $NEW/bin/fa-run kernels_spec/$spec.mlir --target gpu --dtype bf16 --repeat 30 \
        --wgmma-groups $g $flags --shape $shape 2>&1 | grep -oE 'fwd_tflops=[0-9.]+|error.*' | tr '\n' ' ')
      echo "r$r $spec $shape g$g $out" >> $S
    done
  done
done
unset FA_AUTOTUNE
export PYTHONUNBUFFERED=1
source bench/twenty-sixth/build-py.sh
build_py . /tmp/py-new $NEW/lib || echo "new python build failed" >> $S
PYTHONPATH=/tmp/py-new FA_CACHE_DIR=/tmp/c-new timeout 200 python3 bench/twenty-sixth/probe.py \
  --variants window-1024+4-sinks,window-4096,gpt-oss-full --seqs 8192 --head-dims 64,128 --impls fa,flex --settle \
  2>/dev/null | grep -v Warn > $OUT/probe.log
cut -c1-160 $OUT/probe.log >> $S
cat $S
