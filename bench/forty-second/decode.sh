#!/usr/bin/env bash
# carry ["bundle"]: where gpt-oss's B 1, 32k decode step goes (issue 18):
# decode_parts.py (kernels and gaps of a graph replay, beside a read and
# a copy of the same bytes), then ncu --set full of the third call's
# split-KV and merge kernels (ncu_decode.py). With NAME OVERLAY, on that
# build (device_overlay) instead of the bundle's.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S "$@" || exit 1
[ $# -eq 0 ] || export LD_LIBRARY_PATH=/tmp/fa-$1/lib
device_python /tmp/py.log || exit 1
PYTHONPATH=$PY_DIR FA_CACHE_DIR=/tmp/c-py timeout 200 python3 bench/forty-second/decode_parts.py > $OUT/decode-parts.log 2>&1
grep -v -i warn $OUT/decode-parts.log >> $S
PYTHONPATH=$PY_DIR FA_CACHE_DIR=/tmp/c-py timeout 300 ncu --set full --kernel-name regex:split_kv --launch-skip 2 --launch-count 2 -f -o /tmp/split \
  python3 bench/forty-second/ncu_decode.py > /tmp/split.log 2>&1
ncu -i /tmp/split.ncu-rep --page details --print-details all >> /tmp/split.log 2>&1
ncu -i /tmp/split.ncu-rep --page source --csv --print-source sass > /tmp/split-sass.csv 2>&1
grep -E "^  [a-z_0-9]+.*\(|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Waves Per SM|Grid Size|L2 Hit|Stall (Long|Wait|Barrier|No Inst|IMC|Not Sel|Short|LG)" /tmp/split.log | head -60 >> $S
tar -czf $OUT/ncu-split.tar.gz -C /tmp split.log split-sass.csv
echo "done ${SECONDS}s" >> $S
cat $S
