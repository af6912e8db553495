#!/bin/bash
# memcheck and racecheck on split-KV decode cases (run after a checks stage
# so that /tmp/fa-bundle is unpacked).
FA=/tmp/fa-bundle
export LD_LIBRARY_PATH=$FA/lib:$LD_LIBRARY_PATH
for tool in memcheck racecheck; do
  for c in "kernels_spec/causal.mlir 1,28,4,1,3000,128" "bench/eighteenth/sinks_full.mlir 1,64,8,2,2000,64" "kernels_spec/streaming.mlir 1,8,8,3,2100,128" "kernels_spec/causal.mlir 1,12,4,30,2000,64"; do
    set -- $c
    echo "== $tool $1 $2"
    FA_AUTOTUNE=0 timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $FA/bin/fa-run $1 --target gpu --check --shape $2 --dtype bf16 2>&1 | grep -E 'SUMMARY|o=|FAILED|rror' | head -5
  done
done
