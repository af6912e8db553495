#!/usr/bin/env bash
# Issue 18, fifth device call: the split-KV merge that loads every partial
# before it waits (4c13d88). Carry ["bundle"]: a bundle of this tree and
# bundle/prev-overlay.tar.xz (fa-run and libFARuntime.so.22.1 of 4709ee9).
# Correctness (test_torch.py's decode tests, fa-run checks of split decode
# shapes at D 64/128/256 against float64, memcheck and racecheck), then for
# each build where a short step's time goes (decode_parts.py) and
# bench_decode.py rows. Predicted: the merge from 5-8 us to about 2 us;
# gpt-oss B 1 32k from 49% of the copy's rate to about 58%.
source bench/lib/device.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for build in new prev; do
  device_setup "$OUT/summary-$build.txt"
  [ $build = prev ] && tar -xJf bundle/prev-overlay.tar.xz -C "$FA"
  device_python "$OUT/build-$build.log" || exit 1
  echo "== $build (${SECONDS}s)"
  export PYTHONPATH=$PY_DIR FA_CACHE_DIR=/tmp/fa-cache-merge-$build
  if [ $build = new ]; then
    timeout 200 python3 -m pytest -q -p no:cacheprovider python/tests/test_torch.py \
      -k "decode or paged or kvcache or append" > "$OUT/pytest.log" 2>&1
    echo "pytest: $(tail -1 "$OUT/pytest.log") (${SECONDS}s)"
    for shape in 1,28,4,1,8191,128 1,16,2,1,5000,256 1,32,4,1,6000,64; do
      echo "causal $shape: $(FA_AUTOTUNE=0 FA_CACHE_DIR=/tmp/c-check timeout 60 $R kernels_spec/causal.mlir \
        --target gpu --dtype bf16 --check --shape $shape 2>&1 | tail -1)"
    done
    echo "gpt_oss_decode_full: $(FA_AUTOTUNE=0 FA_CACHE_DIR=/tmp/c-check timeout 60 $R kernels_spec/gpt_oss_decode.mlir \
      --kernel gpt_oss_decode_full --target gpu --dtype bf16 --check --shape 4,64,8,1,8192,64 2>&1 | tail -1)"
    for tool in memcheck racecheck; do
      FA_CACHE_DIR=/tmp/c-check FA_AUTOTUNE=0 timeout 90 compute-sanitizer --tool $tool --error-exitcode 9 \
        $R kernels_spec/causal.mlir --target gpu --dtype bf16 --check --shape 1,16,2,1,3000,128 > /tmp/san.log 2>&1
      echo "causal 1,16,2,1,3000,128 $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.log | tr '\n' ' ')"
    done
  fi
  timeout 50 python3 bench/thirty-fourth/decode_parts.py 2>&1 | grep -v Warn | tee "$OUT/parts-$build.log"
  timeout 80 python3 bench/bench_decode.py --models gpt-oss_full,Llama_32/8 \
    --batches 1,8 --caches 32768,131072 --time-limit 65 \
    --csv "$OUT/decode-$build.csv" 2>&1 | tee "$OUT/decode-$build.log"
done
