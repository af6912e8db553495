#!/usr/bin/env bash
# carry ["bundle"] (2cd9871's C++). The second call's knobs, which its
# limit cut (its float64 checks of streaming at 16-24 x 32k ran past their
# 120 s): the D 256 forward with 80 keys a tile against its own 64 (mha
# and causal; ptxas 13.0 spills 4 bytes in causal's at 80), and D 80's and
# 96's full rows with the table's grid section 1 against the compiler's.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S || exit 1
KNOBS=("mha 256" "mha 256 --mma-block-n 80" "causal 256" "causal 256 --mma-block-n 80"
       "mha 80" "mha 80 --grid-section 1" "mha 96" "mha 96 --grid-section 1")
for k in "${KNOBS[@]}"; do
  set -- $k
  DEVICE_CACHE_DIR=/tmp/c-k device_fa_run 200 $1 4,16,16,4096,4096,$2 "${@:3}" > /dev/null 2>&1 &
done
wait
echo "knobs compiled (${SECONDS}s)" >> $S
for round in 1 2; do
  for k in "${KNOBS[@]}"; do
    set -- $k
    echo "$1 D$2 ${*:3}: $(DEVICE_CACHE_DIR=/tmp/c-k device_tflops $1 4,16,16,4096,4096,$2 "${@:3}") (${SECONDS}s)" >> $S
  done
done
echo "done (${SECONDS}s)" >> $S
cat $S
