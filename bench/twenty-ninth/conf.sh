#!/usr/bin/env bash
# The twenty-ninth session's last call (H200), on the build of a04cbad
# (three consumers at D 80, the producer's 32 registers at D 80, 96 and
# 192): the GPU conformance grid (run.py --variants; head dims 16, 64, 96
# and 128 by the grid's rotation, so D 96 takes two consumers of 232 with
# a producer of 32) of full, causal, window16_sink4 and gpt_oss_like,
# f32/f64 on the scalar kernels and bf16/f16 on the tensor-core kernels,
# forward and backward against float64. carry ["bundle"].
FA_GPU_STAGES=none scripts/gpu-run.sh /tmp/g0 > /dev/null 2>&1
FA=/tmp/fa-bundle
export LD_LIBRARY_PATH=$FA/lib
timeout 300 python3 test/conformance/run.py $FA/bin/fa-run kernels_spec /tmp/fa-conf \
  --target gpu --jobs 16 --variants full,causal,window16_sink4,gpt_oss_like \
  > $OUT/conformance.log 2>&1
echo "exit $?"
tail -n 9 $OUT/conformance.log
gzip -f $OUT/conformance.log
