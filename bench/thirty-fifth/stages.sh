#!/usr/bin/env bash
# Issue 18, first device call of the thirty-fifth session. Carry ["bundle"]:
# a bundle of branch next/split-kv-stages (three K/V stages in the split-KV
# kernels on sm_90, up to 128 splits) and bundle/main-overlay.tar.xz
# (fa-run and libFARuntime.so.22.1 of main 14daefe, stripped).
# The branch first: fa-run checks of the split kernels against float64
# (contiguous and paged, D 64 and 128, B 4), then for each build where a
# short step's time goes (decode_parts.py), paged against contiguous
# (paged_bw.py) and bench_decode.py rows (CUDA-graph replay).
# Predicted for the branch: paged Llama D 128 from 0.72x contiguous toward
# 0.9x; contiguous rows within 5%; "shard 8/1" B 1 about 2x (64 -> 128 splits).
source bench/lib/device.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for build in branch main; do
  device_setup "$OUT/summary-$build.txt"
  [ $build = main ] && tar -xJf bundle/main-overlay.tar.xz -C "$FA"
  device_python "$OUT/build-$build.log" || exit 1
  echo "== $build (${SECONDS}s)"
  if [ $build = branch ]; then
    for c in "kernels_spec/gpt_oss_decode.mlir gpt_oss_decode_full 4,64,8,1,8192,64" \
             "kernels_spec/gpt_oss_decode.mlir gpt_oss_decode_paged 4,64,8,1,8192,64" \
             "bench/twenty-fifth/llama_decode.mlir llama_flat 4,32,8,1,4096,128" \
             "bench/twenty-fifth/llama_decode.mlir llama_paged 4,32,8,1,4096,128"; do
      set -- $c
      FA_AUTOTUNE=0 FA_CACHE_DIR=/tmp/fa-cache-check timeout 40 $R $1 --kernel $2 \
        --target gpu --dtype bf16 --check --shape $3 2>&1 | tail -1
    done
  fi
  export PYTHONPATH=$PY_DIR FA_CACHE_DIR=/tmp/fa-cache-$build
  timeout 50 python3 bench/thirty-fourth/decode_parts.py 2>&1 | tee "$OUT/parts-$build.log"
  timeout 50 python3 bench/nineteenth/paged_bw.py 2>&1 | tee "$OUT/paged-$build.log"
  timeout 80 python3 bench/bench_decode.py --models gpt-oss_full,Llama_32/8,shard_8/1 \
    --batches 1,8 --caches 32768,131072 --time-limit 65 \
    --csv "$OUT/decode-$build.csv" 2>&1 | tee "$OUT/decode-$build.log"
done
