#!/usr/bin/env bash
# bwd-parts.sh's sequel (carry ["bundle"]): whether fa's full D 128
# backward call waits for the GPU (bwd_host.py), with the table's config
# (dQ by TMA reduce-adds from the dK/dV kernel) and with FA_AUTOTUNE=0
# (the dQ kernel).
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
device_python /tmp/py.log || exit 1
for tune in table 0; do
  echo "FA_AUTOTUNE=$tune: $(FA_AUTOTUNE=$tune PYTHONPATH=$PY_DIR timeout 60 python3 bench/fortieth/bwd_host.py 2>&1 | grep -v -i warn | tail -40)" >> $S
done
cat $S
