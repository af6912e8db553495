#!/usr/bin/env bash
# Second device call of the fifty-eighth session. carry ["bundle"]: the
# bundle is HEAD 250516e (a: the uniform warp index), the overlay lu is a
# with bench/fifty-seventh/lazy-rescale.diff applied.
# Checks of lu against float64, memcheck/racecheck of lu, a/lu at D 64
# (mha, causal, gpt-oss full), D 96 mha and causal D 128 on the shipped
# table, alternated over three rounds; D 80's serial schedule with three
# consumers of 128/144 keys; ncu of the D 80 forward and the D 256 dK/dV.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S lu bundle/lu-overlay.tar.xz || exit 1
CHECKS=$(sed -n '/^bf16\|^f16/p' bench/fifty-eighth/first.sh)
device_forward_checks lu <<< "$CHECKS"
echo "checks done (${SECONDS}s)" >> $S
device_on lu device_sanitize causal 1,4,4,1000,1000,64
device_on lu device_sanitize gpt_oss 1,64,8,197,197,64 --kernel gpt_oss_full
DEVICE_AUTOTUNE=table device_build_compare 3 "a lu" mha:2,64,64,8192,8192,64 \
  causal:2,64,64,8192,8192,64 gpt_oss:2,64,8,8192,8192,64 \
  mha:4,16,16,4096,4096,96 causal:4,16,16,4096,4096,128
echo "compare done (${SECONDS}s)" >> $S
device_knobs 1 4,16,16,4096,4096 "mha 80" \
  "mha 80 --wgmma-schedule serial --wgmma-groups 3 --mma-block-n 128" \
  "mha 80 --wgmma-schedule serial --wgmma-groups 3 --mma-block-n 144" \
  "causal 80" "causal 80 --wgmma-schedule serial --wgmma-groups 3 --mma-block-n 128"
echo "knobs done (${SECONDS}s)" >> $S
device_ncu_forward ncu-mha-d80 mha_forward_wgmma_d80$ mha 4,16,16,4096,4096,80
device_ncu ncu-dkdv-d256 mha_backward_wgmma_dk_dv_d256$ mha 4,8,8,4096,4096,256
echo "done (${SECONDS}s)" >> $S
cat $S
