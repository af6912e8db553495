#!/usr/bin/env bash
# carry ["bundle"]. Why fa's queued backward exceeds its kernels' span
# (queued_profile.py), with the SM clock and power sampled every 20 ms.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S || exit 1
device_python $OUT/py.log || exit 1
export PYTHONPATH=$PY_DIR FA_CACHE_DIR=/tmp/fc FA_AUTOTUNE=table
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv -lms 20 > $OUT/clocks.csv 2>&1 &
SMI=$!
echo "== queued_profile.py" >> $S
timeout 300 python3 bench/fifty-fifth/queued_profile.py 2>&1 | grep -v -i warn >> $S
kill $SMI
python3 - $OUT/clocks.csv >> $S <<'PY'
import sys, collections
rows = [l.strip().split(", ") for l in open(sys.argv[1]) if l[0].isdigit()]
clk = [int(r[1].split()[0]) for r in rows if len(r) > 5]
pw = [float(r[3].split()[0]) for r in rows if len(r) > 5]
thr = collections.Counter(r[5] for r in rows if len(r) > 5)
print("clocks: sm min", min(clk), "max", max(clk), "; power max", max(pw), "; throttle", dict(thr))
PY
echo "done (${SECONDS}s)" >> $S
cat $S
