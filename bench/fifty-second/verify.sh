#!/usr/bin/env bash
# carry ["bundle"] (the bundle of a29e172). The Python API with the head
# counts fixed on the GPU (this tree's python/): 1. test_torch.py and
# test_nn.py on the GPU, in three processes at once (270 s each); 2.
# bench_gpu.py's gpt-oss rows (window 128 and full, D 64, S 8k; fa on the
# shipped table, flex), 20 single calls a row.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S || exit 1
device_python $OUT/py.log || exit 1
PYTHONPATH=$PY_DIR python3 -m pytest --collect-only -q -p no:cacheprovider python/tests/test_torch.py \
  python/tests/test_nn.py 2>/dev/null | grep "::" > /tmp/ids
echo "$(wc -l < /tmp/ids) tests" >> $S
split -n r/3 /tmp/ids /tmp/ids.
for f in /tmp/ids.a?; do
  n=${f##*.}
  ( PYTHONPATH=$PY_DIR FA_CACHE_DIR=/tmp/pc-$n timeout 270 python3 -m pytest -q -p no:cacheprovider $(cat $f) \
      > $OUT/pytest-$n.log 2>&1
    echo "pytest $n rc=$?: $(tail -n 1 $OUT/pytest-$n.log) (${SECONDS}s)" >> $S ) &
done
wait
grep -h "^FAILED\|^ERROR" $OUT/pytest-*.log | head -20 >> $S
device_bench oss 150 --variants gpt-oss-window-128,gpt-oss-full --seqs 8192 --head-dims 64 --impls fa,flex --reps 20
python3 bench/bars.py "$OUT"/bench-oss.csv >> $S 2>&1
echo "done (${SECONDS}s)" >> $S
cat $S
