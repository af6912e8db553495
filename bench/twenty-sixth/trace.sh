#!/usr/bin/env bash
# The twenty-sixth session's second call (H200): (1) launch_trace.py: host
# time before the first launch, launch latency and GPU time of single calls,
# fa beside cuDNN and flex; (2) the sliding forward (mma.sync, 64-row
# blocks) with .minnctapersm 3 / 4 (FA_EXP_MINCTASM, an experiment build):
# time and checks; (3) wgmma windows 512-4096 with and without sink tokens.
S=$OUT/summary.txt; : > $S
FA_GPU_STAGES=none scripts/gpu-run.sh /tmp/g0 > /dev/null 2>&1
FA=/tmp/fa-bundle
source /dev/stdin <<<"$(sed -n '/^PY_DIR=/,/^}/p' scripts/gpu-run.sh)"
build_fa_python $OUT/pybuild.log || echo "python build failed" >> $S
export LD_LIBRARY_PATH=$FA/lib PYTHONPATH=$PY_DIR PYTHONUNBUFFERED=1
R="$FA/bin/fa-run"
for m in none 3 4; do
  for w in 64 128 192; do
    env FA_CACHE_DIR=/tmp/c-m$m $([ $m != none ] && echo FA_EXP_MINCTASM=$m) \
      timeout 60 $R bench/twenty-sixth/windows.mlir --kernel sliding_w$w --target gpu \
      --shape 2,64,8,8192,8192,64 --repeat 30 2>&1 | grep -o "sliding.*fwd_tflops=[0-9.]*" | sed "s/^/minctasm $m: /" >> $S
  done
done
FA_EXP_MINCTASM=4 FA_CACHE_DIR=/tmp/c-m4 timeout 120 $R bench/twenty-sixth/windows.mlir --kernel sliding_w128 \
  --target gpu --check --shape "2,64,8,8192,8192,64;1,64,8,197,197,64;2,64,8,100,1000,64;1,64,8,1000,300,64" 2>&1 | tail -5 >> $S
FA_EXP_MINCTASM=4 FA_CACHE_DIR=/tmp/c-m4 timeout 150 $R kernels_spec/gpt_oss.mlir --kernel gpt_oss_sliding \
  --target gpu --check --backward --dtype f16 --shape "1,64,8,197,197,64;2,64,8,1000,1000,64" 2>&1 | tail -3 >> $S
for w in w512 w1024 w1024s4 w2048 w4096; do
  FA_CACHE_DIR=/tmp/c-ww timeout 60 $R bench/twenty-sixth/windows_wgmma.mlir --kernel $w --target gpu \
    --shape 2,32,32,8192,8192,64 --repeat 30 2>&1 | grep -o "w[0-9s]* shape.*fwd_tflops=[0-9.]*" >> $S
done
FA_CACHE_DIR=/tmp/c-trace timeout 240 python3 bench/twenty-sixth/launch_trace.py \
  --variants causal,gqa-causal --seqs 4096 --impls fa,sdpa-cudnn > $OUT/trace.log 2>&1
FA_CACHE_DIR=/tmp/c-trace timeout 200 python3 bench/twenty-sixth/launch_trace.py \
  --variants gpt-oss-window-128 --seqs 8192 --impls fa,flex >> $OUT/trace.log 2>&1
grep -v -i warn $OUT/trace.log | cut -c1-260 >> $S
cat $S
