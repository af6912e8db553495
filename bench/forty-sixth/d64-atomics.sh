#!/usr/bin/env bash
# carry ["bundle"]: at D 64 the table picks the dQ kernel for the dense
# backward; with the dQ tile's stores free of bank conflicts and the
# faster zero and copy kernels, is the dK/dV kernel that adds dQ
# (--dq-atomics) now faster there? fa-run backward TFLOP/s, alternated.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S || exit 1
for f in "" --dq-atomics "" --dq-atomics; do
  echo "mha $f $(device_tflops mha 4,32,32,4096,4096,64 --backward $f) (${SECONDS}s)" >> $S
  echo "causal $f $(device_tflops causal 4,32,32,4096,4096,64 --backward $f) (${SECONDS}s)" >> $S
done
echo "done ${SECONDS}s" >> $S
cat $S
