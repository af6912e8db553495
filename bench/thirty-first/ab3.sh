#!/usr/bin/env bash
# The thirty-first session's third call: (1) the staged-O build (the
# bundle, A) against the build before this session (B: HEAD's fa-run and
# runtime, bundle/old-overlay.tar.xz) on the cases the second call's limit
# cut; (2) the same A against two copies of Q at D 96 and 128 (B:
# bundle/twoq-overlay.tar.xz, kWgmmaTwoQCopiesMaxHeadDim 128). Forward
# TFLOP/s, fa-run --repeat 30, one round each (bench/twenty-third/ab.sh).
# carry ["bundle"].
S=$OUT/summary.txt; : > $S
AB_FLAGS= timeout 280 bash bench/twenty-third/ab.sh 1 bundle/old-overlay.tar.xz \
  "causal|4,32,32,4096,4096,64 mha|4,32,32,4096,4096,64 gqa_causal|2,32,8,4096,4096,128 swa|2,32,8,8192,8192,64 streaming|2,32,32,8192,8192,64 gpt_oss|2,64,8,8192,8192,64 causal|2,16,16,4096,4096,96 causal|2,8,8,8192,8192,256 causal|16,32,32,1024,1024,64" \
  > $OUT/ab-old.log 2>&1
echo "== staged (A) against before (B), ${SECONDS}s" >> $S; cat $OUT/ab-old.log >> $S
AB_FLAGS= timeout 250 bash bench/twenty-third/ab.sh 1 bundle/twoq-overlay.tar.xz \
  "causal|4,16,16,4096,4096,128 causal|16,16,16,1024,1024,128 mha|4,16,16,4096,4096,128 gqa_causal|2,32,8,4096,4096,128 causal|2,16,16,4096,4096,96 mha|4,16,16,4096,4096,96" \
  > $OUT/ab-twoq.log 2>&1
echo "== staged (A) against staged + two copies of Q at D 96-128 (B), ${SECONDS}s" >> $S; cat $OUT/ab-twoq.log >> $S
cat $S
