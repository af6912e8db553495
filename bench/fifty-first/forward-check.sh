#!/usr/bin/env bash
# carry ["bundle"] with bundle/n-overlay.tar.xz (fa-run and libFARuntime of
# the fifty-first session's last build): forwards through streamKeyTiles's
# per-item tile count and one-tile sink branch (streaming), checked against
# float64 (fa-run --check, FA_AUTOTUNE=0), all at once; and two backwards
# whose dQ kernel's producer takes the same code. Not run: the
# session's device time was spent; the next session's first call.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S n bundle/n-overlay.tar.xz || exit 1
n=0
while read -r spec shape dtype flags; do
  n=$((n + 1))
  ( echo "$spec $shape $dtype: $(FA_CACHE_DIR=/tmp/c$n FA_AUTOTUNE=0 LD_LIBRARY_PATH=/tmp/fa-n/lib timeout 150 \
      /tmp/fa-n/bin/fa-run kernels_spec/$spec.mlir --target gpu --dtype $dtype --check $flags --shape $shape 2>&1 |
      grep -oE '(o|lse|dq|dk|dv)=[0-9.e+-]+(\(FAIL\))?|rror.*' | tr '\n' ' ')" > /tmp/f$n.txt ) &
done <<LINES
mha 2,4,4,777,1025,256 bf16
vit 2,4,4,197,197,256 f16
causal 2,8,8,1531,1531,64 bf16
gqa_causal 1,32,8,1000,1000,128 bf16
swa 1,8,8,3000,3000,128 bf16
gpt_oss 2,64,8,1000,1000,64 bf16
mha 3,8,8,555,555,96 bf16
streaming 2,8,8,1000,1000,256 bf16
streaming 1,8,8,777,777,64 f16
streaming 2,8,8,1000,1000,128 bf16 --backward --dq-atomics=false
streaming 1,8,8,777,777,256 bf16 --backward
LINES
wait
cat /tmp/f*.txt >> $S
echo "done (${SECONDS}s)" >> $S
cat $S
