#!/usr/bin/env bash
# The twenty-eighth session's fourth call (H200): the GPU conformance grid of
# the variants with sink tokens or learnable sinks (run.py --variants), the
# narrow sink tile's cases among them (1, 4 and 20 sink tokens), f32/f64
# on the scalar kernels and bf16/f16 on the tensor-core kernels, forward
# and backward against float64. Run from the device tool with carry
# ["bundle"] (the third call's bundle: its experiment switch is off here).
FA_GPU_STAGES=none scripts/gpu-run.sh /tmp/g0 > /dev/null 2>&1
FA=/tmp/fa-bundle
export LD_LIBRARY_PATH=$FA/lib
timeout 540 python3 test/conformance/run.py $FA/bin/fa-run kernels_spec /tmp/fa-conf \
  --target gpu --jobs 16 \
  --variants window16_sink1,window16_sink4,window16_sink20,gpt_oss_like,full_sinks,causal_sinks \
  > $OUT/conformance-sinks.log 2>&1
echo "exit $?"
tail -n 9 $OUT/conformance-sinks.log
gzip -f $OUT/conformance-sinks.log
