#!/usr/bin/env bash
# carry ["bundle"]: where the full D 64 backward's time goes (issue 14's
# furthest row: fa / cuDNN 0.85 in the forty-sixth session's bars), mha
# 4x32x4k D 64 bf16 as the table runs it (the dQ kernel, which computes D,
# then the dK/dV kernel): per-kernel durations (ncu, serialised), then ncu
# of both GEMM kernels with the memory sections (the names anchored: the
# run that made logs/full64-summary.txt caught the dQ kernel's _schedule).
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S || exit 1
FA_CACHE_DIR=/tmp/c-full64 FA_AUTOTUNE=0 timeout 200 ncu --metrics gpu__time_duration.sum \
  --kernel-name regex:"backward" --launch-count 8 \
  $R kernels_spec/mha.mlir --target gpu --dtype bf16 --backward --repeat 1 \
  --shape 4,32,32,4096,4096,64 > /tmp/parts.log 2>&1
grep -E "^  [a-z_0-9]+ \(|gpu__time_duration" /tmp/parts.log | sed -E 's/ +/ /g' | paste - - | cut -c1-140 >> $S
NCU_EXTRA="--section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables" \
  device_ncu full64-dkdv "dk_dv_d64$" mha 4,32,32,4096,4096,64
NCU_EXTRA="--section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables" \
  device_ncu full64-dq "wgmma_dq_row_dot_d64$" mha 4,32,32,4096,4096,64
for n in full64-dkdv full64-dq; do
  grep -E "Duration|Pipe Tensor|Issue Slots Busy|Shared Memory|Bank|L1/TEX Hit|Mem Busy|Max Bandwidth|Registers Per|Achieved Occ|Stall|Warp Cycles Per Issued" /tmp/$n.log | sed -E 's/ +/ /g' | head -40 >> $S
done
echo "done ${SECONDS}s" >> $S
cat $S
