#!/usr/bin/env bash
# carry ["bundle"] (not run: the forty-fifth session's device time was
# spent): where the D 128 dK/dV kernel that adds dQ waits now that dK's
# product runs under dQ's stores. One launch each of causal and mha
# 1x16x8k D 128 --dq-atomics under ncu (speed of light, warp states and
# the stall samples per SASS instruction, device_ncu), beside the
# thirty-ninth session's logs/ncu-atomics-*.tar.gz of the old order.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
device_ncu ncu-causal-128 '_backward_wgmma_dk_dv_d128$' causal 1,16,16,8192,8192,128 --dq-atomics
device_ncu ncu-mha-128 '_backward_wgmma_dk_dv_d128$' mha 1,16,16,8192,8192,128 --dq-atomics
echo "done ${SECONDS}s" >> $S
cat $S
