#!/usr/bin/env bash
# Lazy O rescale in the forward: correctness of the bundle's build (the
# hopper stage's wgmma checks, mma.sync checks, memcheck and racecheck on
# three), then a forward A/B against $1 (the previous build's overlay).
O=$OUT/lazy1; mkdir -p $O/hopper $O/ms $O/memcheck
FA_GPU_STAGES=hopper timeout 200 scripts/gpu-run.sh $O/hopper > $O/hopper.out 2>&1
echo "hopper rc=$? $(grep -c '^== ' $O/hopper/hopper-checks.log) runs, $(grep -c FAILED $O/hopper/hopper-checks.log) failed"
lines() {
  for c in "causal|1,8,2,197,197,64;1,4,4,1000,1000,128" "gpt_oss|1,64,8,700,300,64" \
           "swa|1,8,2,3000,3000,64" "streaming|1,8,8,2100,2100,128"; do
    echo "kernels_spec/${c%%|*}.mlir|${c#*|}|--dtype bf16 --mma-generation mma-sync"
  done
  echo "kernels_spec/gpt_oss.mlir|1,64,8,197,300,64|--dtype f16 --mma-generation mma-sync"
  echo "kernels_spec/gpt_oss.mlir|1,64,8,197,300,64;2,64,8,1000,1000,64|--dtype f16"
  echo "kernels_spec/causal.mlir|2,8,2,300,700,128|--dtype f32"
}
FA_GPU_STAGES=checks FA_CHECKS="$(lines)" timeout 150 scripts/gpu-run.sh $O/ms > /dev/null 2>&1
echo "checks: $(grep -c '^== ' $O/ms/checks.log) runs, $(grep -c FAILED $O/ms/checks.log) failed"
FA_CHECK_PREFIX="compute-sanitizer --tool memcheck --error-exitcode 9" FA_GPU_STAGES=checks \
  FA_CHECKS="$(lines | sed -n '2p;6p')" timeout 100 scripts/gpu-run.sh $O/memcheck > /dev/null 2>&1
echo "memcheck: $(grep -c '^== ' $O/memcheck/checks.log) runs, $(grep -c 'ERROR SUMMARY: 0 errors' $O/memcheck/checks.log) clean"
AB_FLAGS= timeout 260 bash bench/twenty-third/ab.sh 2 "$1" \
  "causal|2,16,16,4096,4096,128 mha|2,16,16,4096,4096,128 gqa_causal|2,32,8,4096,4096,128 causal|4,32,32,4096,4096,64 mha|4,32,32,4096,4096,64 gpt_oss|2,64,8,4096,4096,64"
rm -f $O/*/nvidia-smi.txt
cd $OUT && tar -czf lazy1.tgz lazy1 && rm -rf lazy1
