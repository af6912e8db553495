#!/usr/bin/env bash
# The twenty-ninth session's second call (H200): issue 13's D 80 bar (0.72x
# of D 128 against 0.85x). Build: HEAD with
# bench/twenty-eighth/patches/three-consumers-d96.patch (an explicit
# --wgmma-groups 3 allowed up to D 96; the default unchanged), where ptxas
# spills nothing at three consumers with key tiles up to 112 at D 80 and 96
# at D 96. 1. checks of those against float64; 2. fa-run A/B against the
# default (two consumers, 128 keys), FA_AUTOTUNE=0; 3. ncu stall reasons
# of the default causal D 80 forward (did not finish within the call;
# its steps 1 and 2 did). carry ["bundle"].
S=$OUT/summary.txt; : > $S
FA_GPU_STAGES=none scripts/gpu-run.sh /tmp/g0 > /dev/null 2>&1
FA=/tmp/fa-bundle R=$FA/bin/fa-run
export LD_LIBRARY_PATH=$FA/lib FA_AUTOTUNE=0
for c in "80 112" "80 96" "96 96" "96 80"; do
  set -- $c
  echo "check D$1 g3 bn$2: $(FA_CACHE_DIR=/tmp/c3-$2 timeout 80 $R kernels_spec/causal.mlir --target gpu --dtype bf16 \
    --check --wgmma-groups 3 --mma-block-n $2 --shape "1,8,2,1000,1000,$1;2,16,4,1000,1000,$1" 2>&1 |
    grep -oE " o=[0-9.e+-]+|FAIL.*|rror.*" | tr '\n' ' ')" >> $S
done
for r in 1 2; do
  for spec in causal mha; do
    for c in "80 112" "80 96" "96 96" "96 80"; do
      set -- $c
      a=$(FA_CACHE_DIR=/tmp/c2 timeout 60 $R kernels_spec/$spec.mlir --target gpu --dtype bf16 --repeat 30 \
        --shape 2,16,16,8192,8192,$1 2>&1 | grep -oE 'fwd_tflops=[0-9.]+|rror.*')
      b=$(FA_CACHE_DIR=/tmp/c3-$2 timeout 60 $R kernels_spec/$spec.mlir --target gpu --dtype bf16 --repeat 30 \
        --wgmma-groups 3 --mma-block-n $2 --shape 2,16,16,8192,8192,$1 2>&1 | grep -oE 'fwd_tflops=[0-9.]+|rror.*')
      echo "r$r $spec D$1: default $a | three consumers, $2 keys $b" >> $S
    done
  done
done
timeout 120 ncu --kernel-name regex:'_forward_wgmma_d[0-9]+$' --launch-count 1 \
  --section WarpStateStats --section SourceCounters --import-source no -f -o /tmp/ncu-d80 \
  $R kernels_spec/causal.mlir --target gpu --dtype bf16 --shape 2,16,16,8192,8192,80 > $OUT/ncu-d80.log 2>&1
ncu -i /tmp/ncu-d80.ncu-rep --page details --print-details all >> $OUT/ncu-d80.log 2>&1
ncu -i /tmp/ncu-d80.ncu-rep --page source --csv --print-source sass > $OUT/ncu-d80-sass.csv 2>&1
python3 bench/sass_profile.py $OUT/ncu-d80-sass.csv --top 40 > $OUT/profile-d80.txt 2>&1
gzip -f $OUT/ncu-d80-sass.csv
grep -E "Stall|Warp Cycles|Issued" $OUT/ncu-d80.log | head -30 >> $S
cat $S
