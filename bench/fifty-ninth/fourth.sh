#!/usr/bin/env bash
# Fourth device call of the fifty-ninth session. carry ["bundle"]:
# bench_decode.py --graph-layers 8 (eight steps on caches of their own in
# one graph, as a model's graph holds its layers'): issue 18's decode rows
# at B 1 and 8, caches 8k, 32k and 128k, gpt-oss's two layers and Llama
# 32/8.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S || exit 1
device_python /tmp/py.log || exit 1
(cd bench && PYTHONPATH=$PY_DIR FA_CACHE_DIR=/tmp/cd timeout 300 python3 bench_decode.py \
  --csv "$OUT/decode.csv" --batches 1,8 --caches 8192,32768,131072 --graph-layers 8 \
  2>&1 | grep -v -i warn > "$OUT/decode.log")
cat "$OUT/decode.log" >> $S
echo "done (${SECONDS}s)" >> $S
cat $S
