#!/usr/bin/env bash
# carry ["bundle"]: dK behind dQ at D 64 (--dq-atomics; the table picks
# dQ's kernel there), mha and causal against main, one round.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S m bundle/main-overlay.tar.xz || exit 1
for v in m a; do
  device_build_tflops $v causal 4,32,32,4096,4096,64 --backward --dq-atomics
  device_build_tflops $v mha 4,32,32,4096,4096,64 --backward --dq-atomics
done
cat $S
