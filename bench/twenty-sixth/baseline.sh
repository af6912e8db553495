#!/usr/bin/env bash
# The twenty-sixth session's first call (H200): where issue 13's unmet
# forward rows spend their time. (1) probe.py: single-call against queued
# time and fa's kernel time (torch.profiler) for the D 64 rows, fa beside
# flex / cuDNN (FA_AUTOTUNE unset: the shipped table); (2) fa-run --repeat
# of gpt-oss's sliding forward at windows 64-384 (key tiles per block);
# (3) ncu --set full of the window-128 forward.
S=$OUT/summary.txt; : > $S
FA_GPU_STAGES=none scripts/gpu-run.sh /tmp/g0 > /dev/null 2>&1   # unpack
FA=/tmp/fa-bundle
source /dev/stdin <<<"$(sed -n '/^PY_DIR=/,/^}/p' scripts/gpu-run.sh)"
build_fa_python $OUT/pybuild.log || echo "python build failed" >> $S
export LD_LIBRARY_PATH=$FA/lib PYTHONPATH=$PY_DIR PYTHONUNBUFFERED=1
export FA_CACHE_DIR=/tmp/c-probe
timeout 300 python3 bench/twenty-sixth/probe.py \
  --variants gpt-oss-window-128,window-1024+4-sinks,window-4096,gpt-oss-full \
  --seqs 8192 --head-dims 64 --impls fa,flex > $OUT/probe-variants.log 2>&1
timeout 200 python3 bench/twenty-sixth/probe.py \
  --variants causal,full,gqa-causal --seqs 4096 --head-dims 64 \
  --impls fa,sdpa-cudnn > $OUT/probe-dense.log 2>&1
cut -c1-150 $OUT/probe-*.log >> $S
for w in 64 128 192 256 384; do
  echo "window $w: $(timeout 60 $FA/bin/fa-run bench/twenty-sixth/windows.mlir --kernel sliding_w$w --target gpu \
    --shape 2,64,8,8192,8192,64 --repeat 30 2>&1 | grep -i 'tflop' | head -2 | tr '\n' ' ')" >> $S
done
FA_AUTOTUNE=0 timeout 200 ncu --clock-control none --set full --import-source no \
  --kernel-name regex:'sliding_w128_forward' --launch-count 1 -f -o /tmp/ncu-w128 \
  $FA/bin/fa-run bench/twenty-sixth/windows.mlir --kernel sliding_w128 --target gpu \
  --shape 2,64,8,8192,8192,64 > $OUT/ncu-w128.log 2>&1
ncu -i /tmp/ncu-w128.ncu-rep --page details --print-details all >> $OUT/ncu-w128.log 2>&1
grep -E "Duration|Compute \(SM\) Thr|Memory Thr|Registers Per|Achieved Occ|Theoretical Occ|Block Limit|Warp Cycles Per Issued|Issue Slots Busy|Stall|L1/TEX Hit|L2 Hit|DRAM Throughput|Waves Per SM|Grid Size|Block Size|Executed Ipc A" $OUT/ncu-w128.log | head -40 >> $S
cat $S
