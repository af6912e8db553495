#!/usr/bin/env bash
# The thirty-second session's last call, on the final build: issue 13's
# forward bars beside the peers (bench_gpu.py, FA_AUTOTUNE=table: the
# shipped table, as users get it; bf16, B*S 16k): dense D 64/128 at S 4k
# against cuDNN and flex; the windowed and gpt-oss variants at D 64, S 8k,
# against flex; D 80, 96 and 256 against the SDPA backends. Then issue 16's
# cold compile, cache hit and the peers' first calls (bench_compile.py).
# carry ["bundle"].
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
device_bench dense 190 --variants causal,gqa-causal,full --seqs 4096 --head-dims 64,128 --impls fa,sdpa-cudnn,flex
device_bench variants 160 --variants window-4096,window-1024+4-sinks,gpt-oss-full,gpt-oss-window-128 --seqs 8192 --head-dims 64 --impls fa,flex
device_bench dims 80 --variants full,causal --seqs 4096 --head-dims 80,96,256 --impls fa,sdpa-cudnn,sdpa-flash2
FA_GPU_STAGES=compile FA_BENCH_TIME_LIMIT=70 FA_BENCH_TIMEOUT=90 timeout 100 scripts/gpu-run.sh /tmp/comp > /tmp/comp.out 2>&1
cp /tmp/comp/compile.csv /tmp/comp/compile.log $OUT/ 2>/dev/null
echo "== compile (${SECONDS}s)" >> $S; cat $OUT/compile.csv >> $S 2>/dev/null
cat $S
