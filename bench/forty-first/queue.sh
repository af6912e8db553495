#!/usr/bin/env bash
# carry ["bundle"]: queued.py (fa vs cuDNN, queued calls, clocks), then
# probe.py (whether the host keeps ahead of the GPU in a chain of calls).
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
device_python /tmp/py.log || exit 1
for script in queued probe; do
  PYTHONPATH=$PY_DIR timeout 200 python3 bench/forty-first/$script.py 2>&1 | grep -v -i warn >> $S
done
cat $S
