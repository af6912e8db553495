#!/usr/bin/env bash
# For the next session's first device call; carry ["bundle"] (any bundle:
# only the Python package changes). What the API's fixed head counts do
# to decode (issue 18; the split-KV kernel lost 28 runtime divisions and
# 280 of its 2432 instructions, ptxas 13.0): bench_decode.py's gpt-oss and
# Llama rows at B 1 and 8, caches 32k and 128k, through this tree's package
# (heads fixed on the GPU) and through a copy that keeps them dynamic (the
# API before 83e0fad), alternated over two rounds; then the rest of
# static-heads-ab.sh (mha D 64), which the fifty-second session's call
# limit cut.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S || exit 1
device_python $OUT/py.log || exit 1
rm -rf /tmp/py-dyn && cp -r $PY_DIR /tmp/py-dyn
sed -i 's/heads = (int(q.shape\[1\]), int(k.shape\[1\])) if target == "gpu" else None/heads = None/' \
  /tmp/py-dyn/fa/api.py
grep -q '^    heads = None$' /tmp/py-dyn/fa/api.py || { echo "the dynamic copy was not made" >> $S; cat $S; exit 1; }
for r in 1 2; do
  for py in $PY_DIR /tmp/py-dyn; do
    name=$([ $py = $PY_DIR ] && echo fixed || echo dynamic)
    echo "== r$r $name" >> $S
    ( cd bench && PYTHONPATH=$py FA_CACHE_DIR=/tmp/cd-$name timeout 150 python3 bench_decode.py \
        --models gpt-oss_full,gpt-oss_window_128,Llama_32/8 --batches 1,8 --caches 32768,131072 \
        --csv $OUT/decode-r$r-$name.csv 2>&1 | grep -v -i warn | tail -n 16 >> $S )
  done
done
sed -n '/^run() {/,/^}/p' bench/fifty-second/static-heads-ab.sh > /tmp/ab-run.sh
source /tmp/ab-run.sh
for r in 1 2; do
  echo "r$r mha 4,32,32,4096,4096,64 dynamic $(run kernels_spec/mha.mlir 4,32,32,4096,4096,64)" >> $S
  echo "r$r mha 4,32,32,4096,4096,64 fixed   $(run bench/fifty-second/mha_h32.mlir 4,32,32,4096,4096,64)" >> $S
done
echo "done (${SECONDS}s)" >> $S
cat $S
