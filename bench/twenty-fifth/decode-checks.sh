# Sourced by check2.sh: `lines` prints the FA_CHECKS lines
# (spec|shapes|flags) of the paged-decode change: the decode entries at
# split, packed, MHA-like and 16-row shapes, Llama 32/8 D 128 paged and
# contiguous, and the mma.sync forwards and backwards (1 and 2 K/V stages)
# whose cp.async copies changed too.
lines() {
  for shape in 3,64,8,1,3000,64 40,64,8,2,300,64 2,64,8,16,5000,64 1,64,8,1,33000,64; do
    echo "kernels_spec/gpt_oss_decode.mlir|$shape|--dtype bf16"
  done
  echo "kernels_spec/gpt_oss_decode.mlir|3,64,8,1,3000,64|--dtype f16"
  echo "bench/twenty-fifth/llama_decode.mlir|3,32,8,1,3000,128;20,32,8,4,700,128|--dtype bf16"
  for c in "causal|1,8,2,197,197,64;2,8,2,300,700,128" "gqa_causal|1,32,8,333,333,128" \
           "gpt_oss|1,64,8,197,197,64;1,64,8,700,300,64" "swa|1,8,2,3000,3000,64" \
           "streaming|1,8,8,2100,2100,128"; do
    echo "kernels_spec/${c%%|*}.mlir|${c#*|}|--dtype bf16 --mma-generation mma-sync"
    echo "kernels_spec/${c%%|*}.mlir|${c#*|}|--dtype bf16 --mma-generation mma-sync --mma-kv-stages 2"
  done
  echo "kernels_spec/causal.mlir|1,8,2,197,197,96;2,4,4,300,129,32|--dtype bf16 --mma-generation mma-sync"
  echo "kernels_spec/causal.mlir|2,8,2,300,700,128|--dtype f32"
}
