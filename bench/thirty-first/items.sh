#!/usr/bin/env bash
# The thirty-first session's first call: (1) forward TFLOP/s at B*S = 16k
# tokens over S = 1k..16k (fa-run --repeat 30, kernel time by CUDA events,
# FA_AUTOTUNE=0): at fixed tokens the item count is fixed, so the rate's
# fall at short S measures the persistent forward's per-item cost;
# (2) ncu source counters of causal D 128 4x16x4k (bench_gpu's shape);
# (3) memcheck and racecheck of every spec (gpu-run.sh's sanitize stage).
# carry ["bundle"].
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
export FA_AUTOTUNE=0
for d in 128 64; do
  h=$((d == 128 ? 16 : 32))
  for spec in causal mha; do
    for s in 1024 2048 4096 8192 16384; do
      b=$((16384 / s))
      r=$(FA_CACHE_DIR=/tmp/c-t timeout 100 $R kernels_spec/$spec.mlir --target gpu --dtype bf16 \
        --repeat 30 --shape $b,$h,$h,$s,$s,$d 2>&1 | grep -oE 'fwd_tflops=[0-9.]+|fwd=[0-9.]+ms|error.*' | tr '\n' ' ')
      echo "$spec D $d ${b}x${h}x$s: $r" | tee -a $S
    done
  done
done
echo "timings ${SECONDS}s" >> $S
timeout 200 ncu --set full --import-source no --kernel-name regex:'_forward_wgmma_d[0-9]+$' \
  --launch-count 1 -f -o /tmp/ncu-c128 $R kernels_spec/causal.mlir --target gpu --dtype bf16 \
  --shape 4,16,16,4096,4096,128 > $OUT/ncu-c128.log 2>&1
ncu -i /tmp/ncu-c128.ncu-rep --page details --print-details all >> $OUT/ncu-c128.log 2>&1
ncu -i /tmp/ncu-c128.ncu-rep --page source --csv --print-source sass > $OUT/ncu-c128-sass.csv 2>&1
python3 bench/sass_profile.py $OUT/ncu-c128-sass.csv --top 50 > $OUT/profile-c128.txt 2>&1
gzip -f $OUT/ncu-c128-sass.csv $OUT/ncu-c128.log
echo "ncu ${SECONDS}s: $(zcat $OUT/ncu-c128.log.gz | grep -E '^ +(Duration|Registers Per Thread|Issue Slots Busy|Eligible Warps Per Scheduler) ' | awk '{$1=$1; print}' | tr '\n' ';')" >> $S
FA_SANITIZE_TOOLS="memcheck racecheck" FA_GPU_STAGES=sanitize timeout 330 scripts/gpu-run.sh /tmp/san > /dev/null 2>&1
cat /tmp/san/sanitize.log >> $S
for t in memcheck racecheck; do grep -E "^(== |FAILED)" /tmp/san/sanitize-$t.log | grep -B1 FAILED | head; gzip -c /tmp/san/sanitize-$t.log > $OUT/sanitize-$t.log.gz; done >> $S
echo "end ${SECONDS}s" >> $S
cat $S
