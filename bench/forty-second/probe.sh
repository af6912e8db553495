#!/usr/bin/env bash
# carry ["bundle"]: two questions in one call.
# 1. gpt-oss's window-128 forward on the wgmma kernel (the persistent grid,
#    two copies of Q) against the mma.sync kernel the pass picks for it:
#    bundle/w128wgmma-overlay.tar.xz is a build with
#    kShortWindowMmaSyncHeadDims emptied (every D 64 window on wgmma),
#    timed at several consumer counts and key tiles.
# 2. Where a graph-replayed decode step's time goes: decode_parts.py, and
#    ncu of the split-KV kernel of gpt-oss B 1, 32k.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
device_overlay w bundle/w128wgmma-overlay.tar.xz || exit 1
SH=2,64,8,8192,8192,64
if [ "${1:-all}" != decode ]; then
device_build_tflops a gpt_oss $SH --kernel gpt_oss_sliding
device_build_tflops a gpt_oss $SH --kernel gpt_oss_sliding --mma-kv-stages 2 --mma-shared-bytes 98304
for g in 1 2 3; do
  for n in 64 128; do
    device_build_tflops w gpt_oss $SH --kernel gpt_oss_sliding --wgmma-groups $g --mma-block-n $n
  done
done
device_build_tflops w gpt_oss $SH --kernel gpt_oss_sliding --wgmma-groups 1 --mma-block-n 32
device_build_tflops w gpt_oss $SH --kernel gpt_oss_sliding --wgmma-groups 2 --mma-block-n 32
echo "check w g1 n64: $(FA_CACHE_DIR=/tmp/c-w FA_AUTOTUNE=0 LD_LIBRARY_PATH=/tmp/fa-w/lib timeout 120 /tmp/fa-w/bin/fa-run kernels_spec/gpt_oss.mlir --kernel gpt_oss_sliding --target gpu --dtype bf16 --check --wgmma-groups 1 --mma-block-n 64 --shape 1,64,8,1531,1531,64 2>&1 | grep -E 'shape=|rror|FAIL' | tr '\n' ' ' | cut -c1-300)" >> $S
fi
if [ "${1:-all}" != w128 ]; then
device_python /tmp/py.log || exit 1
PYTHONPATH=$PY_DIR FA_CACHE_DIR=/tmp/c-py timeout 200 python3 bench/forty-second/decode_parts.py > $OUT/decode-parts.log 2>&1
grep -v -i warn $OUT/decode-parts.log >> $S
FA_CACHE_DIR=/tmp/c-ncu FA_AUTOTUNE=0 timeout 200 ncu --set full --kernel-name regex:split_kv_d64$ --launch-count 1 -f -o /tmp/split \
  $R kernels_spec/gpt_oss_decode.mlir --kernel gpt_oss_decode_full --target gpu --dtype bf16 --shape 1,64,8,1,32768,64 > /tmp/split.log 2>&1
ncu -i /tmp/split.ncu-rep --page details --print-details all >> /tmp/split.log 2>&1
ncu -i /tmp/split.ncu-rep --page source --csv --print-source sass > /tmp/split-sass.csv 2>&1
grep -E "Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Block Limit|Waves Per SM|Grid Size|Stall|L2 Hit" /tmp/split.log | head -30 >> $S
tar -czf $OUT/ncu-split.tar.gz -C /tmp split.log split-sass.csv
fi
echo "done ${SECONDS}s" >> $S
cat $S
