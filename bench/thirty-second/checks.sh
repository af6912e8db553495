#!/usr/bin/env bash
# The thirty-second session's first call: the GPU conformance grid (every
# variant, bf16 and f16 with the backward) at the head dims past 64 and 128,
# run three at a time, then memcheck and racecheck of every attention
# spec's forward at an odd shape (the staged-O head dims 96-192 among them).
# carry ["bundle"].
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
ALL=full,causal,window1,window16,window_wide,window16_sink1,window16_sink4,window16_sink20,full_sinks,causal_sinks,gpt_oss_like,causal_scale
for dims in 32,80 96,192 256,128; do
  ( timeout 330 python3 test/conformance/run.py "$R" kernels_spec /tmp/conf-$dims --target gpu --jobs 5 \
      --variants $ALL --gpu-head-dims $dims > $OUT/conformance-${dims/,/-}.log 2>&1
    echo "conformance dims $dims rc=$? $(grep -E '^[0-9]+ cases|worst' $OUT/conformance-${dims/,/-}.log | tr '\n' ' ') (${SECONDS}s)" >> $S ) &
done
wait
grep -h "FAILED" $OUT/conformance-*.log | head -10 >> $S
for c in "causal 1,4,4,197,197,128" "gqa_causal 1,32,8,197,197,96" "mha 1,4,4,197,333,192" \
         "streaming 1,4,4,1100,1100,128" "swa 1,4,2,1000,1000,80" "gpt_oss 1,64,8,300,300,64" \
         "gpt_oss_packed 3,64,8,197,197,64" "vit 2,12,12,197,197,64" "mha 1,2,2,333,197,256" "causal 1,4,4,197,197,32"; do
  [ $SECONDS -gt 540 ] && { echo "sanitize skipped: $c (time)" >> $S; continue; }
  device_sanitize $c
done
echo "done ${SECONDS}s" >> $S
cat $S
