#!/usr/bin/env bash
# The twenty-eighth session's first call (H200): where a wgmma forward work
# item's fixed cost goes (twenty-sixth session: ~6 us an item at D 64 on
# top of ~0.7 us a key tile).
# 1. fa-run forward TFLOP/s of causal windows 512-4096 (D 64, 2x32x8k,
#    FA_AUTOTUNE=0), pipelined and serial, and block-n 64;
# 2. ncu --set full of window 512 and window 4096: details and the SASS
#    with per-instruction stall samples (bench/sass_profile.py reads them).
# Run from the device tool with carry ["bundle"]. Its first run matched
# regex:wgmma, which caught the forward's counter-zeroing kernel
# (<forward>_schedule, launched first); the regex is anchored now.
S=$OUT/summary.txt; : > $S
FA_GPU_STAGES=none scripts/gpu-run.sh /tmp/g0 > /dev/null 2>&1
FA=/tmp/fa-bundle R=$FA/bin/fa-run M=bench/twenty-sixth/windows_wgmma.mlir
export LD_LIBRARY_PATH=$FA/lib FA_AUTOTUNE=0 FA_CACHE_DIR=/tmp/c-items
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> $S
for w in w512 w1024 w1024s4 w4096; do
  for flags in "" "--wgmma-schedule serial" "--mma-block-n 64"; do
    t=$(timeout 60 $R $M --kernel $w --target gpu --shape 2,32,32,8192,8192,64 \
      --repeat 30 $flags 2>&1 | grep -oE 'fwd_tflops=[0-9.]+|error.*' | tr '\n' ' ')
    echo "$w [$flags] $t" >> $S
  done
done
for w in w512 w4096; do
  timeout 150 ncu --set full --import-source no --kernel-name regex:'_forward_wgmma_d[0-9]+$' \
    --launch-count 1 -f -o /tmp/ncu-$w $R $M --kernel $w --target gpu \
    --shape 2,32,32,8192,8192,64 > $OUT/ncu-$w.log 2>&1
  ncu -i /tmp/ncu-$w.ncu-rep --page details --print-details all >> $OUT/ncu-$w.log 2>&1
  ncu -i /tmp/ncu-$w.ncu-rep --page source --csv --print-source sass > $OUT/ncu-$w-sass.csv 2>&1
  python3 bench/sass_profile.py $OUT/ncu-$w-sass.csv --top 40 > $OUT/profile-$w.txt 2>&1
  gzip -f $OUT/ncu-$w-sass.csv
done
grep -E "Duration|Registers Per|Executed Ipc A|Issue Slots Busy|Tensor|Eligible Warps" $OUT/ncu-w*.log >> $S
cat $S
