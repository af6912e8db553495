#!/usr/bin/env bash
# The twenty-ninth session's fifth call (H200): where the D 80 forward's
# time goes with the new default (three consumers, 112-key tiles), beside
# D 128 (two consumers, 128 keys): ncu --set full of causal 2x16x8k at D 80
# and D 128, FA_AUTOTUNE=0: the details page, the pipes, and the SASS
# stall samples (bench/sass_profile.py). carry ["bundle"].
S=$OUT/summary.txt; : > $S
FA_GPU_STAGES=none scripts/gpu-run.sh /tmp/g0 > /dev/null 2>&1
FA=/tmp/fa-bundle R=$FA/bin/fa-run
export LD_LIBRARY_PATH=$FA/lib FA_AUTOTUNE=0
for d in 80 128; do
  timeout 200 ncu --set full --import-source no --kernel-name regex:'_forward_wgmma_d[0-9]+$' \
    --launch-count 1 -f -o /tmp/ncu-d$d $R kernels_spec/causal.mlir --target gpu --dtype bf16 \
    --shape 2,16,16,8192,8192,$d > $OUT/ncu-d$d.log 2>&1
  ncu -i /tmp/ncu-d$d.ncu-rep --page details --print-details all >> $OUT/ncu-d$d.log 2>&1
  ncu -i /tmp/ncu-d$d.ncu-rep --page raw --csv --metrics 'regex:sm__inst_executed_pipe_[a-z_]+\.avg\.pct_of_peak_sustained_active$,regex:sm__pipe_tensor_cycles_active\.avg\.pct_of_peak_sustained_active$,regex:smsp__average_warps_issue_stalled_[a-z_]+_per_issue_active\.ratio$' \
    > $OUT/ncu-d$d-raw.csv 2>&1
  ncu -i /tmp/ncu-d$d.ncu-rep --page source --csv --print-source sass > $OUT/ncu-d$d-sass.csv 2>&1
  python3 bench/sass_profile.py $OUT/ncu-d$d-sass.csv --top 40 > $OUT/profile-d$d.txt 2>&1
  gzip -f $OUT/ncu-d$d-sass.csv $OUT/ncu-d$d.log
  echo "D $d: $(zcat $OUT/ncu-d$d.log.gz | grep -E '^ +(Duration|Registers Per Thread|Issue Slots Busy|Executed Ipc Active|No Eligible|Eligible Warps Per Scheduler|Warp Cycles Per Issued Instruction) ' | awk '{$1=$1; print}' | tr '\n' ';')" >> $S
done
cat $S
