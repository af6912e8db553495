#!/usr/bin/env bash
# mma.sync backward with the sectioned dK/dV and dQ grids: checks against
# float64 (odd shapes, every masked variant, several head dims), memcheck
# and racecheck on three, then an A/B of its speed against the bundle.
OUT_BASE=$1
lines() {
  for c in "causal|1,8,2,197,197,64;2,8,2,300,700,128;1,4,4,1000,1000,128" \
           "gqa_causal|1,32,8,333,333,128;1,32,8,129,257,64" \
           "gpt_oss|1,64,8,197,197,64;1,64,8,700,300,64" \
           "mha|2,4,4,1000,777,128" "swa|1,8,2,3000,3000,64" \
           "streaming|1,8,8,2100,2100,128" "vit|2,12,12,197,197,64"; do
    echo "kernels_spec/${c%%|*}.mlir|${c#*|}|--dtype bf16 --mma-generation mma-sync"
  done
  for d in 32 80 96; do
    echo "kernels_spec/causal.mlir|1,8,2,197,197,$d;2,4,4,300,129,$d|--dtype bf16 --mma-generation mma-sync"
  done
  echo "kernels_spec/causal.mlir|2,8,2,300,700,128|--dtype f32"
  echo "kernels_spec/gpt_oss.mlir|1,64,8,197,300,64|--dtype f16 --mma-generation mma-sync"
}
mkdir -p $OUT_BASE/checks $OUT_BASE/memcheck $OUT_BASE/racecheck
export FA_BUNDLE_OVERLAY=scratch/ms.tar.xz FA_GPU_STAGES=checks
FA_CHECKS="$(lines)" timeout 200 scripts/gpu-run.sh $OUT_BASE/checks > /dev/null 2>&1
echo "checks: $(grep -c '^== ' $OUT_BASE/checks/checks.log) runs, $(grep -c FAILED $OUT_BASE/checks/checks.log) failed"
for tool in memcheck racecheck; do
  FA_CHECK_PREFIX="compute-sanitizer --tool $tool --error-exitcode 9" FA_CHECKS="$(lines | sed -n '1p;3p;5p')" \
    timeout 120 scripts/gpu-run.sh $OUT_BASE/$tool > /dev/null 2>&1
  echo "$tool: $(grep -c '^== ' $OUT_BASE/$tool/checks.log) runs, $(grep -cE 'ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards' $OUT_BASE/$tool/checks.log) clean"
done
unset FA_BUNDLE_OVERLAY FA_GPU_STAGES
timeout 170 bash bench/twenty-third/ab.sh 1 scratch/ms.tar.xz \
  "causal|2,16,16,4096,4096,128|--mma-generation=mma-sync gqa_causal|2,32,8,4096,4096,128|--mma-generation=mma-sync gpt_oss|2,64,8,4096,4096,64|--mma-generation=mma-sync"
rm -f $OUT_BASE/*/nvidia-smi.txt
