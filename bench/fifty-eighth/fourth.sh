#!/usr/bin/env bash
# Fourth device call of the fifty-eighth session. carry ["bundle"]: the
# bundle is ef81de6 with the auto schedule (D 80 without a causal mask on
# the serial schedule, 128 keys). float64 checks of D 80's full kernels
# (mha, GQA, Sq != Sk, ragged), memcheck/racecheck of mha D 80 at an odd
# shape, then bench_gpu.py's head-dim rows (D 80, 96, 128, 256 full and
# causal against SDPA) and the dense bars (causal, gqa-causal, full D 64 and
# 128 against sdpa-cudnn and flex).
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S || exit 1
device_forward_checks a <<'EOF2'
bf16 kernels_spec/mha.mlir --shape 2,8,8,1531,1531,80
bf16 kernels_spec/mha.mlir --shape 1,16,4,333,1025,80
f16 kernels_spec/mha.mlir --shape 1,8,8,2000,197,80
bf16 kernels_spec/gpt_oss.mlir --kernel gpt_oss_full --shape 1,64,8,777,777,80
bf16 kernels_spec/causal.mlir --shape 1,8,8,1000,1000,80
bf16 kernels_spec/mha.mlir --shape 2,8,8,1531,1531,64
EOF2
echo "checks done (${SECONDS}s)" >> $S
device_sanitize mha 1,4,4,1000,1000,80
device_sanitize mha 1,4,2,197,333,80
device_bench dims 150 --variants full,causal --seqs 4096 --head-dims 80,96,128,256 --impls fa,sdpa-cudnn,sdpa-flash2 --reps 20
device_bench dense 230 --variants causal,gqa-causal,full --seqs 4096 --head-dims 64,128 --impls fa,sdpa-cudnn,flex --reps 20
python3 bench/bars.py "$OUT"/bench-*.csv >> "$S" 2>&1
echo "done (${SECONDS}s)" >> $S
cat $S
