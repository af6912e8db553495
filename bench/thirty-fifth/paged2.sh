#!/usr/bin/env bash
# Issue 18, fourth device call: paged decode with the page size in the spec
# and the paged split count (2 blocks an SM above D 32). Carry ["bundle"]
# (a bundle of this tree). paged_bw.py, test_torch.py's decode tests,
# bench_decode.py rows. Predicted: gpt-oss paged from 0.45x contiguous to
# about 0.7x; Llama from 0.62x to about 0.75x.
source bench/lib/device.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
device_setup "$OUT/summary.txt"
device_python "$OUT/build.log" || exit 1
export PYTHONPATH=$PY_DIR FA_CACHE_DIR=/tmp/fa-cache-paged2
timeout 60 python3 bench/nineteenth/paged_bw.py 8,32768 1,131072 2>&1 | tee "$OUT/paged.log"
timeout 200 python3 -m pytest -q -p no:cacheprovider python/tests/test_torch.py \
  -k "decode or paged or kvcache or append" > "$OUT/pytest.log" 2>&1
echo "pytest: $(tail -1 "$OUT/pytest.log") (${SECONDS}s)" | tee -a "$OUT/summary.txt"
timeout 120 ncu --profile-from-start off -k 'regex:split_kv_d(64|128)$' \
  --section SpeedOfLight --section WarpStateStats --section LaunchStats --section Occupancy \
  --section InstructionStats \
  python3 bench/thirty-fifth/paged_profile.py > "$OUT/ncu-paged.log" 2>&1
grep -E "^== |Duration|DRAM Throughput|Registers Per|Achieved Occupancy|Executed Instructions  |Grid Size" "$OUT/ncu-paged.log" | head -60
gzip "$OUT/ncu-paged.log"
