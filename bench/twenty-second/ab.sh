#!/usr/bin/env bash
# A/B of two builds: the bundle (A) against the bundle with scratch/new.tar.xz
# over it (B), alternating fa-run processes, FA_AUTOTUNE=0, one cache each.
# Usage: scratch/ab.sh ROUNDS
A=/tmp/fa-a B=/tmp/fa-b
rm -rf $A $B && mkdir -p $A $B
tar -xJf bundle/fa-bundle.tar.xz -C $A && tar -xJf bundle/fa-bundle.tar.xz -C $B && tar -xJf scratch/new.tar.xz -C $B || exit 1
export FA_AUTOTUNE=0
cases="swa|1,32,8,8192,8192,128 causal|2,16,16,4096,4096,128 mha|2,16,16,4096,4096,128 gpt_oss|2,64,8,4096,4096,64 streaming|2,16,16,4096,4096,128"
for r in $(seq ${1:-2}); do
  for c in $cases; do
    for m in A B; do
      d=$A; [ $m = B ] && d=$B
      out=$(LD_LIBRARY_PATH=$d/lib FA_CACHE_DIR=/tmp/ab-cache-$m timeout 120 $d/bin/fa-run kernels_spec/${c%%|*}.mlir --target gpu --dtype bf16 --repeat 30 --backward --shape ${c#*|} 2>&1 | grep -oE 'fwd_tflops=[0-9.]+|bwd_tflops=[0-9.]+|error.*' | tr '\n' ' ')
      echo "r$r ${c%%|*} ${c#*|} $m $out"
    done
  done
done
