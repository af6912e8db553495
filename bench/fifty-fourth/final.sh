#!/usr/bin/env bash
# carry ["bundle"] (the bundle of this tree: 32-key tiles in D 64 window
# 128's forward rows, split-KV kernels at 64 keys or more). The shipped
# table's window-128 forward timed, checks against float64 of gpt_oss
# (forward and backward) and of gpt_oss_decode's sliding and full kernels
# on the table's configs, then bench_gpu.py's gpt-oss-window-128 row
# beside flex.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S || exit 1
run() {
  FA_CACHE_DIR=/tmp/ct-$1 FA_AUTOTUNE=table timeout 150 "$R" "${@:2}" \
    --target gpu --dtype bf16 2>&1 | tail -2
}
echo "== table, timed" >> $S
run t kernels_spec/gpt_oss.mlir --kernel gpt_oss_sliding --shape 2,64,8,8192,8192,64 --repeat 30 >> $S
echo "== checks" >> $S
run a kernels_spec/gpt_oss.mlir --backward --check --shape "1,64,8,777,1031,64;2,64,8,1000,1000,64" > /tmp/c1 &
run b kernels_spec/gpt_oss_decode.mlir --kernel gpt_oss_decode_sliding --shape 3,64,8,1,20000,64 --check > /tmp/c2 &
run c kernels_spec/gpt_oss_decode.mlir --kernel gpt_oss_decode_full --shape 1,64,8,1,20000,64 --check > /tmp/c3 &
wait
cat /tmp/c1 /tmp/c2 /tmp/c3 >> $S
device_bench w128 110 --variants gpt-oss-window-128 --seqs 8192 --head-dims 64 --impls fa,flex --reps 20
echo "done (${SECONDS}s)" >> $S
cat $S
