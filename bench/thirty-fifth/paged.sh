#!/usr/bin/env bash
# Issue 18, third device call: where paged split-KV decode loses to
# contiguous. Carry ["bundle"] (a bundle of this tree). paged_bw.py with a
# table in order beside shuffled ones (is it the table walk or where the
# pages lie?), then ncu of one split kernel per case (paged_profile.py:
# gpt-oss B 8 32k, Llama B 1 128k; contiguous, shuffled, in order).
source bench/lib/device.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
device_setup "$OUT/summary.txt"
device_python "$OUT/build.log" || exit 1
export PYTHONPATH=$PY_DIR FA_CACHE_DIR=/tmp/fa-cache-paged
timeout 60 python3 bench/nineteenth/paged_bw.py 8,32768 1,131072 2>&1 | tee "$OUT/paged.log"
timeout 300 ncu --profile-from-start off -k 'regex:split_kv_d(64|128)$' \
  --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
  --section SchedulerStats --section LaunchStats --section Occupancy \
  --section InstructionStats \
  python3 bench/thirty-fifth/paged_profile.py > "$OUT/ncu-paged.log" 2>&1
echo "ncu rc=$? (${SECONDS}s)"
grep -E "^== |Duration|DRAM Throughput|Memory Throughput|L2 Hit|L1/TEX Hit|Executed Ipc A|Issue Slots Busy|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|Stall|Executed Instructions  " "$OUT/ncu-paged.log" | head -120
gzip "$OUT/ncu-paged.log"
