#!/usr/bin/env bash
# carry ["bundle"], on branch next/dq-write: where dq-write.sh's time goes (causal 4x16x4k D 128
# backward went 503 -> 306 TFLOP/s). bundle/dqwrite-overlay.tar.xz with
# the experiment's compile-time switch FA_SETTLE, what each tile's leader
# does for the previous tile's reduce-adds: none (wait for their reads
# only; dq is then not written, a timing of the rest), wait (wait for
# their completion), read (reads only, then the fences and the counter),
# relaxed (completion and the counter, no gpu fences), full (all).
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S none bundle/dqwrite-overlay.tar.xz wait bundle/dqwrite-overlay.tar.xz \
  read bundle/dqwrite-overlay.tar.xz relaxed bundle/dqwrite-overlay.tar.xz || exit 1
A=--dq-atomics
for v in a none wait read relaxed a; do
  if [ $v = a ]; then unset FA_SETTLE; else export FA_SETTLE=$v; fi
  device_build_tflops $v causal 4,16,16,4096,4096,128 --backward $A
done
unset FA_SETTLE
echo "done ${SECONDS}s" >> $S
cat $S
