#!/usr/bin/env bash
# Issue 18, second call (the first, decode.sh, spent its 10 minutes in
# fa-run's float64 checks of Llama's 32k-key shapes): the split-KV count
# sized to one wave (b3a0c0d) against 94d0466's, through fa.decode.
# Carry ["bundle"] (this build) with bundle/old-overlay.tar.xz.
# 1. test_torch.py's split-KV and ragged-length decode tests (new build);
# 2. bench_decode.py rows (gpt-oss full and Llama 32/8, B 1 and 8, 32k and
#    128k keys) with the new build, then with the old overlay.
T=python/tests/test_torch.py
FA_GPU_STAGES=pytest FA_PYTEST_TIMEOUT=120 \
  FA_PYTEST_ARGS="-q -rf $T -k decode_shapes_split_the_keys" \
  timeout 135 scripts/gpu-run.sh "$OUT/tests" > "$OUT/tests.log" 2>&1
grep -E "passed|failed|^FAILED|^E " "$OUT/tests/pytest.log" | head -20
ARGS='--models gpt-oss_full,Llama_32/8 --batches 1,8 --caches 32768,131072'
for build in new old; do
  overlay=; [ $build = old ] && overlay=bundle/old-overlay.tar.xz
  FA_BUNDLE_OVERLAY=$overlay FA_GPU_STAGES=decode FA_DECODE_ARGS="$ARGS" \
    FA_BENCH_TIME_LIMIT=70 timeout 135 scripts/gpu-run.sh "$OUT/decode-$build" \
    > "$OUT/decode-$build.log" 2>&1
  echo "== $build"; grep -E "GB/s|copy|limit|rror" "$OUT/decode-$build/decode.log"
done
