#!/usr/bin/env bash
# Second device call of the fifty-ninth session. carry ["bundle"]: the
# bars with bench_gpu.py --alternate again (does a second run give the
# first's ratios?), then at window-4096's bench shape (2 x 32 heads x 8k,
# D 64) fa-run's forward rates of swa, causal and mha (the shipped table),
# and ncu of the swa and causal forwards: where window 4096's forward goes.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S || exit 1
A="--alternate --rounds 4 --reps 10"
device_bench dense 170 --variants causal,gqa-causal,full --seqs 4096 --head-dims 64,128 --impls fa,sdpa-cudnn,flex $A
device_bench variants 130 --variants window-4096,window-1024+4-sinks,gpt-oss-full,gpt-oss-window-128 \
  --seqs 8192 --head-dims 64 --impls fa,flex $A
python3 bench/bars.py "$OUT"/bench-*.csv >> "$S" 2>&1
DEVICE_AUTOTUNE=table device_knobs 2 2,32,32,8192,8192 "swa 64" "causal 64" "mha 64"
device_ncu_forward ncu-swa _forward_wgmma swa 2,32,32,8192,8192,64
device_ncu_forward ncu-causal _forward_wgmma causal 2,32,32,8192,8192,64
echo "done (${SECONDS}s)" >> $S
cat $S
