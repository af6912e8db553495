#!/usr/bin/env bash
# carry ["bundle"] (the bundle of 27ecdcc) and head-python/ (made here by
# git show 27ecdcc:python/fa/{api,torch_ops}.py; not committed). The
# backward's host path before
# and after the eager backward keeps its call on the forward's record:
# backward_host.py's stages and single_parts.py's split of a single call,
# old (head-python/, 27ecdcc's api.py and torch_ops.py) and new (this
# tree), alternated.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S || exit 1
device_python $OUT/py.log || exit 1
source bench/fifty-fourth/old-python.sh
old_python || exit 1
export FA_CACHE_DIR=/tmp/fc
for round in 1 2; do
  for build in old new; do
    dir=$PY_DIR; [ $build = old ] && dir=/tmp/fa-old
    echo "== $build, round $round: backward_host.py" >> $S
    PYTHONPATH=$dir timeout 100 python3 bench/fifty-fourth/backward_host.py 2>&1 | grep -v -i warn >> $S
    echo "== $build, round $round: single_parts.py" >> $S
    PYTHONPATH=$dir timeout 150 python3 bench/fifty-fourth/single_parts.py 2>&1 | grep -v -i warn >> $S
  done
done
echo "done (${SECONDS}s)" >> $S
cat $S
