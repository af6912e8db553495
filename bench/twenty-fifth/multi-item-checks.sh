# Sourced by the device scripts of the twenty-fourth and twenty-fifth
# sessions: `lines` prints FA_CHECKS lines (spec|shapes|flags) whose grids
# have more query blocks than the H100 has SMs, so that the persistent
# wgmma forward's blocks take several items: every masked spec, D 32-256,
# bf16 and f16, forward and backward against float64.
lines() {
  for c in "causal|2,16,4,1000,1000,128;2,32,8,1000,1000,64" "gpt_oss|1,64,8,1000,1000,64" \
           "mha|2,16,16,777,1025,128" "swa|1,32,8,3000,3000,64" "streaming|1,16,16,2100,2100,128" \
           "gqa_causal|1,32,8,1333,1333,128"; do
    echo "kernels_spec/${c%%|*}.mlir|${c#*|}|--dtype bf16"
  done
  echo "kernels_spec/gpt_oss.mlir|1,64,8,1000,1000,64|--dtype f16"
  for d in 32 80 96 192 256; do
    echo "kernels_spec/causal.mlir|2,16,4,1000,1000,$d|--dtype bf16"
  done
}
