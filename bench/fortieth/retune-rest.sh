#!/usr/bin/env bash
# The shipped table's rows for full and causal attention at D 64 and GQA
# 32/8 (and 64/16) with a window of 2048 at D 64 and 128 made again on
# main's build (carry ["bundle"]), after retune-d128.sh's rows went into
# lib/Runtime/TunedConfigs.inc (its --update base): the backward rows of
# these classes date from the H100 on 2026-11-26 too, and this session's
# fa-run timings (H200) put the dK/dV kernel that adds dQ 3% behind the
# dQ kernel on causal 4x32x4k D 64 and 3% ahead on full.
S=$OUT/summary.txt
echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" > $S
FA_GPU_STAGES=tuning-table FA_BENCH_TIME_LIMIT=300 FA_BENCH_TIMEOUT=330 \
  FA_TUNING_ARGS="--cases full:64,causal:64,gqa-window-2048:128,gqa-window-2048:64 --update lib/Runtime/TunedConfigs.inc" \
  timeout 400 scripts/gpu-run.sh $OUT/t > $OUT/t.log 2>&1
echo "== tuning (${SECONDS}s)" >> $S
grep -E "tuned|failed|stopped|rows:|autotuning" $OUT/t/tuning-table.log | tail -60 >> $S
diff lib/Runtime/TunedConfigs.inc $OUT/t/TunedConfigs.inc >> $S
echo "done ${SECONDS}s" >> $S
cat $S
