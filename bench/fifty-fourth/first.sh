#!/usr/bin/env bash
# carry ["bundle"] (the bundle of 27ecdcc). Where the backward's host time
# goes before its first kernel (backward_host.py), and single-call against
# queued timing of issue 14's dense bar shapes for fa, cuDNN and flash
# (host_overhead.py --grad --backward-kernels).
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S || exit 1
device_python $OUT/py.log || exit 1
export PYTHONPATH=$PY_DIR FA_CACHE_DIR=/tmp/fc
echo "== backward_host.py" >> $S
timeout 120 python3 bench/fifty-fourth/backward_host.py 2>&1 | grep -v -i warn >> $S
cd bench
for shape in "causal 4,32,4096,64" "causal 4,16,4096,128" "full 4,32,4096,64" "full 4,16,4096,128"; do
  set -- $shape
  flag=; [ $1 = full ] && flag=--full
  echo "== host_overhead $1 $2" >> $S
  timeout 150 python3 host_overhead.py --grad $flag --shapes $2 --backward-kernels 2>&1 | grep -v -i warn >> $S
done
echo "done (${SECONDS}s)" >> $S
cat $S
