#!/usr/bin/env bash
# carry ["bundle"] (15e5446's C++ but the mends). Where gpt-oss-full's
# forward stands against the same shape without its mask, GQA and sinks
# (fa-run on the shipped table's configs, two rounds), ncu of its kernel
# and of the unmasked one, then issue 13's and 14's D 80/96/256 rows
# beside D 128 (bench_gpu.py, fa, cuDNN, FA2).
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S || exit 1
export DEVICE_AUTOTUNE=table DEVICE_CACHE_DIR=/tmp/c-table
CASES=("mha 2,64,64,8192,8192,64" "causal 2,64,64,8192,8192,64"
       "gqa_causal 4,32,8,8192,8192,64" "gpt_oss 2,64,8,8192,8192,64")
for c in "${CASES[@]}"; do
  # shellcheck disable=SC2086
  device_fa_run 200 $c > /dev/null 2>&1 &
done
wait
echo "compiled (${SECONDS}s)" >> $S
for round in 1 2; do
  for c in "${CASES[@]}"; do
    # shellcheck disable=SC2086
    echo "$c: $(device_tflops $c) (${SECONDS}s)" >> $S
  done
done
ncu_forward() {
  local name=$1 kernel=$2 spec=$3 shape=$4
  FA_CACHE_DIR=/tmp/c-table FA_AUTOTUNE=table timeout 150 ncu --section SpeedOfLight \
    --section WarpStateStats --section SourceCounters --section SchedulerStats \
    --section InstructionStats --section ComputeWorkloadAnalysis \
    --metrics sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,sm__issue_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum \
    --kernel-name "regex:$kernel" --launch-count 1 -f -o "/tmp/$name" \
    "$R" "kernels_spec/$spec.mlir" --target gpu --dtype bf16 --shape "$shape" > "/tmp/$name.log" 2>&1
  ncu -i "/tmp/$name.ncu-rep" --page details --print-details all >> "/tmp/$name.log" 2>&1
  ncu -i "/tmp/$name.ncu-rep" --page source --csv --print-source sass > "/tmp/$name-sass.csv" 2>&1
  echo "$name $(grep -E 'Pipe Tensor Cycles|Duration|Issue Slots Busy|inst_executed.sum|pipe_xu' "/tmp/$name.log" | head -6 | tr -s ' ' | tr '\n' ' ') (${SECONDS}s)" >> $S
  tar -czf "$OUT/$name.tar.gz" -C /tmp "$name.log" "$name-sass.csv"
}
ncu_forward ncu-gptoss-full gpt_oss_full_forward_wgmma_d64$ gpt_oss 2,64,8,8192,8192,64
ncu_forward ncu-mha-d64 mha_forward_wgmma_d64$ mha 2,64,64,8192,8192,64
device_bench dims 200 --variants causal,full --seqs 4096 --head-dims 80,96,128,256 \
  --impls fa,sdpa-cudnn,sdpa-flash2 --reps 20
python3 bench/bars.py "$OUT"/bench-dims.csv >> $S 2>&1
echo "done (${SECONDS}s)" >> $S
cat $S
