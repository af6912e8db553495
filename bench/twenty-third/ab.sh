#!/usr/bin/env bash
# A/B of two builds on one GPU machine: the bundle (A) against the bundle
# with the overlay $2 (a .tar.xz of bin/fa-run and lib/, B; "-" for none)
# unpacked over it (A too gets $AB_OVERLAY_A over it, when set), alternating
# fa-run processes (FA_AUTOTUNE=0, one kernel cache each),
# forward and backward TFLOP/s. Usage: ab.sh ROUNDS OVERLAY [CASES], CASES
# "spec|B,Hq,Hkv,Sq,Sk,D[|fa-run flags] ..." (default below). AB_FLAGS
# (default --backward) go to every run: AB_FLAGS= times the forward alone.
A=/tmp/fa-a B=/tmp/fa-b
rm -rf $A $B && mkdir -p $A $B
tar -xJf bundle/fa-bundle.tar.xz -C $A && tar -xJf bundle/fa-bundle.tar.xz -C $B &&
  { [ "$2" = - ] || tar -xJf "$2" -C $B; } || exit 1
if [ -n "${AB_OVERLAY_A:-}" ]; then tar -xJf "$AB_OVERLAY_A" -C $A || exit 1; fi
export FA_AUTOTUNE=0
cases=${3:-"causal|2,16,16,4096,4096,128 mha|2,16,16,4096,4096,128 gqa_causal|2,32,8,4096,4096,128 swa|1,32,8,8192,8192,128 causal|4,32,32,4096,4096,64 gpt_oss|2,64,8,4096,4096,64"}
for r in $(seq "${1:-2}"); do
  for c in $cases; do
    IFS='|' read -r spec shape flags <<< "$c"
    for m in A B; do
      d=$A; [ $m = B ] && d=$B
      out=$(LD_LIBRARY_PATH=$d/lib FA_CACHE_DIR=/tmp/ab-cache-$m timeout 120 \
        $d/bin/fa-run kernels_spec/$spec.mlir --target gpu --dtype bf16 \
        --repeat 30 ${AB_FLAGS---backward} $flags --shape $shape 2>&1 |
        grep -oE 'fwd_tflops=[0-9.]+|bwd_tflops=[0-9.]+|error.*' | tr '\n' ' ')
      echo "r$r $spec $shape $flags $m $out"
    done
  done
done
