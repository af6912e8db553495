#!/usr/bin/env bash
# carry ["bundle"] (this tree: the D kernel zeroes the dQ accumulator after
# its loads). Checks of the backward against float64, the torch test of
# o's refused layout (the zero kernel's path), then issue 13's and 14's
# bars (device_bars, with bench_gpu.py's steady-clock warm-up).
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S || exit 1
device_python $OUT/py.log || exit 1
export FA_CACHE_DIR=/tmp/fc
device_check_lines <<'LINES'
kernels_spec/causal.mlir --shape 2,4,4,197,333,128 --dtype bf16
kernels_spec/mha.mlir --shape 2,4,4,197,197,64 --dtype bf16
kernels_spec/gpt_oss.mlir --shape 1,64,8,777,1031,64 --dtype bf16
kernels_spec/causal.mlir --shape 1,8,2,1000,1000,96 --dtype f16
LINES
device_torch_tests 100 "row_dot_kernel_refuses or layout_the_tensor_cores"
PYTHONPATH=$PY_DIR device_bars 110 160
echo "done (${SECONDS}s)" >> $S
cat $S
