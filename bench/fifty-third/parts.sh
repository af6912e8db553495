#!/usr/bin/env bash
# Issue 18, fifth call: where gpt-oss's B 1, 32k decode step goes with
# skip.diff and key-split.diff (k-overlay): the forty-second session's
# decode_parts.py (kernels and gaps of graph replays, beside a read and a
# copy of the same bytes), then ncu --set full of one step's split-KV and
# merge kernels (ncu_decode.py). Carry ["bundle"].
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S k bundle/k-overlay.tar.xz || exit 1
device_python /tmp/py.log || exit 1
export LD_LIBRARY_PATH=/tmp/fa-k/lib PYTHONPATH=$PY_DIR FA_CACHE_DIR=/tmp/c-py
timeout 120 python3 bench/forty-second/decode_parts.py > $OUT/decode-parts.log 2>&1
grep -v -i warn $OUT/decode-parts.log >> $S
timeout 150 ncu --set full --kernel-name regex:split_kv --launch-skip 2 --launch-count 2 -f -o /tmp/split \
  python3 bench/forty-second/ncu_decode.py > /tmp/split.log 2>&1
ncu -i /tmp/split.ncu-rep --page details --print-details all >> /tmp/split.log 2>&1
ncu -i /tmp/split.ncu-rep --page source --csv --print-source sass > /tmp/split-sass.csv 2>&1
grep -E "^  [a-z_0-9]+.*\(|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Waves Per SM|Grid Size|L2 Hit|Stall (Long|Wait|Barrier|No Inst|IMC|Not Sel|Short|LG)" /tmp/split.log | head -60 >> $S
tar -czf $OUT/ncu-split.tar.gz -C /tmp split.log split-sass.csv
echo "done ${SECONDS}s" >> $S
cat $S
