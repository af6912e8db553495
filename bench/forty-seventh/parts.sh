#!/usr/bin/env bash
# carry ["bundle"], on branch next/dq-write: per-kernel durations (ncu gpu__time_duration, kernels
# serialised) of one causal 4x16x4k D 128 backward --dq-atomics: main
# ("a": zero, dK/dV, copy) against settle.sh's FA_SETTLE=none build (the
# tiles kernel, the dK/dV kernel with the conversion's code but no
# conversions, no copy), to see where none's 464 vs 502 TFLOP/s goes.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S none bundle/dqwrite-overlay.tar.xz || exit 1
for v in a none; do
  d=$FA; [ $v = a ] || d=/tmp/fa-$v
  if [ $v = a ]; then unset FA_SETTLE; else export FA_SETTLE=$v; fi
  echo "== $v" >> $S
  FA_CACHE_DIR=/tmp/c-p$v FA_AUTOTUNE=0 LD_LIBRARY_PATH=$d/lib timeout 200 ncu --metrics gpu__time_duration.sum \
    --kernel-name regex:"backward" --launch-skip 0 --launch-count 12 \
    $d/bin/fa-run kernels_spec/causal.mlir --target gpu --dtype bf16 --backward --dq-atomics \
    --repeat 1 --shape 4,16,16,4096,4096,128 > /tmp/p-$v.log 2>&1
  grep -E "backward|gpu__time_duration" /tmp/p-$v.log | sed -E 's/ +/ /g' | paste - - | cut -c1-160 >> $S
done
echo "done ${SECONDS}s" >> $S
cat $S
