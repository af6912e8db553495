#!/usr/bin/env bash
# Issue 18, third call: the split-KV forward's warps without rows skip the
# math (skip.diff; the second call measured it, its checks did not run),
# checked against float64 (fa-run --check of split-KV decode shapes with 1
# to 6 warps' packed rows, memcheck and racecheck, test_torch.py's decode
# and paged tests); and its K/V tiles in 2, 3 or 4 stages (stages.diff:
# FA_SPLIT_STAGES, an experiment knob). Carry ["bundle"]:
# bundle/n-overlay.tar.xz (main's fa-run and libFARuntime) and
# bundle/s-overlay.tar.xz (built from stages.diff, which holds skip.diff).
# (Main's build is n here; the logs, from the first form of this script,
# call it a.)
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S n bundle/n-overlay.tar.xz s bundle/s-overlay.tar.xz || exit 1
device_python $OUT/py.log || exit 1
G=kernels_spec/gpt_oss_decode.mlir
for e in 2 3; do
  for args in "kernels_spec/causal.mlir --shape 1,28,4,1,8191,128" \
              "kernels_spec/causal.mlir --shape 1,16,2,1,5000,256" \
              "kernels_spec/causal.mlir --shape 1,32,4,1,6000,64" \
              "kernels_spec/causal.mlir --shape 2,32,4,7,6000,64" \
              "$G --kernel gpt_oss_decode_full --shape 4,64,8,1,8192,64" \
              "$G --kernel gpt_oss_decode_full --shape 2,64,8,3,9000,64" \
              "$G --kernel gpt_oss_decode_sliding --shape 2,64,8,5,9000,64" \
              "$G --kernel gpt_oss_decode_paged --shape 2,64,8,2,9000,64"; do
    # shellcheck disable=SC2086 # the words are fa-run's arguments
    FA_SPLIT_STAGES=$e device_forward_check s bf16 $args &
  done
  wait
done
FA_SPLIT_STAGES=4 device_forward_check s bf16 kernels_spec/causal.mlir --shape 1,28,4,1,8191,128 &
FA_SPLIT_STAGES=4 device_forward_check s bf16 $G --kernel gpt_oss_decode_full --shape 2,64,8,3,9000,64 &
wait
device_on s device_sanitize causal 1,16,2,1,3000,128
device_on s device_sanitize gpt_oss_decode 1,64,8,3,3000,64 --kernel gpt_oss_decode_full
echo "checks done (${SECONDS}s)" >> $S
for r in 1 2; do
  for v in n s2 s3 s4; do
    stages=${v:1:1}
    FA_SPLIT_STAGES=${stages:-2} device_decode_rows "r$r $v" "${v:0:1}" "$OUT/decode-r$r-$v.csv" \
      --models gpt-oss_full,Llama_32/8 --batches 1,8 --caches 32768,131072
  done
done
PYTHONPATH=$PY_DIR LD_LIBRARY_PATH=/tmp/fa-s/lib FA_CACHE_DIR=/tmp/pc-s timeout $((560 - SECONDS)) python3 -m pytest -q -p no:cacheprovider \
  python/tests/test_torch.py -k "decode or paged or kvcache or append" > $OUT/pytest.log 2>&1
echo "pytest s (rc $?): $(tail -1 $OUT/pytest.log) (${SECONDS}s)" >> $S
echo "done (${SECONDS}s)" >> $S
cat $S
