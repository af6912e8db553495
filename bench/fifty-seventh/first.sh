#!/usr/bin/env bash
# carry ["bundle"] (2cd9871's C++; m-overlay: c498bc6's, before the split
# count's rule for masked specs with dynamic heads). (1) Issue 18: swa's
# and streaming's decode steps at D 32 and 64 (32/8 heads, the spec's
# heads dynamic), checked against float64 and timed on a and m alternated.
# (2) Issue 13: why the D 80 forward runs below D 64's and D 96's rate a
# score: fa-run over the wgmma forward's knobs at D 80 beside D 64 and 96,
# then ncu of the three kernels at the table's configs.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S m bundle/m-overlay.tar.xz || exit 1
device_forward_checks a <<LINES
bf16 kernels_spec/swa.mlir --shape 1,32,8,1,32768,64
bf16 kernels_spec/swa.mlir --shape 1,32,8,1,32768,32
bf16 kernels_spec/streaming.mlir --shape 1,32,8,1,32768,64
bf16 kernels_spec/streaming.mlir --shape 1,32,8,1,32768,32
bf16 kernels_spec/swa.mlir --shape 2,32,8,3,20000,64
bf16 kernels_spec/streaming.mlir --shape 3,16,4,2,9000,64
LINES
echo "checks done (${SECONDS}s)" >> $S
device_build_compare 2 "a m" swa:1,32,8,1,32768,64 swa:1,32,8,1,32768,32 \
  streaming:1,32,8,1,32768,64 streaming:1,32,8,1,32768,32 swa:2,32,8,1,65536,64
echo "decode done (${SECONDS}s)" >> $S
# (2) D 80's knobs, mha 4x16x4k (bench_gpu.py's S 4k rows), FA_AUTOTUNE=0
KNOBS=("80 --wgmma-groups 3 --mma-block-n 112" "80 --wgmma-groups 3 --mma-block-n 96"
       "80 --wgmma-groups 2 --mma-block-n 128" "80 --wgmma-groups 2 --mma-block-n 160"
       "80 --wgmma-groups 2 --mma-block-n 192" "64 --wgmma-groups 3 --mma-block-n 128"
       "64 --wgmma-groups 3 --mma-block-n 112" "96 --wgmma-groups 2 --mma-block-n 128")
for spec in mha causal; do
  for k in "${KNOBS[@]}"; do
    set -- $k
    d=$1; shift
    DEVICE_CACHE_DIR=/tmp/c-k device_fa_run 200 $spec 4,16,16,4096,4096,$d "$@" > /dev/null 2>&1 &
  done
  wait
done
echo "knobs compiled (${SECONDS}s)" >> $S
for round in 1; do
  for spec in mha causal; do
    for k in "${KNOBS[@]}"; do
      set -- $k
      d=$1; shift
      echo "$spec D$d $*: $(DEVICE_CACHE_DIR=/tmp/c-k device_tflops $spec 4,16,16,4096,4096,$d "$@") (${SECONDS}s)" >> $S
    done
  done
done
ncu_forward() {
  local name=$1 kernel=$2 spec=$3 shape=$4
  FA_CACHE_DIR=/tmp/c-table FA_AUTOTUNE=table timeout 150 ncu --section SpeedOfLight \
    --section WarpStateStats --section SourceCounters --section SchedulerStats \
    --section InstructionStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables \
    --metrics sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,sm__issue_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum \
    --kernel-name "regex:$kernel" --launch-count 1 -f -o "/tmp/$name" \
    "$R" "kernels_spec/$spec.mlir" --target gpu --dtype bf16 --shape "$shape" > "/tmp/$name.log" 2>&1
  ncu -i "/tmp/$name.ncu-rep" --page details --print-details all >> "/tmp/$name.log" 2>&1
  ncu -i "/tmp/$name.ncu-rep" --page source --csv --print-source sass > "/tmp/$name-sass.csv" 2>&1
  echo "$name $(grep -E 'Pipe Tensor Cycles|Duration|Issue Slots Busy|inst_executed.sum|pipe_xu' "/tmp/$name.log" | head -6 | tr -s ' ' | tr '\n' ' ') (${SECONDS}s)" >> $S
  tar -czf "$OUT/$name.tar.gz" -C /tmp "$name.log" "$name-sass.csv"
}
ncu_forward ncu-mha-d80 mha_forward_wgmma_d80$ mha 4,16,16,4096,4096,80
ncu_forward ncu-mha-d64 mha_forward_wgmma_d64$ mha 4,16,16,4096,4096,64
ncu_forward ncu-mha-d96 mha_forward_wgmma_d96$ mha 4,16,16,4096,4096,96
echo "done (${SECONDS}s)" >> $S
cat $S
