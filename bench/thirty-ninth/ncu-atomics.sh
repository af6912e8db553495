#!/usr/bin/env bash
# The thirty-ninth session's last call (carry ["bundle"], main after the
# row statistics change): ncu source counters (stall samples per SASS
# instruction) of the backward kernels that the next step on issue 14
# would change: the dK/dV kernel that also adds dQ (--dq-atomics: five
# GEMMs a tile pair, FlashAttention-3's count, where the default's dK/dV
# and dQ kernels make seven) at causal D 128 and D 64, and the default's
# dQ kernel at causal D 128.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader) (${SECONDS}s)" >> $S
for job in atomics-128:wgmma_dk_dv:128:--dq-atomics atomics-64:wgmma_dk_dv:64:--dq-atomics dq-128:wgmma_dq:128:; do
  IFS=: read -r name kernel d flags <<< "$job"
  name=ncu-$name
  FA_CACHE_DIR=/tmp/c-ncu FA_AUTOTUNE=0 timeout 120 ncu --section SpeedOfLight --section WarpStateStats \
    --section SourceCounters --metrics sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active \
    --kernel-name regex:$kernel --launch-count 1 -f -o /tmp/$name \
    $R kernels_spec/causal.mlir --target gpu --dtype bf16 --backward $flags --shape 1,16,16,8192,8192,$d > /tmp/$name.log 2>&1
  ncu -i /tmp/$name.ncu-rep --page details --print-details all >> /tmp/$name.log 2>&1
  ncu -i /tmp/$name.ncu-rep --page source --csv --print-source sass > /tmp/$name-sass.csv 2>&1
  echo "$name $(grep -E 'Pipe Tensor Cycles|Duration' /tmp/$name.log | head -2 | tr -s ' ' | tr '\n' ' ') (${SECONDS}s)" >> $S
  tar -czf $OUT/$name.tar.gz -C /tmp $name.log $name-sass.csv
done
for d in 128; do
  for f in "" --dq-atomics; do
    echo "causal 4,16,16,4096,4096,$d $f $(device_tflops causal 4,16,16,4096,4096,$d --backward $f) (${SECONDS}s)" >> $S
  done
done
cat $S
