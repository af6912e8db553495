#!/usr/bin/env bash
# carry ["bundle"] (the bundle of a29e172). The Python API's specs with the
# head counts fixed on the GPU (this tree's python/): 1. fa-run A/B of
# gpt-oss window 128's forward (2x64/8x8k), the spec with dynamic head
# counts as the API wrote it before against kernels_spec/gpt_oss.mlir's
# fixed 64 / 8, alternated; 2. w128_single.py through the new API (the
# shipped table); 3. python/tests/test_torch.py and test_nn.py on the GPU.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S || exit 1
device_python $OUT/py.log || exit 1
for r in 1 2; do
  for pair in bench/fifty-second/gpt_oss_dynamic_heads.mlir:attention kernels_spec/gpt_oss.mlir:gpt_oss_sliding; do
    spec=${pair%:*}
    echo "r$r $spec: $(FA_AUTOTUNE=0 FA_CACHE_DIR=/tmp/ch timeout 120 $R $spec --kernel ${pair#*:} \
      --target gpu --dtype bf16 --repeat 30 --shape 2,64,8,8192,8192,64 2>&1 | grep -oE 'fwd=[0-9.]+ms|fwd_tflops=[0-9.]+|rror.*' | tr '\n' ' ')" >> $S
  done
done
PYTHONPATH=$PY_DIR FA_CACHE_DIR=/tmp/cp timeout 120 python3 bench/fifty-second/w128_single.py 2>&1 | grep -v -i warn >> $S
( PYTHONPATH=$PY_DIR FA_CACHE_DIR=/tmp/fa-pycache timeout 330 python3 -m pytest -q -p no:cacheprovider \
    python/tests/test_torch.py python/tests/test_nn.py > $OUT/pytest.log 2>&1; echo "pytest rc=$?: $(tail -n 1 $OUT/pytest.log)" >> $S )
grep -E "^FAILED|Error" $OUT/pytest.log | head -20 >> $S
echo "done (${SECONDS}s)" >> $S
cat $S
