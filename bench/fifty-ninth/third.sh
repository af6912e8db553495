#!/usr/bin/env bash
# Third device call of the fifty-ninth session. carry ["bundle"]: where
# window 4096's D 64 forward goes beside causal's at its bench shape (2 x
# 32 heads x 8k): ncu of both wgmma forwards (the second call's regex
# caught the _schedule kernel), and swa's tiles: two consumers (128 query
# rows a block: a narrower band of masked tiles at each edge) and 64-key
# tiles, against the compiler's three consumers of 128 keys.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S || exit 1
device_ncu_forward ncu-swa '_forward_wgmma_d64$' swa 2,32,32,8192,8192,64
device_ncu_forward ncu-causal '_forward_wgmma_d64$' causal 2,32,32,8192,8192,64
DEVICE_AUTOTUNE=0 device_knobs 2 2,32,32,8192,8192 "swa 64" "swa 64 --wgmma-groups 2" \
  "swa 64 --mma-block-n 64" "swa 64 --wgmma-groups 2 --mma-block-n 64" "causal 64"
echo "done (${SECONDS}s)" >> $S
cat $S
