#!/usr/bin/env bash
# carry ["bundle"], on branch next/dq-write (its build as the overlay): dq written inside the dK/dV kernel that adds dQ (the
# block that counts a query tile's counter down to 0 converts it), as
# bundle/dqwrite-overlay.tar.xz: "n" converts under dK's product, "l"
# (FA_LATE=1, compile-time switch of this experiment) after the tile.
# Checks against float64, sanitizers, then fa-run backward TFLOP/s
# against main ("a", the zero and copy kernels).
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S n bundle/dqwrite-overlay.tar.xz l bundle/dqwrite-overlay.tar.xz || exit 1
A=--dq-atomics
device_on n device_check_lines $A < bench/lib/checks-dq-atomics.txt
device_on n device_sanitize causal 1,4,4,333,1000,128 --backward $A
for shape in causal mha; do
  for v in a n l; do
    if [ $v = l ]; then export FA_LATE=1; else unset FA_LATE; fi
    device_build_tflops $v $shape 4,16,16,4096,4096,128 --backward $A
  done
done
unset FA_LATE
echo "done ${SECONDS}s" >> $S
cat $S
