#!/usr/bin/env bash
# carry ["bundle"] (the bundle of 27ecdcc) and head-python/ (made here by
# git show 27ecdcc:python/fa/{api,torch_ops}.py; not committed).
# gpt-oss window 128's single calls (bench/fifty-second/w128_single.py)
# through 27ecdcc's Python (old) and this tree's (new), alternated twice,
# then issue 13's and 14's bars again on this tree (device_bars).
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S || exit 1
device_python $OUT/py.log || exit 1
source bench/fifty-fourth/old-python.sh
old_python || exit 1
for round in 1 2; do
  for build in old new; do
    dir=$PY_DIR; [ $build = old ] && dir=/tmp/fa-old
    echo "== $build, round $round: w128_single.py" >> $S
    PYTHONPATH=$dir FA_CACHE_DIR=/tmp/fc timeout 60 python3 bench/fifty-second/w128_single.py 2>&1 | grep -v -i warn >> $S
  done
done
PYTHONPATH=$PY_DIR device_bars 110 150
echo "done (${SECONDS}s)" >> $S
cat $S
