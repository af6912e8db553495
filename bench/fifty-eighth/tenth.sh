#!/usr/bin/env bash
# Tenth device call of the fifty-eighth session. carry ["bundle"]: the
# eighth call's bundle, and the overlay p: ec446cc with
# exp2-poly.diff (a share of the softmax's exponentials as a cubic on the
# FMA pipe, every FA_EXP2_POLY-th n-tile of 8 keys; 0: none). Float64
# checks at 2, then fa-run 4x16x4k, two rounds, at 0 and 2 (a first try
# with more rows ran out: the machine was taken back mid-call).
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S p bundle/p-overlay.tar.xz || exit 1
D=/tmp/fa-p
for k in 2; do
  for c in "mha --shape 2,8,8,1531,1531,80" "causal --shape 1,8,8,1000,1000,64" \
           "gpt_oss --kernel gpt_oss_full --shape 1,64,8,777,777,64" "mha --shape 1,4,4,333,1025,96"; do
    set -- $c
    echo "check poly$k $c: $(FA_EXP2_POLY=$k FA_CACHE_DIR=/tmp/c-chk$k FA_AUTOTUNE=0 LD_LIBRARY_PATH=$D/lib \
      timeout 120 $D/bin/fa-run kernels_spec/$1.mlir "${@:2}" --target gpu --dtype bf16 --check 2>&1 | tail -1)" >> $S
  done
done
for k in 0 2; do
  for c in "mha 80" "causal 80" "mha 64" "mha 128"; do
    set -- $c
    FA_EXP2_POLY=$k FA_CACHE_DIR=/tmp/c-p$k FA_AUTOTUNE=0 LD_LIBRARY_PATH=$D/lib timeout 200 $D/bin/fa-run \
      kernels_spec/$1.mlir --target gpu --dtype bf16 --shape 4,16,16,4096,4096,$2 > /dev/null 2>&1 &
  done
done
wait
echo "compiled (${SECONDS}s)" >> $S
for round in 1 2; do
  for c in "mha 80" "causal 80" "mha 64" "mha 128"; do
    for k in 0 2; do
      set -- $c
      echo "$c poly$k $(FA_EXP2_POLY=$k FA_CACHE_DIR=/tmp/c-p$k FA_AUTOTUNE=0 LD_LIBRARY_PATH=$D/lib timeout 100 $D/bin/fa-run \
        kernels_spec/$1.mlir --target gpu --dtype bf16 --repeat 30 --shape 4,16,16,4096,4096,$2 2>&1 | grep -oE 'fwd_tflops=[0-9.]+|error.*')" >> $S
    done
  done
done
echo "done (${SECONDS}s)" >> $S
cat $S
