#!/usr/bin/env bash
# The next session's first call (not run in the forty-eighth): carry
# ["bundle"] packed from main at 807bf58 or later. The dK/dV kernel that
# adds dQ takes 128-row query tiles up to D 64 since f1232f1, but the
# shipped table's D 32 and D 64 rows still pick dQ's own kernel (made
# before it). 1) The dq-atomics check list (its D 32 and D 64 lines now
# run 128-row tiles) and the sanitizers on the new kernel. 2) Timings the
# forty-eighth session did not take: GQA D 64 and causal D 32, dQ's kernel
# against --dq-atomics. Then next-retune.sh in a call of its own.
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
