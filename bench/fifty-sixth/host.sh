#!/usr/bin/env bash
# carry ["bundle"]. Single calls against the same calls with their host
# work hidden behind a GPU sleep (forward_profile.py), forward at
# gpt-oss-full and the D 64 GQA/causal rows, backward at the dense rows
# whose bars are unmet; the SM clock and power sampled every 20 ms.
# (The call ran this script's first form: the same steps written out,
# before device.sh's helpers for them.)
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S || exit 1
device_python $OUT/py.log || exit 1
export PYTHONPATH=$PY_DIR FA_CACHE_DIR=/tmp/fc FA_AUTOTUNE=table
device_clocks_start /tmp/clocks.csv
P=bench/fifty-sixth/forward_profile.py
timeout 200 python3 $P --rows gpt-oss-full:64:8192,gqa-causal:64:4096 2>&1 | grep -v -i warn > $OUT/fwd.txt
timeout 200 python3 $P --phase bwd --impls fa,sdpa-cudnn --rows causal:128:4096,full:128:4096,full:64:4096 \
  2>&1 | grep -v -i warn > $OUT/bwd.txt
device_clocks_stop
grep -h "^==" $OUT/fwd.txt $OUT/bwd.txt >> $S
echo "done (${SECONDS}s)" >> $S
cat $S
