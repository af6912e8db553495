#!/usr/bin/env bash
# carry ["bundle"] (2cd9871's C++). The second call's knobs, which its
# limit cut (its float64 checks of streaming at 16-24 x 32k ran past their
# 120 s): the D 256 forward with 80 keys a tile against its own 64 (mha
# and causal; ptxas 13.0 spills 4 bytes in causal's at 80), and D 80's and
# 96's full rows with the table's grid section 1 against the compiler's.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S || exit 1
# (The call ran this script's first form: the same steps written out,
# before device.sh's device_knobs.)
device_knobs 2 4,16,16,4096,4096 "mha 256" "mha 256 --mma-block-n 80" \
  "causal 256" "causal 256 --mma-block-n 80" "mha 80" "mha 80 --grid-section 1" \
  "mha 96" "mha 96 --grid-section 1"
echo "done (${SECONDS}s)" >> $S
cat $S
