#!/usr/bin/env bash
# Paged decode (issue 18): fa-run A/B of the bundle against the overlay $1
# on Llama 32/8 D 128 (bench/twenty-fifth/llama_decode.mlir, paged and
# contiguous) and gpt-oss (paged among its entries), B 8, 32k keys; then
# ncu --set full of the D 128 split-KV kernels, paged and contiguous, in
# the overlay's build.
S=$OUT/summary.txt
AB_FLAGS= timeout 150 bash bench/twenty-third/ab.sh 2 "$1" \
  "../bench/twenty-fifth/llama_decode|8,32,8,1,32768,128 gpt_oss_decode|8,64,8,1,32768,64" > $OUT/ab-decode.txt 2>&1
cat $OUT/ab-decode.txt >> $S
d=/tmp/fa-b
LD_LIBRARY_PATH=$d/lib FA_AUTOTUNE=0 FA_CACHE_DIR=/tmp/ab-cache-B timeout 200 \
  ncu --set full --import-source no --kernel-name regex:'llama_(paged|flat)_forward_split_kv_d128$' \
  --launch-count 2 -f -o /tmp/ncu-dec $d/bin/fa-run bench/twenty-fifth/llama_decode.mlir --target gpu \
  --dtype bf16 --shape 8,32,8,1,32768,128 > $OUT/ncu-run.log 2>&1
ncu -i /tmp/ncu-dec.ncu-rep --page details --print-details all > $OUT/ncu-decode.log 2>&1
ncu -i /tmp/ncu-dec.ncu-rep --page source --csv --print-source sass 2>&1 | gzip > $OUT/ncu-decode-sass.csv.gz
grep -E "Duration|DRAM Throughput|Memory Throughput|Registers Per|Achieved Occupancy|Stall" $OUT/ncu-decode.log | head -40 >> $S
cat $S
