#!/usr/bin/env bash
# carry ["bundle"] (this tree: the D kernel zeroes the wgmma backward's f32
# dQ accumulator, one launch fewer). Checks of the backward against
# float64 (fa-run --check, every gradient path: dQ by reduce-adds at D 64,
# 96 and 128, sinks, windows, sink tokens, GQA, f16), the new torch test
# and the backward tests, memcheck and racecheck of one backward, the
# queued profile (the D kernel's time with the zeros), then the dense bars.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S || exit 1
device_python $OUT/py.log || exit 1
export FA_CACHE_DIR=/tmp/fc
device_check_lines <<'LINES'
kernels_spec/causal.mlir --shape 1,8,8,1000,1000,64 --dtype bf16
kernels_spec/causal.mlir --shape 2,4,4,197,333,128 --dtype bf16
kernels_spec/causal.mlir --shape 1,4,4,1000,1000,96 --dtype bf16
kernels_spec/mha.mlir --shape 2,4,4,197,197,64 --dtype bf16
kernels_spec/gqa_causal.mlir --shape 2,16,4,1000,1000,128 --dtype bf16
kernels_spec/gpt_oss.mlir --shape 1,64,8,777,1031,64 --dtype bf16
kernels_spec/streaming.mlir --shape 1,8,8,1000,1000,64 --dtype bf16
kernels_spec/swa.mlir --shape 1,4,4,4100,4100,64 --dtype bf16
kernels_spec/causal.mlir --shape 1,8,2,1000,1000,128 --dtype f16
kernels_spec/causal.mlir --shape 1,8,8,1000,1000,64 --deterministic --dtype bf16
LINES
device_torch_tests 200 "row_dot_kernel_refuses or against_float64 or layout_the_tensor_cores"
device_sanitize causal 1,4,2,1000,1000,64 --backward
PYTHONPATH=$PY_DIR timeout 200 python3 bench/fifty-fifth/queued_profile.py \
  --shapes "causal:4,16,4096,128;full:4,16,4096,128" 2>&1 | grep -v -i warn >> $S
PYTHONPATH=$PY_DIR device_bench dense 150 --variants causal,gqa-causal,full --seqs 4096 --head-dims 64,128 \
  --impls fa,sdpa-cudnn --reps 20
python3 bench/bars.py $OUT/bench-dense.csv >> $S 2>&1
echo "done (${SECONDS}s)" >> $S
cat $S
