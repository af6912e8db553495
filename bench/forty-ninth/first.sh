#!/usr/bin/env bash
# carry ["bundle"] packed from main at 509841d: the dq-atomics check list
# (its D 32 and D 64 lines run 128-row tiles since f1232f1), sanitizers on
# that kernel, and GQA D 64 / causal D 32 timings, dQ's own kernel against
# --dq-atomics (the forty-eighth session's next.sh).
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S || exit 1
device_check_lines --dq-atomics < bench/lib/checks-dq-atomics.txt
device_sanitize causal 1,4,4,1000,1000,64 --backward --dq-atomics
device_sanitize mha 1,4,4,333,333,32 --backward --dq-atomics
for flags in "" "--dq-atomics"; do
  device_build_tflops a gqa_causal 4,32,8,4096,4096,64 --backward $flags
  device_build_tflops a causal 4,64,64,4096,4096,32 --backward $flags
done
echo "done ${SECONDS}s" >> $S
cat $S
