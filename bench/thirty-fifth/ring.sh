#!/usr/bin/env bash
# Issue 18, second device call: the paged split-KV kernels with their
# block-table entries in a shared ring (61c9d67 and after). Carry ["bundle"]:
# a bundle of this tree and bundle/main-overlay.tar.xz (fa-run and
# libFARuntime.so.22.1 of 14daefe). Correctness first (test_torch.py's
# decode tests on the GPU, fa-run checks against float64, memcheck and
# racecheck of the paged kernels), then paged against contiguous
# (paged_bw.py) for this build and 14daefe's, and bench_decode.py rows.
# Predicted: paged at 0.9x contiguous or better (0.47-0.55x at 14daefe on
# the H200); contiguous rows unchanged.
source bench/lib/device.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
device_setup "$OUT/summary.txt"
device_python "$OUT/build.log" || exit 1
export PYTHONPATH=$PY_DIR FA_CACHE_DIR=/tmp/fa-cache-ring
timeout 60 python3 bench/nineteenth/paged_bw.py 8,32768 1,131072 2>&1 | tee "$OUT/paged-ring.log"
timeout 200 python3 -m pytest -q -p no:cacheprovider python/tests/test_torch.py \
  -k "decode or paged or kvcache or append" > "$OUT/pytest.log" 2>&1
echo "pytest: $(tail -1 "$OUT/pytest.log") (${SECONDS}s)" | tee -a "$OUT/summary.txt"
for c in "kernels_spec/gpt_oss_decode.mlir gpt_oss_decode_paged 4,64,8,1,8192,64" \
         "kernels_spec/gpt_oss_decode.mlir gpt_oss_decode_append 4,64,8,1,8192,64" \
         "bench/twenty-fifth/llama_decode.mlir llama_paged 4,32,8,1,4096,128"; do
  set -- $c
  echo "$2 $3: $(FA_AUTOTUNE=0 FA_CACHE_DIR=/tmp/c-check timeout 60 $R $1 --kernel $2 \
    --target gpu --dtype bf16 --check --shape $3 2>&1 | tail -1)" | tee -a "$OUT/summary.txt"
done
for c in "kernels_spec/gpt_oss_decode.mlir gpt_oss_decode_paged 2,64,8,1,3000,64" \
         "bench/twenty-fifth/llama_decode.mlir llama_paged 2,32,8,1,3000,128"; do
  set -- $c
  for tool in memcheck racecheck; do
    FA_CACHE_DIR=/tmp/c-check FA_AUTOTUNE=0 timeout 90 compute-sanitizer --tool $tool --error-exitcode 9 \
      $R $1 --kernel $2 --target gpu --dtype bf16 --check --shape $3 > /tmp/san.log 2>&1
    echo "$2 $3 $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.log | tr '\n' ' ')" | tee -a "$OUT/summary.txt"
  done
done
timeout 80 python3 bench/bench_decode.py --models gpt-oss_full,Llama_32/8 \
  --batches 1,8 --caches 32768,131072 --time-limit 65 \
  --csv "$OUT/decode-ring.csv" 2>&1 | tee "$OUT/decode-ring.log"
tar -xJf bundle/main-overlay.tar.xz -C "$FA"
device_python "$OUT/build-main.log" || exit 1
export FA_CACHE_DIR=/tmp/fa-cache-main
timeout 60 python3 bench/nineteenth/paged_bw.py 8,32768 1,131072 2>&1 | tee "$OUT/paged-main.log"
echo "done (${SECONDS}s)"
